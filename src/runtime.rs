//! The one private tokio runtime of the process (current_thread, on one named thread, started on
//! first use) and the shared `reqwest::Client`.
//!
//! Not napi's `tokio_rt`: that starts a worker per CPU at load time; one thread is plenty for a
//! refresh every few seconds per sentinel.

use std::sync::OnceLock;

use reqwest::redirect::Policy;
use tokio::runtime::{Builder, Handle};

use crate::authority::dns::AsyncResolver;

/// Starts the runtime thread on first use and returns a handle to spawn on it.
pub fn handle() -> &'static Handle {
    static HANDLE: OnceLock<Handle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let runtime = Builder::new_current_thread()
            .enable_time()
            .enable_io()
            .build()
            .expect("spend-sentinel: cannot build the tokio runtime");
        let handle = runtime.handle().clone();
        std::thread::Builder::new()
            .name("spend-sentinel".into())
            // The thread parks in `block_on` forever; at process exit it simply stops.
            .spawn(move || runtime.block_on(std::future::pending::<()>()))
            .expect("spend-sentinel: cannot start the runtime thread");
        handle
    })
}

/// Redirects are never followed: a 3xx from the authority proves nothing. Names are
/// resolved on this runtime, so a refresh's timeout bounds its DNS lookup too.
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
