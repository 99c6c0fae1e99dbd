//! JavaScript-facing shapes. Doc comments here become the JSDoc of `index.d.ts`.

use napi::bindgen_prelude::{Either, Null};
use napi_derive::napi;

use crate::rules;

/// `ready`: recent verified evidence. `degraded`: the last refresh was inconclusive but the
/// evidence is still young. `not_ready`: do not route traffic here.
#[napi(string_enum)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadinessStatus {
    #[napi(value = "ready")]
    Ready,
    #[napi(value = "degraded")]
    Degraded,
    #[napi(value = "not_ready")]
    NotReady,
}

/// Why readiness is what it is; one code per rule of the readiness table (README), checked in this order.
#[napi(string_enum)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadinessReason {
    #[napi(value = "shutting_down")]
    ShuttingDown,
    #[napi(value = "invalid_credential")]
    InvalidCredential,
    #[napi(value = "capability_missing")]
    CapabilityMissing,
    #[napi(value = "no_evidence")]
    NoEvidence,
    #[napi(value = "evidence_too_old")]
    EvidenceTooOld,
    #[napi(value = "budget_exhausted")]
    BudgetExhausted,
    #[napi(value = "refresh_indeterminate")]
    RefreshIndeterminate,
    #[napi(value = "verified")]
    Verified,
    /// A fleet node with neither a floor nor a usable grant (see README, fleet budget).
    #[napi(value = "no_fleet_lease")]
    NoFleetLease,
    /// The refresh task stopped on a defect; the sentinel fails closed (see README).
    #[napi(value = "internal_error")]
    InternalError,
}

/// What one refresh can conclude; what an `inspect()` function must resolve to.
#[napi(string_enum)]
pub enum RefreshOutcome {
    #[napi(value = "valid")]
    Valid,
    #[napi(value = "invalid_credential")]
    InvalidCredential,
    #[napi(value = "capability_missing")]
    CapabilityMissing,
    #[napi(value = "indeterminate")]
    Indeterminate,
}

impl From<rules::Status> for ReadinessStatus {
    fn from(status: rules::Status) -> Self {
        match status {
            rules::Status::Ready => ReadinessStatus::Ready,
            rules::Status::Degraded => ReadinessStatus::Degraded,
            rules::Status::NotReady => ReadinessStatus::NotReady,
        }
    }
}

impl From<rules::Reason> for ReadinessReason {
    fn from(reason: rules::Reason) -> Self {
        use rules::Reason as R;
        match reason {
            R::ShuttingDown => ReadinessReason::ShuttingDown,
            R::InvalidCredential => ReadinessReason::InvalidCredential,
            R::CapabilityMissing => ReadinessReason::CapabilityMissing,
            R::NoEvidence => ReadinessReason::NoEvidence,
            R::EvidenceTooOld => ReadinessReason::EvidenceTooOld,
            R::BudgetExhausted => ReadinessReason::BudgetExhausted,
            R::RefreshIndeterminate => ReadinessReason::RefreshIndeterminate,
            R::Verified => ReadinessReason::Verified,
            R::NoFleetLease => ReadinessReason::NoFleetLease,
            R::InternalError => ReadinessReason::InternalError,
        }
    }
}

/// Seconds rounded to the millisecond: readers see `1.929`, not `1.9290391740000001` (the
/// monotonic clock's nanoseconds are noise to a probe or a dashboard).
pub(super) fn millisecond_seconds(duration: std::time::Duration) -> f64 {
    (duration.as_secs_f64() * 1000.0).round() / 1000.0
}

fn age_seconds(readiness: &rules::Readiness) -> Either<f64, Null> {
    match readiness.evidence_age {
        Some(age) => Either::A(millisecond_seconds(age)),
        None => Either::B(Null),
    }
}

/// Readiness at the moment it was read (README, Readiness).
#[napi(object)]
pub struct Readiness {
    pub status: ReadinessStatus,
    /// Seconds since the last valid refresh was sent; `null` without evidence.
    pub evidence_age_seconds: Either<f64, Null>,
    pub reason: ReadinessReason,
    /// 200 for `ready` and `degraded`, 503 for `not_ready`.
    pub http_status: u16,
}

impl From<rules::Readiness> for Readiness {
    fn from(readiness: rules::Readiness) -> Self {
        Readiness {
            status: readiness.status.into(),
            evidence_age_seconds: age_seconds(&readiness),
            reason: readiness.reason.into(),
            http_status: readiness.status.http_status(),
        }
    }
}

/// Passed to `onTransition` listeners whenever the status changes.
#[napi(object)]
pub struct TransitionEvent {
    pub from: ReadinessStatus,
    pub to: ReadinessStatus,
    pub reason: ReadinessReason,
    pub evidence_age_seconds: Either<f64, Null>,
}

impl TransitionEvent {
    pub fn new(from: rules::Status, now: &rules::Readiness) -> Self {
        TransitionEvent {
            from: from.into(),
            to: now.status.into(),
            reason: now.reason.into(),
            evidence_age_seconds: age_seconds(now),
        }
    }
}

/// Options of `whenReady` (for `index.d.ts`; parsed by `crate::config::parse_when_ready`).
#[napi(object, object_to_js = false, object_from_js = false)]
#[allow(dead_code)]
pub struct WhenReadyOptions {
    /// Reject after this many milliseconds (0 to 2147483647). Default: wait until ready or
    /// closed.
    pub timeout_ms: Option<f64>,
}

/// Options of `metrics()` (for `index.d.ts`; parsed by `crate::config::parse_metrics_options`).
#[napi(object, object_to_js = false, object_from_js = false)]
#[allow(dead_code)]
pub struct MetricsOptions {
    /// `'text'` (default): Prometheus text format 0.0.4, served as `text/plain; version=0.0.4;
    /// charset=utf-8`. `'openmetrics'`: OpenMetrics 1.0, served as
    /// `application/openmetrics-text; version=1.0.0; charset=utf-8`.
    #[napi(ts_type = "'text' | 'openmetrics'")]
    pub format: Option<String>,
}

// The option shapes below exist for `index.d.ts` only: options are parsed by `crate::config`,
// which names the path of every bad value and refuses unknown keys.

/// `budget`: the money that sets the stale window (README, The budget math).
#[napi(object, object_to_js = false, object_from_js = false)]
#[allow(dead_code)]
pub struct BudgetOptions {
    /// b: fleet-wide ceiling of units that may be admitted on unverified evidence (> 0).
    pub unverified_units: f64,
    /// r: this node's maximum admission rate, units per second (> 0).
    pub max_units_per_second: f64,
    /// Fleet size (whole number ≥ 1); share = 1 / nodes. Default 1. Not with `share`.
    pub nodes: Option<f64>,
    /// This node's fraction of b, 0 < share ≤ 1. Not with `nodes`.
    pub share: Option<f64>,
    /// Caps the stale window (seconds); may not exceed node budget / r.
    pub max_stale_seconds: Option<f64>,
    /// Shares b among the nodes alive now, through leases in Redis. Not with `nodes`/`share`.
    pub fleet: Option<FleetOptions>,
}

/// `budget.fleet`: a fleet-wide budget leased from Redis (see README, "A fleet that scales").
#[napi(object, object_to_js = false, object_from_js = false)]
#[allow(dead_code)]
pub struct FleetOptions {
    /// `redis://` or `rediss://` URL (user, password, db allowed). Give this or `redisEnv`.
    pub redis: Option<String>,
    /// Name of an environment variable holding the URL. Give this or `redis`.
    pub redis_env: Option<String>,
    /// The fleet's identity, 1–100 of `[A-Za-z0-9_.:-]`, the same on every node sharing b.
    pub name: String,
    /// The most nodes alive at once, surge and terminating pods included (1–10000).
    pub max_nodes: f64,
    /// Part of b kept as static floors (b × reserve / maxNodes each), 0 ≤ reserve < 1.
    /// Default 0.25.
    pub reserve: Option<f64>,
    /// How long a grant lives in Redis without renewal, 5–600 s. Default 30.
    pub lease_seconds: Option<f64>,
}

/// `refresh`: cadence of the background refresh (README, Options). Defaults scale with the window w
/// (seconds): 300·w, 500·w and min(2000, 400·w) ms.
#[napi(object, object_to_js = false, object_from_js = false)]
#[allow(dead_code)]
pub struct RefreshOptions {
    /// Shortest pause between two refreshes, ms (≥ 0).
    pub min_interval_ms: Option<f64>,
    /// Longest pause between two refreshes, ms (≥ minIntervalMs); maxIntervalMs + timeoutMs
    /// must stay below the window.
    pub max_interval_ms: Option<f64>,
    /// Bound on one whole refresh (connect, headers, body), ms (> 0).
    pub timeout_ms: Option<f64>,
    /// Put the refreshes behind a circuit breaker: `true` (defaults) or its options.
    #[napi(ts_type = "boolean | RefreshBreakerOptions")]
    pub breaker: Option<()>,
}

/// `refresh.breaker`: the `CircuitBreaker` options that apply to refreshes.
#[napi(object, object_to_js = false, object_from_js = false)]
#[allow(dead_code)]
pub struct RefreshBreakerOptions {
    /// Consecutive inconclusive refreshes that open it; 0 turns this rule off. Default 5.
    pub failure_threshold: Option<f64>,
    /// Inconclusive rate (0..1) over `windowMs` that opens it; 0 turns this rule off. Default 0.5.
    pub failure_rate_threshold: Option<f64>,
    /// Rolling window of the rate rule, ms. Default 10000.
    pub window_ms: Option<f64>,
    /// Refreshes the window must hold before the rate rule applies. Default 20.
    pub minimum_calls: Option<f64>,
    /// First open period, ms. Default 5000.
    pub open_ms: Option<f64>,
    /// Cap of the doubling open period, ms. Default max(60000, openMs).
    pub max_open_ms: Option<f64>,
    /// A trial not settled by then counts as failed, ms. Default 10000.
    pub trial_timeout_ms: Option<f64>,
}

/// `logger`: pino-compatible; gets one line per transition and per refresh that was not `valid`.
#[napi(object, object_to_js = false, object_from_js = false)]
#[allow(dead_code)]
pub struct SentinelLogger {
    #[napi(ts_type = "(obj: object, msg: string) => void")]
    pub info: (),
    #[napi(ts_type = "(obj: object, msg: string) => void")]
    pub warn: (),
    #[napi(ts_type = "(obj: object, msg: string) => void")]
    pub error: (),
}

/// The built-in HTTP authority adapter (README, The HTTP adapter).
#[napi(object, object_to_js = false, object_from_js = false)]
#[allow(dead_code)]
pub struct HttpAuthorityOptions {
    /// https URL of the account endpoint (http only with `allowInsecureHttp`).
    pub url: String,
    /// The API credential. Give this or `credentialEnv`.
    pub credential: Option<String>,
    /// Name of an environment variable holding the credential.
    pub credential_env: Option<String>,
    /// The capability (meter) the account's tier must include.
    pub required_capability: Option<String>,
    /// Several capabilities, all required.
    pub required_capabilities: Option<Vec<String>>,
    /// JSON Pointer to the capability list or map in the answer. Default `/capabilities`.
    pub capabilities_pointer: Option<String>,
    /// Header that carries the credential. Default `authorization`.
    pub header: Option<String>,
    /// Scheme before the credential. Default `Bearer`; `''` sends the bare credential.
    pub scheme: Option<String>,
    /// Allow a plain http URL (tests, sidecars on localhost). Default false.
    pub allow_insecure_http: Option<bool>,
    /// Extra trusted root certificates (PEM), for authorities behind a private CA.
    pub ca_pem: Option<String>,
}

/// An authority you implement: resolve to one of the four outcomes. A throw, a rejection, any
/// other value, or no answer within `refresh.timeoutMs` counts as `indeterminate`.
#[napi(object, object_to_js = false, object_from_js = false)]
#[allow(dead_code)]
pub struct InspectAuthorityOptions {
    #[napi(ts_type = "() => Promise<RefreshOutcome>")]
    pub inspect: (),
}

/// Options of `new Sentinel(options)`; every one is validated at construction.
#[napi(object, object_to_js = false, object_from_js = false)]
#[allow(dead_code)]
pub struct SentinelOptions {
    pub budget: BudgetOptions,
    pub refresh: Option<RefreshOptions>,
    #[napi(ts_type = "HttpAuthorityOptions | InspectAuthorityOptions")]
    pub authority: (),
    /// Receives one line per status change and per refresh that was not `valid` (codes only).
    pub logger: Option<SentinelLogger>,
}

/// One metric family of `metricFamilies()`: what `metrics()` renders as text.
#[napi(object)]
pub struct MetricFamily {
    pub name: String,
    pub help: String,
    /// `gauge`, `counter` or `histogram` (as prom-client names them).
    #[napi(js_name = "type")]
    pub kind: String,
    pub samples: Vec<MetricSample>,
}

#[napi(object)]
pub struct MetricSample {
    /// The family name, or its `_bucket` / `_sum` / `_count` series.
    pub name: String,
    /// In a fixed (alphabetical) order.
    pub labels: std::collections::BTreeMap<String, String>,
    pub value: f64,
}

impl From<crate::metrics::Family> for MetricFamily {
    fn from(family: crate::metrics::Family) -> Self {
        MetricFamily {
            name: family.name.to_owned(),
            help: family.help.to_owned(),
            kind: family.text_kind().to_owned(),
            samples: family
                .samples
                .into_iter()
                .map(|s| MetricSample {
                    name: s.name,
                    labels: s
                        .labels
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect(),
                    value: s.value,
                })
                .collect(),
        }
    }
}

/// `connecting` (Redis has not answered yet; the node runs on its floor), `leased` (a usable
/// grant), `floor` (Redis answered; no usable grant).
#[napi(string_enum)]
pub enum FleetMode {
    #[napi(value = "connecting")]
    Connecting,
    #[napi(value = "leased")]
    Leased,
    #[napi(value = "floor")]
    Floor,
}

/// `sentinel.fleet()`: the fleet budget as this node sees it now.
#[napi(object)]
pub struct FleetReadout {
    pub mode: FleetMode,
    /// Units of the pool held under a lease whose local deadline is ahead; 0 otherwise.
    pub grant_units: f64,
    /// b × reserve / maxNodes.
    pub floor_units: f64,
    /// floor + grant.
    pub node_budget_units: f64,
    /// Seconds to the local lease deadline; 0 without a usable grant.
    pub lease_remaining_seconds: f64,
    /// Live nodes as of the last answer from Redis (`null` before any).
    #[napi(ts_type = "number | null")]
    pub live_nodes: Either<f64, Null>,
    /// The fleet's expired or released units waiting to be settled, as of the last answer
    /// (`null` before any).
    #[napi(ts_type = "number | null")]
    pub charged_units: Either<f64, Null>,
}

impl From<crate::fleet::FleetStatus> for FleetReadout {
    fn from(status: crate::fleet::FleetStatus) -> Self {
        use crate::fleet::Mode;
        let or_null = |v: Option<f64>| v.map_or(Either::B(Null), Either::A);
        FleetReadout {
            mode: match status.mode {
                Mode::Connecting => FleetMode::Connecting,
                Mode::Leased => FleetMode::Leased,
                Mode::Floor => FleetMode::Floor,
            },
            grant_units: status.grant_units,
            floor_units: status.floor_units,
            node_budget_units: status.node_budget_units,
            lease_remaining_seconds: millisecond_seconds(status.lease_remaining),
            live_nodes: or_null(status.live_nodes.map(|n| n as f64)),
            charged_units: or_null(status.charged_units),
        }
    }
}
