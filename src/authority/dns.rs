//! Name resolution for the HTTP authority: hickory's stub resolver, polled on the addon's runtime.
//!
//! reqwest's default resolver runs getaddrinfo on tokio's blocking pool. That call cannot be
//! cancelled: when `refresh.timeoutMs` drops a refresh, the lookup keeps its thread until libc
//! gives up (about 10 s against an unanswering nameserver), so refreshes that time out every
//! few seconds pile up blocking threads. Here a lookup is a plain future, sockets included:
//! dropping the refresh drops the lookup, and no thread is involved.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, OnceLock};

use hickory_resolver::config::{LookupIpStrategy, NameServerConfig, ResolverConfig};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::{ResolverBuilder, TokioResolver};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// A `reqwest` (and `redis`) resolver. Hickory's provider spawns its few background tasks (one per nameserver
/// connection) on the tokio runtime current at the lookup: ours, since the clients that hold this
/// resolver are only used from inside it.
#[derive(Clone)]
pub struct AsyncResolver(TokioResolver);

impl AsyncResolver {
    /// The process-wide resolver, shared by every client so they share one answer cache.
    /// `/etc/resolv.conf` and `/etc/hosts` are read once, on first use.
    pub fn system() -> Arc<AsyncResolver> {
        static SYSTEM: OnceLock<Arc<AsyncResolver>> = OnceLock::new();
        SYSTEM
            .get_or_init(|| {
                Arc::new(match TokioResolver::builder_tokio() {
                    Ok(builder) => Self::build(builder),
                    // resolv.conf is missing, unreadable or names no nameserver: do what glibc
                    // does then and ask a nameserver on this machine. /etc/hosts is still read.
                    Err(_) => Self::with_config(ResolverConfig::from_name_servers(vec![
                        NameServerConfig::udp_and_tcp(IpAddr::V4(Ipv4Addr::LOCALHOST)),
                    ])),
                })
            })
            .clone()
    }

    /// A resolver with the given nameservers and search list (and hickory's default options).
    pub fn with_config(config: ResolverConfig) -> AsyncResolver {
        Self::build(TokioResolver::builder_with_config(
            config,
            TokioRuntimeProvider::default(),
        ))
    }

    fn build(mut builder: ResolverBuilder<TokioRuntimeProvider>) -> AsyncResolver {
        // A and AAAA are asked in parallel and IPv4 answers come first, as reqwest's own hickory
        // integration does; the connector then races the address families (happy eyeballs).
        builder.options_mut().ip_strategy = LookupIpStrategy::Ipv4AndIpv6;
        // Only DNS-over-TLS/HTTPS setups can fail to build, and those features are off.
        AsyncResolver(
            builder
                .build()
                .expect("spend-sentinel: cannot build the DNS resolver"),
        )
    }
}

impl Resolve for AsyncResolver {
    fn resolve(&self, name: Name) -> Resolving {
        // Cheap: the resolver is a handful of `Arc`s, and the future must own what it uses.
        let resolver = self.0.clone();
        Box::pin(async move {
            let lookup = resolver.lookup_ip(name.as_str()).await?;
            // The port is a placeholder: the connector puts the URL's port in.
            let addrs: Addrs = Box::new(lookup.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

/// The fleet's Redis connections resolve names the same way: a connect that times out drops its
/// lookup with it.
impl redis::io::AsyncDNSResolver for AsyncResolver {
    fn resolve<'a, 'b: 'a>(
        &'a self,
        host: &'b str,
        port: u16,
    ) -> redis::RedisFuture<'a, Box<dyn Iterator<Item = SocketAddr> + Send + 'a>> {
        let resolver = self.0.clone();
        Box::pin(async move {
            let lookup = resolver
                .lookup_ip(host)
                .await
                .map_err(|e| redis::RedisError::from(std::io::Error::other(e)))?;
            let addrs: Vec<SocketAddr> = lookup
                .into_iter()
                .map(|ip| SocketAddr::new(ip, port))
                .collect();
            let addrs: Box<dyn Iterator<Item = SocketAddr> + Send + 'a> =
                Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests;
