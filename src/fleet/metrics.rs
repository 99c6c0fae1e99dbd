//! The fleet's metric families, read at scrape time from [`FleetStatus`]. Labels take closed
//! sets only (modes, error kinds).

use super::{ErrorKind, FleetStatus, Mode};
use crate::metrics::{sample, single, Family};

pub fn families(status: &FleetStatus) -> Vec<Family> {
    vec![
        single(
            "spend_sentinel_fleet_grant_units",
            "Units of the fleet's pool this node holds under a usable lease.",
            status.grant_units,
        ),
        single(
            "spend_sentinel_fleet_floor_units",
            "This node's static floor: b x reserve / maxNodes, usable without Redis.",
            status.floor_units,
        ),
        single(
            "spend_sentinel_fleet_live_nodes",
            "Live nodes holding a lease, as of the last answer from Redis.",
            status.live_nodes.unwrap_or(0) as f64,
        ),
        single(
            "spend_sentinel_fleet_charged_units",
            "The fleet's expired or released units waiting for a valid refresh, as of the last answer.",
            status.charged_units.unwrap_or(0.0),
        ),
        single(
            "spend_sentinel_fleet_growth_held",
            "1 while no grant may grow: a fresh fleet, or Redis lost its state, until lease + 2 s \
             have passed and a valid refresh settled the fleet.",
            f64::from(u8::from(status.growth_held)),
        ),
        Family {
            name: "spend_sentinel_fleet_mode",
            help: "1 for the current fleet mode (connecting, leased, floor), 0 for the others.",
            kind: "gauge",
            samples: Mode::ALL
                .iter()
                .map(|mode| {
                    let value = f64::from(u8::from(*mode == status.mode));
                    sample(
                        "spend_sentinel_fleet_mode",
                        vec![("mode", mode.as_str().into())],
                        value,
                    )
                })
                .collect(),
        },
        Family {
            name: "spend_sentinel_fleet_redis_errors_total",
            help: "Failed Redis calls by kind (connect, timeout, response, malformed).",
            kind: "counter",
            samples: ErrorKind::ALL
                .iter()
                .zip(status.errors)
                .map(|(kind, count)| {
                    sample(
                        "spend_sentinel_fleet_redis_errors_total",
                        vec![("kind", kind.as_str().into())],
                        count as f64,
                    )
                })
                .collect(),
        },
    ]
}
