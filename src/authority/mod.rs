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

impl Authority {
    /// One refresh. The caller bounds it with `refresh.timeoutMs`.
    pub async fn check(&self) -> Outcome {
        match self {
            Authority::Http(http) => http.check().await,
            Authority::Js(js) => js.check().await,
        }
    }
}
