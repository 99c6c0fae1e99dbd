//! The metric families of a sentinel and of the named breakers, assembled at scrape time from the
//! counters and from gauges read off the sentinel state; their names, HELP texts and types come
//! from `catalog`. Every counter series that can ever move is shown from the first scrape, at 0,
//! so that `increase()` counts its first occurrence; combinations that cannot happen are never
//! shown.

use std::time::Duration;

use super::catalog::{self, FamilySpec, Kind, DURATION_BUCKETS};
use super::counters::{can_enter, Metrics};
use crate::numbers::u64_as_f64;
use crate::rules::breaker::{BreakerState, BreakerStats, CallResult};
use crate::rules::{Outcome, Readiness, Reason, RefreshCause, Status};

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
    pub kind: Kind,
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
}

pub struct Sample {
    /// The family name, or `_bucket` / `_sum` / `_count` of a histogram.
    pub name: String,
    pub labels: Vec<(&'static str, String)>,
    pub value: f64,
}

/// The label values of the refusal counters: the refusal reasons, in `Reason::ALL`'s order.
fn refusal_reasons() -> impl Iterator<Item = Reason> {
    Reason::ALL.into_iter().filter(|r| r.is_refusal())
}

impl Metrics {
    /// Every family of the sentinel (its fleet's and the breakers' aside), in the catalog's order.
    pub fn families(&self, gauges: &Gauges) -> Vec<Family> {
        let now = gauges.readiness.status;
        vec![
            by_label(
                &catalog::STATUS,
                Status::ALL.map(|s| (s.as_str(), flag(s == now))),
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
                Outcome::ALL.map(|o| (o.as_str(), u64_as_f64(self.refreshes(o)))),
            ),
            by_label(
                &catalog::INDETERMINATE,
                RefreshCause::ALL.map(|c| (c.as_str(), u64_as_f64(self.indeterminate(c)))),
            ),
            self.duration_family(),
            self.transitions_family(),
            by_label(
                &catalog::ADMITTED_UNITS,
                Status::ALL
                    .into_iter()
                    .filter(|s| s.admits())
                    .map(|s| (s.as_str(), self.admitted_units(s))),
            ),
            by_label(
                &catalog::REFUSED,
                refusal_reasons().map(|r| (r.as_str(), u64_as_f64(self.refused_count(r)))),
            ),
            by_label(
                &catalog::REFUSED_UNITS,
                refusal_reasons().map(|r| (r.as_str(), self.refused_units(r))),
            ),
            single(&catalog::RESERVED_UNITS, gauges.reserved_units),
            single(&catalog::REFUNDED_UNITS, self.refunded_units()),
            single(&catalog::OVERAGE_UNITS, self.overage_units()),
            single(&catalog::ON_DEMAND, u64_as_f64(self.demand_refreshes())),
            holds_family(&gauges.holds),
            Family::of(
                &catalog::BUILD,
                vec![sample(
                    catalog::BUILD.name,
                    vec![("version", env!("CARGO_PKG_VERSION").into())],
                    1.0,
                )],
            ),
        ]
    }

    fn duration_family(&self) -> Family {
        let name = catalog::DURATION.name;
        let durations = self.durations();
        let mut samples: Vec<Sample> = DURATION_BUCKETS
            .iter()
            .zip(durations.cumulative)
            .map(|(le, count)| {
                sample(
                    &format!("{name}_bucket"),
                    vec![("le", le.to_string())],
                    u64_as_f64(count),
                )
            })
            .collect();
        let count = u64_as_f64(durations.count);
        samples.push(sample(
            &format!("{name}_bucket"),
            vec![("le", "+Inf".into())],
            count,
        ));
        samples.push(sample(&format!("{name}_sum"), vec![], durations.sum));
        samples.push(sample(&format!("{name}_count"), vec![], count));
        Family::of(&catalog::DURATION, samples)
    }

    /// Every combination that can happen (from ≠ to, and a reason `to` can be entered with: 22
    /// series), at 0 until it does.
    fn transitions_family(&self) -> Family {
        let mut samples = Vec::new();
        for from in Status::ALL {
            for to in Status::ALL.into_iter().filter(|to| *to != from) {
                for reason in Reason::ALL.into_iter().filter(|r| can_enter(to, *r)) {
                    let labels = vec![
                        ("from", from.as_str().into()),
                        ("to", to.as_str().into()),
                        ("reason", reason.as_str().into()),
                    ];
                    let count = u64_as_f64(self.transitions(from, to, reason));
                    samples.push(sample(catalog::TRANSITIONS.name, labels, count));
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
            state.push(sample(catalog::BREAKER_STATE.name, labels, flag(s == *now)));
        }
        for result in CallResult::ALL {
            let labels = vec![("name", name.clone()), ("result", result.as_str().into())];
            calls.push(sample(
                catalog::BREAKER_CALLS.name,
                labels,
                u64_as_f64(result.count(stats)),
            ));
        }
    }
    vec![
        Family::of(&catalog::BREAKER_STATE, state),
        Family::of(&catalog::BREAKER_CALLS, calls),
    ]
}

fn sample(name: &str, labels: Vec<(&'static str, String)>, value: f64) -> Sample {
    Sample {
        name: name.to_owned(),
        labels,
        value,
    }
}

/// A family whose one label (the spec's) takes a closed set of values: one sample per
/// `(value, number)`.
pub fn by_label(
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

/// A one-hot or yes/no gauge's value: 1 when `on`, else 0.
pub fn flag(on: bool) -> f64 {
    f64::from(u8::from(on))
}

/// A family without labels: one sample.
pub fn single(spec: &FamilySpec, value: f64) -> Family {
    Family::of(spec, vec![sample(spec.name, vec![], value)])
}

#[cfg(test)]
pub(super) mod tests {
    use std::time::Duration;

    use super::*;
    use crate::metrics::render;
    use crate::rules::Verdict;

    /// The gauges of a sentinel in `status` for `reason` (node budget 100, 12.5 units exposed,
    /// 7.5 reserved, w = 5 s).
    pub(in crate::metrics) fn gauges(
        status: Status,
        reason: Reason,
        age: Option<Duration>,
    ) -> Gauges {
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
}
