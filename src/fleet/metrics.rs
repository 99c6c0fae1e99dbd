//! The fleet's metric families, read at scrape time from [`FleetStatus`] (their names and HELP
//! texts: `metrics::catalog`). Labels take closed sets only (modes, error kinds).

use crate::metrics::catalog;
use crate::metrics::{by_label, flag, single, Family};
use crate::numbers::u64_as_f64;
use crate::rules::fleet::{ErrorKind, FleetStatus, Mode};

pub fn families(status: &FleetStatus) -> Vec<Family> {
    vec![
        single(&catalog::FLEET_GRANT, status.grant_units),
        single(&catalog::FLEET_FLOOR, status.floor_units),
        single(
            &catalog::FLEET_LIVE_NODES,
            u64_as_f64(status.live_nodes.unwrap_or(0)),
        ),
        single(
            &catalog::FLEET_MAX_NODES,
            u64_as_f64(status.settings.max_nodes),
        ),
        single(
            &catalog::FLEET_BEYOND_MAX_NODES,
            flag(status.beyond_max_nodes),
        ),
        single(
            &catalog::FLEET_CHARGED_UNITS,
            status.charged_units.unwrap_or(0.0),
        ),
        single(&catalog::FLEET_GROWTH_HELD, flag(status.growth_held)),
        by_label(
            &catalog::FLEET_MODE,
            Mode::ALL
                .iter()
                .map(|mode| (mode.as_str(), flag(*mode == status.mode))),
        ),
        by_label(
            &catalog::FLEET_REDIS_ERRORS,
            ErrorKind::ALL
                .iter()
                .zip(status.errors)
                .map(|(kind, count)| (kind.as_str(), u64_as_f64(count))),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::metrics::catalog::{Scope, CATALOG};
    use crate::metrics::{breaker_families, Gauges, Metrics};
    use crate::rules::breaker::{BreakerState, BreakerStats};
    use crate::rules::fleet::Settings;
    use crate::rules::{Readiness, Reason, Status};

    /// Every family a sentinel with a fleet and a named breaker renders, in the exposition's order.
    fn rendered() -> Vec<(Scope, Family)> {
        let gauges = Gauges {
            readiness: Readiness {
                status: Status::Ready,
                reason: Reason::Verified,
                evidence_age: Some(Duration::from_secs(1)),
            },
            stale_window: Duration::from_secs(5),
            node_budget_units: 100.0,
            exposure_units: 1.0,
            reserved_units: 0.0,
            holds: vec![("cache".into(), 1)],
        };
        let settings = Settings {
            reserve: 0.5,
            max_nodes: 4,
            lease: Duration::from_secs(10),
            max_split: Duration::from_secs(12),
        };
        let status = FleetStatus {
            mode: Mode::Leased,
            grant_units: 10.0,
            floor_units: 5.0,
            node_budget_units: 15.0,
            lease_remaining: Duration::from_secs(3),
            live_nodes: Some(2),
            settings,
            configured: settings,
            beyond_max_nodes: false,
            charged_units: Some(0.0),
            growth_held: false,
            redis_error: None,
            errors: [0; ErrorKind::COUNT],
        };
        let breakers = [(
            "billing".to_owned(),
            BreakerState::Closed,
            BreakerStats::default(),
        )];
        let tag = |scope| move |f| (scope, f);
        Metrics::default()
            .families(&gauges)
            .into_iter()
            .map(tag(Scope::Sentinel))
            .chain(families(&status).into_iter().map(tag(Scope::Fleet)))
            .chain(
                breaker_families(&breakers)
                    .into_iter()
                    .map(tag(Scope::Process)),
            )
            .collect()
    }

    /// The catalog holds exactly the families the exposition renders (a new family without an
    /// entry fails here), in their order, each with its labels and where it comes from.
    #[test]
    fn every_rendered_family_has_its_catalog_entry() {
        let rendered = rendered();
        let names = |it: Vec<&str>| it.join("\n");
        assert_eq!(
            names(rendered.iter().map(|(_, f)| f.name).collect()),
            names(CATALOG.iter().map(|s| s.name).collect()),
            "the families rendered and those of metrics::catalog::CATALOG"
        );
        for ((scope, family), spec) in rendered.iter().zip(CATALOG) {
            assert_eq!(*scope, spec.scope, "{}", spec.name);
            assert_eq!((family.help, family.kind), (spec.help, spec.kind));
            assert!(
                !family.samples.is_empty(),
                "{}: samples to check",
                spec.name
            );
            for sample in &family.samples {
                let labels: Vec<&str> = sample
                    .labels
                    .iter()
                    .map(|(k, _)| *k)
                    .filter(|k| *k != "le")
                    .collect();
                assert_eq!(labels, spec.labels, "{}", sample.name);
            }
        }
    }
}
