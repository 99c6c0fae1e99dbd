//! JavaScript-facing shapes. Doc comments here become the JSDoc of `binding.d.ts`.

use napi::bindgen_prelude::{Either, Null};
use napi_derive::napi;

use crate::numbers::u64_as_f64;
use crate::rules;

/// `ready`: recent verified evidence. `degraded`: still routed, but the last refresh was
/// inconclusive or the node budget is spent (metered requests are refused until a refresh
/// clears it). `not_ready`: do not route traffic here.
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
    /// A fleet node with neither a floor nor a usable grant (see docs/fleet.md).
    #[napi(value = "no_fleet_lease")]
    NoFleetLease,
    /// The refresh task stopped on a defect; the sentinel fails closed (see README).
    #[napi(value = "internal_error")]
    InternalError,
    /// The service holds readiness (`sentinel.hold(name)`); checked after the denials.
    #[napi(value = "held")]
    Held,
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
            R::Held => ReadinessReason::Held,
        }
    }
}

/// Seconds rounded to the millisecond (half up): readers see `1.929`, not `1.9290391740000001`
/// (the monotonic clock's nanoseconds are noise to a probe or a dashboard). Rounded in integers:
/// `readiness()` pays this per call, and a float `round` is a library call.
pub(super) fn millisecond_seconds(duration: std::time::Duration) -> f64 {
    let millis = duration
        .as_secs()
        .saturating_mul(1000)
        .saturating_add(u64::from((duration.subsec_nanos() + 500_000) / 1_000_000));
    u64_as_f64(millis) / 1000.0
}

/// Time left, in seconds rounded *up* to the millisecond: what is left is never shown as none
/// (a lease in its last half millisecond reads `0.001`, not `0` beside `mode: 'leased'`).
fn millisecond_seconds_left(duration: std::time::Duration) -> f64 {
    (duration.as_secs_f64() * 1000.0).ceil() / 1000.0
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

/// The closed lists `readiness()` and the admission guard decode the addon's numbers with
/// (js/readiness.js, js/admission.js): status `i` is `statuses[i]` (answered with
/// `httpStatuses[i]`), reason `i` is `reasons[i]`. Internal.
#[napi(object)]
pub struct ReadinessVocabulary {
    pub statuses: Vec<ReadinessStatus>,
    pub http_statuses: Vec<u16>,
    pub reasons: Vec<ReadinessReason>,
    /// `Symbol.for(codeKey)` names each instance's readiness-code function.
    pub code_key: String,
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
            kind: family.kind.text_kind().to_owned(),
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
    /// The static floor: b × reserve / maxNodes (the fleet's, or this node's own if smaller);
    /// 0 for a node beyond `maxNodes`.
    pub floor_units: f64,
    /// floor + grant.
    pub node_budget_units: f64,
    /// Seconds to the local lease deadline; 0 without a usable grant.
    pub lease_remaining_seconds: f64,
    /// Live nodes as of the last answer from Redis (`null` before any).
    #[napi(ts_type = "number | null")]
    pub live_nodes: Either<f64, Null>,
    /// The fleet's `maxNodes`: adopted from the fleet's state in Redis (set by the node that
    /// created it), this node's own before Redis answers.
    pub max_nodes: f64,
    /// The fleet's `reserve`, adopted likewise.
    pub reserve: f64,
    /// The fleet's `leaseSeconds`, adopted likewise: every lease in a fleet has one length.
    pub lease_seconds: f64,
    /// The fleet's `maxSplitSeconds`, adopted likewise: leases end and holds last this much
    /// longer.
    pub max_split_seconds: f64,
    /// This node's own `maxNodes`, `reserve` and `leaseSeconds`: they differ from the fleet's
    /// during a rolling update that changes them (one `warn` log line).
    pub configured: FleetSettings,
    /// `true` when the fleet's `maxNodes` static floors were all taken when this node joined:
    /// its floor is 0 and its whole budget is leased (one `error` log line).
    pub beyond_max_nodes: bool,
    /// The fleet's expired or released units waiting to be settled, as of the last answer
    /// (`null` before any).
    #[napi(ts_type = "number | null")]
    pub charged_units: Either<f64, Null>,
    /// `true` while no grant may grow: before Redis answers, and for leaseSeconds + 2 s after a
    /// fresh start or a lost state, until a valid refresh settles the fleet.
    pub growth_held: bool,
    /// The kind of the last failed Redis call (`connect`, `timeout`, `tls`, `auth`, `noperm`,
    /// `response`, `malformed`); `null` once a call succeeds.
    #[napi(ts_type = "FleetRedisError | null")]
    pub redis_error: Either<FleetRedisError, Null>,
}

/// A fleet's shape: `maxNodes`, `reserve`, `leaseSeconds`, `maxSplitSeconds`.
#[napi(object)]
pub struct FleetSettings {
    pub max_nodes: f64,
    pub reserve: f64,
    pub lease_seconds: f64,
    pub max_split_seconds: f64,
}

impl From<crate::rules::fleet::Settings> for FleetSettings {
    fn from(settings: crate::rules::fleet::Settings) -> Self {
        FleetSettings {
            max_nodes: u64_as_f64(settings.max_nodes),
            reserve: settings.reserve,
            lease_seconds: settings.lease.as_secs_f64(),
            max_split_seconds: settings.max_split.as_secs_f64(),
        }
    }
}

/// Why the last Redis call of a fleet node failed.
#[napi(string_enum)]
pub enum FleetRedisError {
    #[napi(value = "connect")]
    Connect,
    #[napi(value = "timeout")]
    Timeout,
    #[napi(value = "tls")]
    Tls,
    #[napi(value = "auth")]
    Auth,
    #[napi(value = "noperm")]
    NoPerm,
    #[napi(value = "response")]
    Response,
    #[napi(value = "malformed")]
    Malformed,
}

impl From<crate::rules::fleet::ErrorKind> for FleetRedisError {
    fn from(kind: crate::rules::fleet::ErrorKind) -> Self {
        use crate::rules::fleet::ErrorKind;
        match kind {
            ErrorKind::Connect => FleetRedisError::Connect,
            ErrorKind::Timeout => FleetRedisError::Timeout,
            ErrorKind::Tls => FleetRedisError::Tls,
            ErrorKind::Auth => FleetRedisError::Auth,
            ErrorKind::NoPerm => FleetRedisError::NoPerm,
            ErrorKind::Response => FleetRedisError::Response,
            ErrorKind::Malformed => FleetRedisError::Malformed,
        }
    }
}

impl From<crate::rules::fleet::FleetStatus> for FleetReadout {
    fn from(status: crate::rules::fleet::FleetStatus) -> Self {
        use crate::rules::fleet::Mode;
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
            lease_remaining_seconds: millisecond_seconds_left(status.lease_remaining),
            live_nodes: or_null(status.live_nodes.map(u64_as_f64)),
            max_nodes: u64_as_f64(status.settings.max_nodes),
            reserve: status.settings.reserve,
            lease_seconds: status.settings.lease.as_secs_f64(),
            max_split_seconds: status.settings.max_split.as_secs_f64(),
            configured: status.configured.into(),
            beyond_max_nodes: status.beyond_max_nodes,
            charged_units: or_null(status.charged_units),
            growth_held: status.growth_held,
            redis_error: status
                .redis_error
                .map_or(Either::B(Null), |kind| Either::A(kind.into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{millisecond_seconds, millisecond_seconds_left};
    use std::time::Duration;

    #[test]
    fn time_left_is_rounded_up_so_a_usable_lease_never_reads_zero() {
        let last_moments = Duration::from_micros(200);
        assert_eq!(millisecond_seconds(last_moments), 0.0, "an age rounds");
        assert_eq!(millisecond_seconds_left(last_moments), 0.001);
        assert_eq!(
            millisecond_seconds_left(Duration::from_micros(1_929_039)),
            1.93
        );
        assert_eq!(
            millisecond_seconds_left(Duration::ZERO),
            0.0,
            "none left reads 0"
        );
    }

    #[test]
    fn an_age_is_rounded_to_the_nearest_millisecond_half_up() {
        let cases = [
            (Duration::ZERO, 0.0),
            (Duration::from_micros(499), 0.0),
            (Duration::from_micros(500), 0.001),
            (Duration::from_micros(1_929_039), 1.929),
            (Duration::from_micros(1_929_500), 1.93),
            (Duration::from_secs(7 * 24 * 3600), 604_800.0),
            (
                Duration::new(100 * 365 * 24 * 3600, 999_999_999),
                3_153_600_001.0,
            ),
        ];
        for (age, seconds) in cases {
            assert_eq!(millisecond_seconds(age), seconds, "{age:?}");
        }
    }
}
