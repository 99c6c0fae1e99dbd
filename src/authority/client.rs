//! The HTTP adapter's `reqwest::Client`: one shared by every sentinel that needs no extra root
//! certificates, and the builder a `caPem` client starts from.

use std::sync::OnceLock;

use reqwest::redirect::Policy;

use super::dns::AsyncResolver;

/// Redirects are never followed: a 3xx from the authority proves nothing. Names are resolved
/// on the addon's runtime (the clients are only used there), so a refresh's timeout bounds its
/// DNS lookup too.
pub fn client_builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .redirect(Policy::none())
        .dns_resolver(AsyncResolver::system())
        .use_rustls_tls()
        .user_agent(concat!("spend-sentinel/", env!("CARGO_PKG_VERSION")))
}

/// The client shared by every sentinel that needs no extra root certificates.
pub fn shared_client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        client_builder()
            .build()
            .expect("spend-sentinel: cannot build the HTTP client")
    })
}
