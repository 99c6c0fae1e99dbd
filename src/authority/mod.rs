//! One refresh = one [`Outcome`]. Adapters never decide readiness; they only report what the
//! authority said, mapping every failure to `Indeterminate`.

pub mod answer;
mod client;
pub mod dns;
pub mod http;
pub mod js;

use crate::rules::Outcome;

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
    fn check(&self) -> impl std::future::Future<Output = Outcome> + Send;
}

impl Check for Authority {
    async fn check(&self) -> Outcome {
        match self {
            Authority::Http(http) => http.check().await,
            Authority::Js(js) => js.check().await,
        }
    }
}
