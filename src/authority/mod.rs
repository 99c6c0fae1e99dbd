//! One refresh = one [`Verdict`]. Adapters never decide readiness; they only report what the
//! authority said, mapping every failure to `Indeterminate` with its cause.

pub mod answer;
mod client;
pub mod dns;
mod failure;
pub mod http;
pub mod js;

use crate::rules::{RefreshCause, Verdict};

/// Where the evidence comes from.
pub enum Authority {
    Http(http::HttpAuthority),
    Js(js::JsAuthority),
}

/// What the refresh loop asks for: one refresh, one outcome. Production asks an [`Authority`];
/// the loop's timing tests script the answers (and so never link the napi calls of
/// [`js::JsAuthority`] into a test binary, where no Node.js provides them).
pub trait Check: Send + Sync + 'static {
    /// One refresh. The caller bounds it with `refresh.timeoutMs`.
    fn check(&self) -> impl std::future::Future<Output = Verdict> + Send;

    /// The cause of a refresh that `refresh.timeoutMs` cut short.
    fn timeout_cause(&self) -> RefreshCause {
        RefreshCause::Timeout
    }
}

impl Check for Authority {
    async fn check(&self) -> Verdict {
        match self {
            Authority::Http(http) => http.check().await,
            Authority::Js(js) => js.check().await,
        }
    }

    fn timeout_cause(&self) -> RefreshCause {
        match self {
            Authority::Http(_) => RefreshCause::Timeout,
            Authority::Js(_) => RefreshCause::InspectTimeout,
        }
    }
}
