//! Prometheus metrics of one sentinel: counters kept with atomics (the admit path adds a few
//! relaxed atomic operations, no lock), gauges read from the sentinel state when scraped, and the text
//! exposition (format 0.0.4, or OpenMetrics 1.0). Every label takes only the values of a closed
//! set (statuses, reasons, outcomes): nothing a user, an account or the authority says can become
//! a label. Every counter series that can ever move is shown from the first scrape, at 0, so that
//! `increase()` counts its first occurrence; combinations that cannot happen are never shown.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use crate::numbers::u64_as_f64;
use crate::rules::breaker::{BreakerState, BreakerStats};
use crate::rules::ledger::Settlement;
use crate::rules::{Outcome, Readiness, Reason, RefreshCause, Status, Verdict};

pub mod catalog;

use catalog::{FamilySpec, DURATION_BUCKETS};

/// A family type as the 0.0.4 text format and prom-client name it: an OpenMetrics `info` is a
/// `gauge` there.
pub fn text_kind(kind: &'static str) -> &'static str {
    if kind == "info" {
        "gauge"
    } else {
        kind
    }
}

/// Whether a status can be entered with a reason: each reason goes with one status.
fn can_enter(to: Status, reason: Reason) -> bool {
    reason.status() == to
}

/// The label values of the refusal counters: the refusal reasons, in `Reason::ALL`'s order.
fn refusal_reasons() -> impl Iterator<Item = (usize, Reason)> {
    Reason::ALL
        .into_iter()
        .enumerate()
        .filter(|(_, r)| r.is_refusal())
}

/// A refusal's counter; a reason admission cannot refuse with (a defect) counts as internal_error.
fn refusal_index(reason: Reason) -> usize {
    debug_assert!(reason.is_refusal(), "refused with {reason:?}");
    if reason.is_refusal() {
        reason.index()
    } else {
        Reason::InternalError.index()
    }
}

/// A float counter on an atomic (units are fractional).
#[derive(Default)]
struct AtomicF64(AtomicU64);

impl AtomicF64 {
    fn add(&self, value: f64) {
        let _ = self.0.fetch_update(Relaxed, Relaxed, |bits| {
            Some((f64::from_bits(bits) + value).to_bits())
        });
    }

    /// `add` for a counter with one writer (a plain load and store: no read-modify-write).
    fn add_single_writer(&self, value: f64) {
        self.0.store(
            (f64::from_bits(self.0.load(Relaxed)) + value).to_bits(),
            Relaxed,
        );
    }

    fn get(&self) -> f64 {
        f64::from_bits(self.0.load(Relaxed))
    }
}

#[derive(Default)]
pub struct Metrics {
    refreshes: [AtomicU64; Outcome::COUNT],
    /// The indeterminate refreshes, indexed like `RefreshCause::ALL`.
    indeterminate: [AtomicU64; RefreshCause::COUNT],
    duration_buckets: [AtomicU64; DURATION_BUCKETS.len()],
    duration_count: AtomicU64,
    duration_sum: AtomicF64,
    /// [from][to][reason]
    transitions: [[[AtomicU64; Reason::COUNT]; Status::COUNT]; Status::COUNT],
    /// Units admitted, by the status admitted on (`not_ready`'s entry never moves).
    admitted_units: [AtomicF64; Status::COUNT],
    /// Indexed like `Reason::ALL`; only the refusal reasons' entries ever move or are shown.
    refused: [AtomicU64; Reason::COUNT],
    refused_units: [AtomicF64; Reason::COUNT],
    /// Held units that settled reservations gave back.
    refunded_units: AtomicF64,
    /// Units recorded beyond what was held: settles above their reservation, and charges.
    overage_units: AtomicF64,
    /// Refreshes started at once because the ledger reached half the node budget.
    demand_refreshes: AtomicU64,
}

/// What the gauges show, read from the sentinel state at scrape time.
pub struct Gauges {
    pub readiness: Readiness,
    pub stale_window: Duration,
    pub node_budget_units: f64,
    pub exposure_units: f64,
    /// The part of the exposure that open reservations hold.
    pub reserved_units: f64,
    /// Open readiness holds by name, every name ever held (`sentinel.hold(name)`).
    pub holds: Vec<(String, usize)>,
}

/// One metric family, as the text exposition and the prom-client bridge both need it.
pub struct Family {
    pub name: &'static str,
    pub help: &'static str,
    /// `gauge`, `counter`, `histogram` or `info` (OpenMetrics; a gauge of value 1 in the text
    /// format 0.0.4 and for prom-client: see [`Family::text_kind`]).
    pub kind: &'static str,
    pub samples: Vec<Sample>,
}

impl Family {
    /// `spec`'s family (its name, HELP and TYPE) with `samples`.
    pub fn of(spec: &FamilySpec, samples: Vec<Sample>) -> Family {
        Family {
            name: spec.name,
            help: spec.help,
            kind: spec.kind,
            samples,
        }
    }

    /// The TYPE in the text format 0.0.4 (and for prom-client), which has no `info`.
    pub fn text_kind(&self) -> &'static str {
        text_kind(self.kind)
    }

    /// The OpenMetrics family name: a counter's without `_total`, an info's without `_info`
    /// (its samples keep them).
    fn openmetrics_name(&self) -> &'static str {
        let suffix = match self.kind {
            "counter" => "_total",
            "info" => "_info",
            _ => "",
        };
        self.name.strip_suffix(suffix).unwrap_or(self.name)
    }

    /// The OpenMetrics UNIT: `seconds` for the families named so; the other quantities are
    /// billing units or counts, which have no base unit.
    fn unit(&self) -> Option<&'static str> {
        self.openmetrics_name()
            .ends_with("_seconds")
            .then_some("seconds")
    }
}

/// An exposition format: `metrics({ format })`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Prometheus text format 0.0.4 (`text/plain; version=0.0.4; charset=utf-8`).
    Text,
    /// OpenMetrics 1.0 (`application/openmetrics-text; version=1.0.0; charset=utf-8`).
    OpenMetrics,
}

impl Format {
    pub const NAMES: [&'static str; 2] = ["text", "openmetrics"];

    pub fn from_name(name: &str) -> Option<Format> {
        match name {
            "text" => Some(Format::Text),
            "openmetrics" => Some(Format::OpenMetrics),
            _ => None,
        }
    }
}

pub struct Sample {
    /// The family name, or `_bucket` / `_sum` / `_count` of a histogram.
    pub name: String,
    pub labels: Vec<(&'static str, String)>,
    pub value: f64,
}

impl Metrics {
    /// The refreshes that ended with `outcome` (those an open breaker skipped included).
    #[cfg(test)]
    pub fn refreshes(&self, outcome: Outcome) -> u64 {
        self.refreshes[outcome.index()].load(Relaxed)
    }

    /// The indeterminate refreshes with `cause`.
    #[cfg(test)]
    pub fn indeterminate(&self, cause: RefreshCause) -> u64 {
        self.indeterminate[cause.index()].load(Relaxed)
    }

    /// A refresh that was sent and took `took` (a refresh an open breaker skipped passes `None`).
    pub fn refreshed(&self, verdict: Verdict, took: Option<Duration>) {
        self.refreshes[verdict.outcome().index()].fetch_add(1, Relaxed);
        if let Some(cause) = verdict.cause() {
            self.indeterminate[cause.index()].fetch_add(1, Relaxed);
        }
        if let Some(took) = took {
            let seconds = took.as_secs_f64();
            if let Some(i) = DURATION_BUCKETS.iter().position(|le| seconds <= *le) {
                self.duration_buckets[i].fetch_add(1, Relaxed);
            }
            self.duration_count.fetch_add(1, Relaxed);
            self.duration_sum.add(seconds);
        }
    }

    pub fn transitioned(&self, from: Status, now: &Readiness) {
        debug_assert!(from != now.status && can_enter(now.status, now.reason));
        self.transitions[from.index()][now.status.index()][now.reason.index()]
            .fetch_add(1, Relaxed);
    }

    // Admission runs on the sentinel's JavaScript thread only: these counters have one
    // writer, so a relaxed load and store replaces the (several times dearer) atomic
    // read-modify-write, and a scrape from any thread still reads a whole value.

    pub fn admitted(&self, units: f64, on: Status) {
        self.admitted_units[on.index()].add_single_writer(units);
    }

    pub fn refused(&self, reason: Reason, units: f64) {
        let index = refusal_index(reason);
        let counter = &self.refused[index];
        counter.store(counter.load(Relaxed) + 1, Relaxed);
        self.refused_units[index].add_single_writer(units);
    }

    /// A refresh started on demand (the ledger reached half the node budget).
    pub fn refreshed_on_demand(&self) {
        self.demand_refreshes.fetch_add(1, Relaxed);
    }

    /// The refreshes started on demand so far.
    #[cfg(test)]
    pub fn demand_refreshes(&self) -> u64 {
        self.demand_refreshes.load(Relaxed)
    }

    /// A settle or a charge (JavaScript thread only, like admission).
    pub fn settled(&self, settlement: Settlement) {
        self.refunded_units.add_single_writer(settlement.refunded);
        self.overage_units.add_single_writer(settlement.overage);
    }

    pub fn families(&self, gauges: &Gauges) -> Vec<Family> {
        let mut families = vec![
            by_label(
                &catalog::STATUS,
                Status::ALL.iter().map(|s| {
                    (
                        s.as_str(),
                        f64::from(u8::from(*s == gauges.readiness.status)),
                    )
                }),
            ),
            Family::of(
                &catalog::EVIDENCE_AGE,
                gauges
                    .readiness
                    .evidence_age
                    .map(|age| sample(catalog::EVIDENCE_AGE.name, vec![], age.as_secs_f64()))
                    .into_iter()
                    .collect(),
            ),
            single(&catalog::STALE_WINDOW, gauges.stale_window.as_secs_f64()),
            single(&catalog::NODE_BUDGET, gauges.node_budget_units),
            single(&catalog::EXPOSURE, gauges.exposure_units),
            by_label(
                &catalog::REFRESHES,
                Outcome::ALL.iter().map(|o| {
                    let value = u64_as_f64(self.refreshes[o.index()].load(Relaxed));
                    (o.as_str(), value)
                }),
            ),
            by_label(
                &catalog::INDETERMINATE,
                RefreshCause::ALL.iter().map(|c| {
                    let value = u64_as_f64(self.indeterminate[c.index()].load(Relaxed));
                    (c.as_str(), value)
                }),
            ),
            self.duration_family(),
        ];
        families.push(self.transitions_family());
        families.push(by_label(
            &catalog::ADMITTED_UNITS,
            Status::ALL
                .into_iter()
                .filter(|s| s.admits())
                .map(|s| (s.as_str(), self.admitted_units[s.index()].get())),
        ));
        families.push(by_label(
            &catalog::REFUSED,
            refusal_reasons().map(|(i, r)| (r.as_str(), u64_as_f64(self.refused[i].load(Relaxed)))),
        ));
        families.push(by_label(
            &catalog::REFUSED_UNITS,
            refusal_reasons().map(|(i, r)| (r.as_str(), self.refused_units[i].get())),
        ));
        families.push(single(&catalog::RESERVED_UNITS, gauges.reserved_units));
        families.push(single(&catalog::REFUNDED_UNITS, self.refunded_units.get()));
        families.push(single(&catalog::OVERAGE_UNITS, self.overage_units.get()));
        families.push(single(
            &catalog::ON_DEMAND,
            u64_as_f64(self.demand_refreshes.load(Relaxed)),
        ));
        families.push(holds_family(&gauges.holds));
        families.push(Family::of(
            &catalog::BUILD,
            vec![sample(
                catalog::BUILD.name,
                vec![("version", env!("CARGO_PKG_VERSION").into())],
                1.0,
            )],
        ));
        families
    }

    fn duration_family(&self) -> Family {
        let name = catalog::DURATION.name;
        let mut samples = Vec::new();
        let mut cumulative = 0;
        for (i, le) in DURATION_BUCKETS.iter().enumerate() {
            cumulative += self.duration_buckets[i].load(Relaxed);
            samples.push(sample(
                &format!("{name}_bucket"),
                vec![("le", le.to_string())],
                u64_as_f64(cumulative),
            ));
        }
        let count = u64_as_f64(self.duration_count.load(Relaxed));
        samples.push(sample(
            &format!("{name}_bucket"),
            vec![("le", "+Inf".into())],
            count,
        ));
        samples.push(sample(
            &format!("{name}_sum"),
            vec![],
            self.duration_sum.get(),
        ));
        samples.push(sample(&format!("{name}_count"), vec![], count));
        Family::of(&catalog::DURATION, samples)
    }

    /// Every combination that can happen (from ≠ to, and a reason `to` can be entered with: 22
    /// series), at 0 until it does.
    fn transitions_family(&self) -> Family {
        let mut samples = Vec::new();
        for (f, from) in Status::ALL.iter().enumerate() {
            for (t, to) in Status::ALL.iter().enumerate() {
                if f == t {
                    continue;
                }
                for reason in Reason::ALL.into_iter().filter(|r| can_enter(*to, *r)) {
                    let count = self.transitions[f][t][reason.index()].load(Relaxed);
                    let labels = vec![
                        ("from", from.as_str().into()),
                        ("to", to.as_str().into()),
                        ("reason", reason.as_str().into()),
                    ];
                    samples.push(sample(catalog::TRANSITIONS.name, labels, u64_as_f64(count)));
                }
            }
        }
        Family::of(&catalog::TRANSITIONS, samples)
    }
}

/// Open readiness holds by name: the names are the service's own (checked: 1 to 64 of
/// `[A-Za-z0-9_.:-]`), so the series are as many as the names it uses; a name stays at 0 once
/// its last hold is released.
fn holds_family(holds: &[(String, usize)]) -> Family {
    let name = catalog::HOLDS.name;
    Family::of(
        &catalog::HOLDS,
        holds
            .iter()
            .map(|(hold, open)| sample(name, vec![("name", hold.clone())], open_count(*open)))
            .collect(),
    )
}

/// A count of open holds as a sample value (far below 2^53: exact).
fn open_count(open: usize) -> f64 {
    u64_as_f64(u64::try_from(open).unwrap_or(u64::MAX))
}

/// The two breaker families for `breakers` (name, state now, stats); no samples without breakers.
pub fn breaker_families(breakers: &[(String, BreakerState, BreakerStats)]) -> Vec<Family> {
    let mut state = Vec::new();
    let mut calls = Vec::new();
    for (name, now, stats) in breakers {
        for s in BreakerState::ALL {
            let labels = vec![("name", name.clone()), ("state", s.as_str().into())];
            state.push(sample(
                catalog::BREAKER_STATE.name,
                labels,
                if s == *now { 1.0 } else { 0.0 },
            ));
        }
        for (result, value) in [
            ("success", stats.successes),
            ("failure", stats.failures - stats.timeouts),
            ("timeout", stats.timeouts),
            ("rejected", stats.refused),
        ] {
            let labels = vec![("name", name.clone()), ("result", result.into())];
            calls.push(sample(
                catalog::BREAKER_CALLS.name,
                labels,
                u64_as_f64(value),
            ));
        }
    }
    vec![
        Family::of(&catalog::BREAKER_STATE, state),
        Family::of(&catalog::BREAKER_CALLS, calls),
    ]
}

pub(crate) fn sample(name: &str, labels: Vec<(&'static str, String)>, value: f64) -> Sample {
    Sample {
        name: name.to_owned(),
        labels,
        value,
    }
}

/// A family whose one label (the spec's) takes a closed set of values: one sample per
/// `(value, number)`.
pub(crate) fn by_label(
    spec: &FamilySpec,
    values: impl IntoIterator<Item = (&'static str, f64)>,
) -> Family {
    let label = spec.labels[0];
    Family::of(
        spec,
        values
            .into_iter()
            .map(|(value, number)| sample(spec.name, vec![(label, value.into())], number))
            .collect(),
    )
}

/// A family without labels: one sample.
pub(crate) fn single(spec: &FamilySpec, value: f64) -> Family {
    Family::of(spec, vec![sample(spec.name, vec![], value)])
}

/// `families` in `format`.
pub fn render_as(families: &[Family], format: Format) -> String {
    match format {
        Format::Text => render(families),
        Format::OpenMetrics => render_openmetrics(families),
    }
}

/// The text exposition format 0.0.4 of `families`.
pub fn render(families: &[Family]) -> String {
    let mut out = String::new();
    for family in families {
        let _ = writeln!(out, "# HELP {} {}", family.name, family.help);
        let _ = writeln!(out, "# TYPE {} {}", family.name, family.text_kind());
        render_samples(&mut out, family);
    }
    out
}

/// OpenMetrics 1.0 text of `families`: TYPE, UNIT (seconds only) and HELP under the family
/// name (a counter's without `_total`), the same samples, and `# EOF`.
pub fn render_openmetrics(families: &[Family]) -> String {
    let mut out = String::new();
    for family in families {
        let name = family.openmetrics_name();
        let _ = writeln!(out, "# TYPE {name} {}", family.kind);
        if let Some(unit) = family.unit() {
            let _ = writeln!(out, "# UNIT {name} {unit}");
        }
        let _ = writeln!(out, "# HELP {name} {}", escape_label(family.help));
        render_samples(&mut out, family);
    }
    out.push_str("# EOF\n");
    out
}

fn render_samples(out: &mut String, family: &Family) {
    for s in &family.samples {
        out.push_str(&s.name);
        if !s.labels.is_empty() {
            out.push('{');
            for (i, (key, value)) in s.labels.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{key}=\"{}\"", escape_label(value));
            }
            out.push('}');
        }
        let _ = writeln!(out, " {}", number(s.value));
    }
}

/// Label values: backslash, double quote and line feed escaped, as the format requires.
pub fn escape_label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn number(value: f64) -> String {
    if value.is_nan() {
        "NaN".into()
    } else if value.is_infinite() {
        if value > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        value.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gauges(status: Status, reason: Reason, age: Option<Duration>) -> Gauges {
        Gauges {
            readiness: Readiness {
                status,
                reason,
                evidence_age: age,
            },
            stale_window: Duration::from_secs(5),
            node_budget_units: 100.0,
            exposure_units: 12.5,
            reserved_units: 7.5,
            holds: Vec::new(),
        }
    }

    #[test]
    fn counters_and_gauges_render_with_help_and_type() {
        let m = Metrics::default();
        m.refreshed(Verdict::Valid, Some(Duration::from_millis(30)));
        m.refreshed(Verdict::Indeterminate(RefreshCause::BreakerOpen), None);
        m.admitted(2.5, Status::Degraded);
        m.refused(Reason::EvidenceTooOld, 4.0);
        m.settled(crate::rules::ledger::settlement(10.0, 4.0));
        m.settled(crate::rules::ledger::settlement(1.0, 3.5));
        let text = render(&m.families(&gauges(
            Status::Degraded,
            Reason::RefreshIndeterminate,
            Some(Duration::from_millis(1500)),
        )));
        for line in [
            "# TYPE spend_sentinel_status gauge",
            "spend_sentinel_status{status=\"degraded\"} 1",
            "spend_sentinel_status{status=\"ready\"} 0",
            "spend_sentinel_evidence_age_seconds 1.5",
            "spend_sentinel_exposure_units 12.5",
            "spend_sentinel_refresh_total{outcome=\"valid\"} 1",
            "spend_sentinel_refresh_total{outcome=\"indeterminate\"} 1",
            "spend_sentinel_refresh_duration_seconds_bucket{le=\"0.025\"} 0",
            "spend_sentinel_refresh_duration_seconds_bucket{le=\"0.05\"} 1",
            "spend_sentinel_refresh_duration_seconds_bucket{le=\"+Inf\"} 1",
            "spend_sentinel_refresh_duration_seconds_count 1",
            "spend_sentinel_admitted_units_total{status=\"degraded\"} 2.5",
            "spend_sentinel_refused_total{reason=\"evidence_too_old\"} 1",
            "spend_sentinel_refused_units_total{reason=\"evidence_too_old\"} 4",
            "spend_sentinel_refused_units_total{reason=\"no_evidence\"} 0",
            "spend_sentinel_reserved_units 7.5",
            "# TYPE spend_sentinel_refunded_units_total counter",
            "spend_sentinel_refunded_units_total 6",
            "spend_sentinel_overage_units_total 2.5",
            "# TYPE spend_sentinel_build_info gauge",
            concat!(
                "spend_sentinel_build_info{version=\"",
                env!("CARGO_PKG_VERSION"),
                "\"} 1"
            ),
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
    }

    #[test]
    fn evidence_age_is_absent_without_evidence_and_every_possible_transition_starts_at_zero() {
        let m = Metrics::default();
        let text = render(&m.families(&gauges(Status::NotReady, Reason::NoEvidence, None)));
        assert!(!text
            .lines()
            .any(|l| l.starts_with("spend_sentinel_evidence_age_seconds")));
        assert!(text.contains("# TYPE spend_sentinel_evidence_age_seconds gauge"));
        // 2 into ready (verified), 2 × 2 into degraded (budget_exhausted, refresh_indeterminate),
        // 2 × 8 into not_ready.
        let zero =
            |l: &&str| l.starts_with("spend_sentinel_transitions_total{") && l.ends_with(" 0");
        assert_eq!(text.lines().filter(zero).count(), 22);
        assert!(text.contains("{from=\"ready\",to=\"degraded\",reason=\"budget_exhausted\"} 0"));
        assert!(text.contains("{from=\"ready\",to=\"not_ready\",reason=\"held\"} 0"));
        assert!(!text.contains("to=\"not_ready\",reason=\"budget_exhausted\""));
        assert!(!text.contains("from=\"ready\",to=\"ready\""));
        assert!(!text.contains("to=\"ready\",reason=\"refresh_indeterminate\""));
        assert!(!text.contains("to=\"not_ready\",reason=\"verified\""));

        m.transitioned(
            Status::NotReady,
            &Readiness {
                status: Status::Ready,
                reason: Reason::Verified,
                evidence_age: None,
            },
        );
        let text = render(&m.families(&gauges(Status::Ready, Reason::Verified, None)));
        assert_eq!(
            text.matches("spend_sentinel_transitions_total{").count(),
            22
        );
        assert!(text.contains("spend_sentinel_transitions_total{from=\"not_ready\",to=\"ready\",reason=\"verified\"} 1"));
    }

    #[test]
    fn refusals_show_only_the_reasons_admission_can_refuse_with() {
        let text =
            render(&Metrics::default().families(&gauges(Status::Ready, Reason::Verified, None)));
        for family in [
            "spend_sentinel_refused_total",
            "spend_sentinel_refused_units_total",
        ] {
            assert_eq!(text.matches(&format!("{family}{{")).count(), 8, "{family}");
            assert!(!text.contains(&format!("{family}{{reason=\"verified\"}}")));
            assert!(!text.contains(&format!("{family}{{reason=\"refresh_indeterminate\"}}")));
        }
    }

    #[test]
    fn openmetrics_names_counters_without_total_gives_units_and_ends_with_eof() {
        let m = Metrics::default();
        m.refreshed(Verdict::Valid, Some(Duration::from_millis(30)));
        let families = m.families(&gauges(Status::Ready, Reason::Verified, None));
        let text = render_as(&families, Format::OpenMetrics);
        assert!(text.ends_with("\n# EOF\n"));
        for line in [
            "# TYPE spend_sentinel_refresh counter",
            "spend_sentinel_refresh_total{outcome=\"valid\"} 1",
            "# TYPE spend_sentinel_refresh_duration_seconds histogram",
            "# UNIT spend_sentinel_refresh_duration_seconds seconds",
            "# UNIT spend_sentinel_evidence_age_seconds seconds",
            "# TYPE spend_sentinel_build info",
            "# TYPE spend_sentinel_status gauge",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
        assert!(!text.contains("# TYPE spend_sentinel_refresh_total"));
        assert!(!text.contains("# UNIT spend_sentinel_node_budget_units"));
        assert_eq!(render_as(&families, Format::Text), render(&families));
    }

    #[test]
    fn open_holds_show_by_name_and_demand_refreshes_count() {
        let m = Metrics::default();
        let mut g = gauges(Status::NotReady, Reason::Held, None);
        let none = render(&m.families(&g));
        assert!(none.contains("# TYPE spend_sentinel_holds gauge"));
        assert!(
            !none.contains("spend_sentinel_holds{"),
            "no name, no series"
        );
        assert!(none
            .lines()
            .any(|l| l == "spend_sentinel_refresh_on_demand_total 0"));
        g.holds = vec![("cache".into(), 2), ("warming".into(), 0)];
        m.refreshed_on_demand();
        let text = render(&m.families(&g));
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines.contains(&"spend_sentinel_holds{name=\"cache\"} 2"),
            "{text}"
        );
        assert!(
            lines.contains(&"spend_sentinel_holds{name=\"warming\"} 0"),
            "{text}"
        );
        assert!(
            lines.contains(&"spend_sentinel_refresh_on_demand_total 1"),
            "{text}"
        );
    }

    #[test]
    fn indeterminate_refreshes_count_by_cause_every_cause_from_zero() {
        use RefreshCause::{InspectBadValue, Tls};
        let m = Metrics::default();
        let g = gauges(Status::Ready, Reason::Verified, None);
        // The family's samples without their common start: `tls"} 1`.
        let by_cause = |m: &Metrics| -> Vec<String> {
            let start = "spend_sentinel_refresh_indeterminate_total{cause=\"";
            let text = render(&m.families(&g));
            text.lines()
                .filter_map(|l| l.strip_prefix(start).map(str::to_owned))
                .collect()
        };
        // Every cause in `RefreshCause::ALL`'s order, at its count in `counted` or 0.
        let expected = |counted: &[(RefreshCause, u64)]| -> Vec<String> {
            let count = |c| counted.iter().find(|(k, _)| *k == c).map_or(0, |(_, n)| *n);
            RefreshCause::ALL
                .map(|c| format!("{}\"}} {}", c.as_str(), count(c)))
                .to_vec()
        };
        assert_eq!(by_cause(&m), expected(&[]));

        m.refreshed(Verdict::Valid, Some(Duration::from_millis(5)));
        m.refreshed(Verdict::Indeterminate(Tls), Some(Duration::from_millis(5)));
        m.refreshed(Verdict::BadValue(crate::rules::JsType::Boolean), None);
        m.refreshed(Verdict::BadValue(crate::rules::JsType::Object), None);
        assert_eq!(by_cause(&m), expected(&[(Tls, 1), (InspectBadValue, 2)]));
        assert_eq!(m.refreshes(Outcome::Indeterminate), 3);
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
