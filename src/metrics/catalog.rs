//! Every metric family once: its Prometheus name, HELP text, type and label names, and the name,
//! unit and instrument it has in OpenTelemetry. The exposition (`metrics()`, `metricFamilies()`)
//! reads its HELP and TYPE from here, the OpenTelemetry bridge (js/opentelemetry.js) its names,
//! units, descriptions and instruments (`metricCatalog()`), and the mapping table of
//! docs/metrics.md is generated from it (`SPEND_SENTINEL_BLESS=1 cargo test --lib options::docs`).
//!
//! OpenTelemetry names: the Prometheus name with dots between the words of its namespace
//! (`spend_sentinel.refresh.duration`), without a unit suffix (`_seconds`) or `_total`; units in
//! UCUM (`s`, `1`) or as annotations (`{unit}` for billing units, `{call}`, …).

use crate::closed_list::closed_list;

closed_list! {
    /// A family's type, as OpenMetrics names it.
    pub enum Kind {
        Gauge => "gauge",
        Counter => "counter",
        Histogram => "histogram",
        /// A gauge of value 1 that carries labels (OpenMetrics only: see [`Kind::text_kind`]).
        Info => "info",
    }
}

impl Kind {
    /// The type in the text format 0.0.4 and for prom-client, which have no `info`: a gauge.
    pub fn text_kind(self) -> &'static str {
        match self {
            Kind::Info => Kind::Gauge.as_str(),
            Kind::Gauge | Kind::Counter | Kind::Histogram => self.as_str(),
        }
    }
}

closed_list! {
    /// The OpenTelemetry instrument a family becomes.
    pub enum Instrument {
        /// A monotonic sum observed at collection time (a Prometheus counter).
        ObservableCounter => "ObservableCounter",
        /// A sum that can go down, observed at collection time: a per-node amount or the one-hot
        /// series of a state, whose sum over nodes (or breakers) means something.
        ObservableUpDownCounter => "ObservableUpDownCounter",
        /// A reading that does not add up over nodes: an age, a window, a setting, a flag, a
        /// fleet-wide figure every node reports alike, the build.
        ObservableGauge => "ObservableGauge",
        /// Recorded once per refresh, with the exposition's bucket boundaries.
        Histogram => "Histogram",
    }
}

closed_list! {
    /// Where a family comes from: every sentinel, a sentinel with `budget.fleet`, or the
    /// process-wide registry of named circuit breakers.
    pub enum Scope {
        Sentinel => "sentinel",
        Fleet => "fleet",
        Process => "process",
    }
}

/// One metric family.
pub struct FamilySpec {
    /// The Prometheus family name (a counter's with `_total`).
    pub name: &'static str,
    pub help: &'static str,
    pub kind: Kind,
    /// Its label names (a histogram's `le` aside).
    pub labels: &'static [&'static str],
    pub scope: Scope,
    pub otel_name: &'static str,
    pub otel_unit: &'static str,
    pub instrument: Instrument,
    /// A histogram's bucket upper bounds; empty otherwise.
    pub buckets: &'static [f64],
}

/// Upper bounds of the refresh duration histogram, seconds.
pub const DURATION_BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

const fn spec(
    name: &'static str,
    help: &'static str,
    kind: Kind,
    labels: &'static [&'static str],
    otel: (&'static str, &'static str, Instrument),
) -> FamilySpec {
    FamilySpec {
        name,
        help,
        kind,
        labels,
        scope: Scope::Sentinel,
        otel_name: otel.0,
        otel_unit: otel.1,
        instrument: otel.2,
        buckets: &[],
    }
}

const fn in_scope(spec: FamilySpec, scope: Scope) -> FamilySpec {
    FamilySpec { scope, ..spec }
}

use Instrument::ObservableUpDownCounter as UpDown;
use Instrument::{Histogram, ObservableCounter as Counter, ObservableGauge as Gauge};

pub const STATUS: FamilySpec = spec(
    "spend_sentinel_status",
    "1 for the current readiness status, 0 for the others.",
    Kind::Gauge,
    &["status"],
    ("spend_sentinel.status", "1", UpDown),
);
pub const EVIDENCE_AGE: FamilySpec = spec(
    "spend_sentinel_evidence_age_seconds",
    "Seconds since the last valid refresh was sent (absent without evidence).",
    Kind::Gauge,
    &[],
    ("spend_sentinel.evidence.age", "s", Gauge),
);
pub const STALE_WINDOW: FamilySpec = spec(
    "spend_sentinel_stale_window_seconds",
    "The stale window w: evidence older than this is not_ready.",
    Kind::Gauge,
    &[],
    ("spend_sentinel.stale_window", "s", Gauge),
);
pub const NODE_BUDGET: FamilySpec = spec(
    "spend_sentinel_node_budget_units",
    "This node's budget of units admitted on unverified evidence (b x share; a fleet's: floor + grant).",
    Kind::Gauge,
    &[],
    ("spend_sentinel.node_budget", "{unit}", UpDown),
);
pub const EXPOSURE: FamilySpec = spec(
    "spend_sentinel_exposure_units",
    "This node's exposure: units admitted after the current evidence time (its ledger).",
    Kind::Gauge,
    &[],
    ("spend_sentinel.exposure", "{unit}", UpDown),
);
pub const REFRESHES: FamilySpec = spec(
    "spend_sentinel_refresh_total",
    "Refreshes by outcome.",
    Kind::Counter,
    &["outcome"],
    ("spend_sentinel.refreshes", "{refresh}", Counter),
);
pub const INDETERMINATE: FamilySpec = spec(
    "spend_sentinel_refresh_indeterminate_total",
    "Indeterminate refreshes by cause; their sum is the indeterminate refresh_total.",
    Kind::Counter,
    &["cause"],
    ("spend_sentinel.refresh.indeterminate", "{refresh}", Counter),
);
pub const DURATION: FamilySpec = FamilySpec {
    buckets: &DURATION_BUCKETS,
    ..spec(
        "spend_sentinel_refresh_duration_seconds",
        "Duration of the refreshes sent to the authority.",
        Kind::Histogram,
        &[],
        ("spend_sentinel.refresh.duration", "s", Histogram),
    )
};
pub const TRANSITIONS: FamilySpec = spec(
    "spend_sentinel_transitions_total",
    "Readiness status changes, by from, to and the reason after the change.",
    Kind::Counter,
    &["from", "to", "reason"],
    ("spend_sentinel.transitions", "{transition}", Counter),
);
pub const ADMITTED_UNITS: FamilySpec = spec(
    "spend_sentinel_admitted_units_total",
    "Units admitted, by the status they were admitted on.",
    Kind::Counter,
    &["status"],
    ("spend_sentinel.admitted_units", "{unit}", Counter),
);
pub const REFUSED: FamilySpec = spec(
    "spend_sentinel_refused_total",
    "Admissions refused, by reason.",
    Kind::Counter,
    &["reason"],
    ("spend_sentinel.refused_admissions", "{admission}", Counter),
);
pub const REFUSED_UNITS: FamilySpec = spec(
    "spend_sentinel_refused_units_total",
    "Units of the refused admissions, by reason.",
    Kind::Counter,
    &["reason"],
    ("spend_sentinel.refused_units", "{unit}", Counter),
);
pub const RESERVED_UNITS: FamilySpec = spec(
    "spend_sentinel_reserved_units",
    "Units held by open reservations (part of the exposure); one that grows and never falls is a reservation never settled.",
    Kind::Gauge,
    &[],
    ("spend_sentinel.reserved_units", "{unit}", UpDown),
);
pub const REFUNDED_UNITS: FamilySpec = spec(
    "spend_sentinel_refunded_units_total",
    "Held units that settled reservations gave back unused.",
    Kind::Counter,
    &[],
    ("spend_sentinel.refunded_units", "{unit}", Counter),
);
pub const OVERAGE_UNITS: FamilySpec = spec(
    "spend_sentinel_overage_units_total",
    "Units recorded beyond what was admitted: a reservation's record or settle beyond what it held, and charges.",
    Kind::Counter,
    &[],
    ("spend_sentinel.overage_units", "{unit}", Counter),
);
pub const ON_DEMAND: FamilySpec = spec(
    "spend_sentinel_refresh_on_demand_total",
    "Refreshes started at once, without their pause, because the ledger reached half the node budget.",
    Kind::Counter,
    &[],
    ("spend_sentinel.refresh.on_demand", "{refresh}", Counter),
);
pub const HOLDS: FamilySpec = spec(
    "spend_sentinel_holds",
    "Open readiness holds (sentinel.hold(name)) by name: while any is open, readiness is not_ready (held).",
    Kind::Gauge,
    &["name"],
    ("spend_sentinel.holds", "{hold}", UpDown),
);
pub const BUILD: FamilySpec = spec(
    "spend_sentinel_build_info",
    "1, labelled with the version of spend-sentinel.",
    Kind::Info,
    &["version"],
    ("spend_sentinel.build.info", "1", Gauge),
);
pub const BREAKER_STATE: FamilySpec = in_scope(
    spec(
        "spend_sentinel_breaker_state",
        "1 for each named circuit breaker's current state, 0 for the others.",
        Kind::Gauge,
        &["name", "state"],
        ("spend_sentinel.breaker.state", "1", UpDown),
    ),
    Scope::Process,
);
pub const BREAKER_CALLS: FamilySpec = in_scope(
    spec(
        "spend_sentinel_breaker_calls_total",
        "Calls through each named circuit breaker, by result.",
        Kind::Counter,
        &["name", "result"],
        ("spend_sentinel.breaker.calls", "{call}", Counter),
    ),
    Scope::Process,
);

const fn fleet(spec: FamilySpec) -> FamilySpec {
    in_scope(spec, Scope::Fleet)
}

pub const FLEET_GRANT: FamilySpec = fleet(spec(
    "spend_sentinel_fleet_grant_units",
    "Units of the fleet's pool this node holds under a usable lease.",
    Kind::Gauge,
    &[],
    ("spend_sentinel.fleet.grant", "{unit}", UpDown),
));
pub const FLEET_FLOOR: FamilySpec = fleet(spec(
    "spend_sentinel_fleet_floor_units",
    "This node's static floor: b x reserve / maxNodes, usable without Redis.",
    Kind::Gauge,
    &[],
    ("spend_sentinel.fleet.floor", "{unit}", UpDown),
));
pub const FLEET_LIVE_NODES: FamilySpec = fleet(spec(
    "spend_sentinel_fleet_live_nodes",
    "Live nodes holding a lease, as of the last answer from Redis.",
    Kind::Gauge,
    &[],
    ("spend_sentinel.fleet.live_nodes", "{node}", Gauge),
));
pub const FLEET_MAX_NODES: FamilySpec = fleet(spec(
    "spend_sentinel_fleet_max_nodes",
    "The fleet's maxNodes (adopted from Redis): the number of static floors.",
    Kind::Gauge,
    &[],
    ("spend_sentinel.fleet.max_nodes", "{node}", Gauge),
));
pub const FLEET_BEYOND_MAX_NODES: FamilySpec = fleet(spec(
    "spend_sentinel_fleet_beyond_max_nodes",
    "1 when every static floor was taken as this node joined: it has no floor, its whole budget is leased.",
    Kind::Gauge,
    &[],
    ("spend_sentinel.fleet.beyond_max_nodes", "1", Gauge),
));
pub const FLEET_CHARGED_UNITS: FamilySpec = fleet(spec(
    "spend_sentinel_fleet_charged_units",
    "The fleet's expired or released units waiting for a valid refresh, as of the last answer.",
    Kind::Gauge,
    &[],
    ("spend_sentinel.fleet.charged_units", "{unit}", Gauge),
));
pub const FLEET_GROWTH_HELD: FamilySpec = fleet(spec(
    "spend_sentinel_fleet_growth_held",
    "1 while no grant may grow: a fresh fleet, or Redis lost its state, until lease x 1.03 + 2 s have passed and a valid refresh settled the fleet.",
    Kind::Gauge,
    &[],
    ("spend_sentinel.fleet.growth_held", "1", Gauge),
));
pub const FLEET_MODE: FamilySpec = fleet(spec(
    "spend_sentinel_fleet_mode",
    "1 for the current fleet mode (connecting, leased, floor), 0 for the others.",
    Kind::Gauge,
    &["mode"],
    ("spend_sentinel.fleet.mode", "1", UpDown),
));
pub const FLEET_REDIS_ERRORS: FamilySpec = fleet(spec(
    "spend_sentinel_fleet_redis_errors_total",
    "Failed Redis calls by kind (connect, timeout, tls, auth, noperm, response, malformed).",
    Kind::Counter,
    &["kind"],
    ("spend_sentinel.fleet.redis.errors", "{error}", Counter),
));

/// Every family, in the exposition's order.
pub const CATALOG: [&FamilySpec; 29] = [
    &STATUS,
    &EVIDENCE_AGE,
    &STALE_WINDOW,
    &NODE_BUDGET,
    &EXPOSURE,
    &REFRESHES,
    &INDETERMINATE,
    &DURATION,
    &TRANSITIONS,
    &ADMITTED_UNITS,
    &REFUSED,
    &REFUSED_UNITS,
    &RESERVED_UNITS,
    &REFUNDED_UNITS,
    &OVERAGE_UNITS,
    &ON_DEMAND,
    &HOLDS,
    &BUILD,
    &FLEET_GRANT,
    &FLEET_FLOOR,
    &FLEET_LIVE_NODES,
    &FLEET_MAX_NODES,
    &FLEET_BEYOND_MAX_NODES,
    &FLEET_CHARGED_UNITS,
    &FLEET_GROWTH_HELD,
    &FLEET_MODE,
    &FLEET_REDIS_ERRORS,
    &BREAKER_STATE,
    &BREAKER_CALLS,
];

#[cfg(test)]
/// The mapping table of docs/metrics.md (between `<!-- metrics:begin otel -->` and
/// `<!-- metrics:end otel -->`).
pub fn mapping_table() -> String {
    let mut out = String::from(
        "| Prometheus | OpenTelemetry | instrument | unit | attributes | from |\n|---|---|---|---|---|---|\n",
    );
    for spec in CATALOG {
        let attributes = spec
            .labels
            .iter()
            .map(|l| format!("`{l}`"))
            .collect::<Vec<_>>()
            .join(", ");
        out.push_str(&format!(
            "| `{}` | `{}` | {} | `{}` | {} | {} |\n",
            spec.name,
            spec.otel_name,
            spec.instrument.as_str(),
            spec.otel_unit,
            attributes,
            spec.scope.as_str(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_follow_each_convention() {
        let mut seen = std::collections::BTreeSet::new();
        for spec in CATALOG {
            assert!(seen.insert(spec.name), "{} twice", spec.name);
            assert!(seen.insert(spec.otel_name), "{} twice", spec.otel_name);
            assert!(spec.name.starts_with("spend_sentinel_"), "{}", spec.name);
            assert!(
                spec.otel_name.starts_with("spend_sentinel."),
                "{}",
                spec.otel_name
            );
            assert!(
                !spec.otel_name.ends_with("_total") && !spec.otel_name.contains("seconds"),
                "{}: no _total, no unit in an OpenTelemetry name",
                spec.otel_name
            );
            assert_eq!(
                spec.kind == Kind::Counter,
                spec.instrument == Instrument::ObservableCounter,
                "{}: counters, and only they, are monotonic sums",
                spec.name
            );
            assert_eq!(
                spec.kind == Kind::Histogram,
                spec.instrument == Instrument::Histogram,
                "{}",
                spec.name
            );
            assert_eq!(
                spec.kind == Kind::Histogram,
                !spec.buckets.is_empty(),
                "{}",
                spec.name
            );
            assert_eq!(
                spec.name.ends_with("_seconds"),
                spec.otel_unit == "s",
                "{}: seconds are `s`",
                spec.name
            );
            assert!(spec.help.ends_with('.'), "{}", spec.name);
        }
    }
}
