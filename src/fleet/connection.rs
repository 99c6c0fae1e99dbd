//! One fleet sentinel's connection to Redis: made on first use, every call bounded by
//! [`CALL_TIMEOUT`] in all (connecting, one reconnect, redirects included), failures sorted into
//! an [`ErrorKind`].
//!
//! - A server that closes idle connections (`timeout` > 0) costs a reconnect, not an error: a
//!   call that finds its reused connection closed is sent once more on a new one.
//! - Redis Cluster: the fleet is one key, so one slot. A `MOVED` answer names the node that owns
//!   it, which then serves every later call; an `ASK` answer (a slot being migrated) sends that
//!   one call to the named node, after `ASKING`.
//! - Errors are never shown, only their kind: their text can carry the URL and its password.

use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::{
    AsyncConnectionConfig, Client, ClientTlsConfig, ConnectionAddr, IntoConnectionInfo, RedisError,
    ScriptInvocation, TlsCertificates,
};

use crate::authority::dns::AsyncResolver;
use crate::config::FleetConfig;
use crate::options::{error, ConfigError};
use crate::rules::fleet::ErrorKind;

/// Every Redis call gives up after this, connecting and redirects included: a dead or paused
/// server must not hold the task (measured: a plain call blocked 9.2 s in reconnect backoff).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(1);

/// Tries within one call: a reconnect after an idle close, a MOVED, an ASK, the call itself.
const MAX_TRIES: usize = 4;

/// The client for `budget.fleet`'s URL and TLS settings. Its errors never show the URL, the
/// password or the key.
pub fn open_client(config: &FleetConfig) -> Result<Client, ConfigError> {
    let refused = || {
        error(
            "budget.fleet.redis",
            "is not a URL the Redis client accepts (redis://[user:password@]host[:port][/db])",
        )
    };
    let info = config
        .redis_url
        .expose()
        .as_str()
        .into_connection_info()
        .map_err(|_| refused())?;
    // No `CLIENT SETINFO` on connect: one command fewer for an ACL rule to allow.
    let settings = info.redis_settings().clone().set_skip_set_lib_name();
    let info = info.set_redis_settings(settings);
    let Some(tls) = &config.tls else {
        return Client::open(info).map_err(|_| refused());
    };
    let certificates = TlsCertificates {
        client_tls: tls.client.as_ref().map(|client| ClientTlsConfig {
            client_cert: client.cert.clone().into_bytes(),
            client_key: client.key.expose().clone().into_bytes(),
        }),
        root_cert: tls.ca.clone().map(String::into_bytes),
    };
    Client::build_with_tls(info, certificates).map_err(|_| {
        error(
            "budget.fleet.tls",
            "the certificates or the key cannot be used by the TLS client",
        )
    })
}

pub struct RedisLink {
    /// The server the URL names.
    configured: Client,
    /// The node that owns the fleet's slot, learned from a `MOVED` answer.
    redirected: Option<Client>,
    connection: Option<MultiplexedConnection>,
}

impl RedisLink {
    pub fn new(configured: Client) -> Self {
        RedisLink {
            configured,
            redirected: None,
            connection: None,
        }
    }

    /// Runs a script; its answer's fields.
    pub async fn invoke(
        &mut self,
        invocation: &ScriptInvocation<'_>,
    ) -> Result<Vec<String>, ErrorKind> {
        tokio::time::timeout(CALL_TIMEOUT, self.invoke_unbounded(invocation))
            .await
            .unwrap_or(Err(ErrorKind::Timeout))
    }

    /// `WAIT replicas timeout`: how many replicas acknowledged this connection's writes, within
    /// `bound` (Redis's own timeout is a little shorter, so its answer comes back in time).
    pub async fn wait(&mut self, replicas: u64, bound: Duration) -> Result<u64, ErrorKind> {
        let server_ms = bound
            .saturating_sub(Duration::from_millis(50))
            .as_millis()
            .max(1);
        let call = async {
            let mut connection = self.connection.clone().ok_or(ErrorKind::Connect)?;
            redis::cmd("WAIT")
                .arg(replicas)
                .arg(u64::try_from(server_ms).unwrap_or(u64::MAX))
                .query_async::<u64>(&mut connection)
                .await
                .map_err(|error| self.failed(&error))
        };
        tokio::time::timeout(bound, call)
            .await
            .unwrap_or(Err(ErrorKind::Timeout))
    }

    async fn invoke_unbounded(
        &mut self,
        invocation: &ScriptInvocation<'_>,
    ) -> Result<Vec<String>, ErrorKind> {
        let mut may_reconnect = self.connection.is_some();
        let mut ask: Option<Client> = None;
        for _ in 0..MAX_TRIES {
            let asking = ask.take();
            let mut connection = match &asking {
                Some(target) => {
                    let mut connection = connect(target).await?;
                    redis::cmd("ASKING")
                        .query_async::<()>(&mut connection)
                        .await
                        .map_err(|error| classify(&error))?;
                    connection
                }
                None => self.connection().await?,
            };
            let error = match invocation.invoke_async(&mut connection).await {
                Ok(fields) => return Ok(fields),
                Err(error) => error,
            };
            if let Some((address, _slot)) = error.redirect_node() {
                let target = self.client_at(address)?;
                if error.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::Moved) {
                    self.redirected = Some(target);
                    self.connection = None;
                } else {
                    ask = Some(target);
                }
                continue;
            }
            if asking.is_none() && is_broken(&error) {
                self.connection = None;
                if may_reconnect {
                    // Most likely the server closed an idle connection: one more try on a new
                    // one. A script that ran before the break and runs again changes nothing
                    // (renewals carry a sequence number; settling is idempotent).
                    may_reconnect = false;
                    continue;
                }
            }
            return Err(self.failed(&error));
        }
        Err(ErrorKind::Response)
    }

    /// The connection to the node serving the fleet, made when there is none.
    async fn connection(&mut self) -> Result<MultiplexedConnection, ErrorKind> {
        if let Some(connection) = &self.connection {
            return Ok(connection.clone());
        }
        let client = self.redirected.as_ref().unwrap_or(&self.configured);
        let connection = connect(client).await?;
        self.connection = Some(connection.clone());
        Ok(connection)
    }

    /// The kind of a failed call; a connection that may be broken is dropped.
    fn failed(&mut self, error: &RedisError) -> ErrorKind {
        if is_broken(error) {
            self.connection = None;
        }
        classify(error)
    }

    /// A client for `address` ("host:port", from a redirect), with the configured credentials,
    /// database and TLS settings.
    fn client_at(&self, address: &str) -> Result<Client, ErrorKind> {
        let (host, port) = address
            .rsplit_once(':')
            .and_then(|(host, port)| Some((host.trim_matches(['[', ']']), port.parse().ok()?)))
            .ok_or(ErrorKind::Response)?;
        let info = self.configured.get_connection_info().clone();
        let addr = match info.addr() {
            ConnectionAddr::TcpTls {
                insecure,
                tls_params,
                ..
            } => ConnectionAddr::TcpTls {
                host: host.to_owned(),
                port,
                insecure: *insecure,
                tls_params: tls_params.clone(),
            },
            _ => ConnectionAddr::Tcp(host.to_owned(), port),
        };
        Client::open(info.set_addr(addr)).map_err(|_| ErrorKind::Response)
    }
}

async fn connect(client: &Client) -> Result<MultiplexedConnection, ErrorKind> {
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(CALL_TIMEOUT))
        .set_response_timeout(Some(CALL_TIMEOUT))
        .set_dns_resolver((*AsyncResolver::system()).clone());
    client
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .map_err(|error| classify(&error))
}

/// Whether the connection that gave `error` can no longer be used.
fn is_broken(error: &RedisError) -> bool {
    error.is_io_error()
        || error.is_connection_dropped()
        || error.is_connection_refusal()
        || error.is_timeout()
}

/// The kind of a failure. The text is read to tell the kinds apart, never kept or shown.
fn classify(error: &RedisError) -> ErrorKind {
    let text = error.to_string();
    let code = error.code().unwrap_or("");
    if error.kind() == redis::ErrorKind::AuthenticationFailed
        || matches!(code, "WRONGPASS" | "NOAUTH")
        || text.contains("WRONGPASS")
        || text.contains("NOAUTH")
    {
        ErrorKind::Auth
    } else if error.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoPerm)
        || text.contains("NOPERM")
        // A command a script calls that the ACL user may not run.
        || text.contains("can't run this command")
    {
        ErrorKind::NoPerm
    } else if error.is_timeout() {
        ErrorKind::Timeout
    } else if error.is_io_error() || error.is_connection_dropped() || error.is_connection_refusal()
    {
        // rustls's failures: an unknown CA ("invalid peer certificate: UnknownIssuer") fails the
        // handshake; a server that wants a client certificate says so in an alert on the first
        // read ("received fatal alert: CertificateRequired").
        let text = text.to_ascii_lowercase();
        let tls = ["certificate", "tls", "handshake", "alert"];
        if tls.iter().any(|word| text.contains(word)) {
            ErrorKind::Tls
        } else {
            ErrorKind::Connect
        }
    } else {
        ErrorKind::Response
    }
}
