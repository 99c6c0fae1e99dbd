//! The fleet's metric families, read at scrape time from [`FleetStatus`]. Labels take closed
//! sets only (modes, error kinds).

use crate::metrics::{by_label, single, Family};
use crate::numbers::u64_as_f64;
use crate::rules::fleet::{ErrorKind, FleetStatus, Mode};

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
            u64_as_f64(status.live_nodes.unwrap_or(0)),
        ),
        single(
            "spend_sentinel_fleet_max_nodes",
            "The fleet's maxNodes (adopted from Redis): the number of static floors.",
            u64_as_f64(status.settings.max_nodes),
        ),
        single(
            "spend_sentinel_fleet_beyond_max_nodes",
            "1 when every static floor was taken as this node joined: it has no floor, its whole \
             budget is leased.",
            f64::from(u8::from(status.beyond_max_nodes)),
        ),
        single(
            "spend_sentinel_fleet_charged_units",
            "The fleet's expired or released units waiting for a valid refresh, as of the last answer.",
            status.charged_units.unwrap_or(0.0),
        ),
        single(
            "spend_sentinel_fleet_growth_held",
            "1 while no grant may grow: a fresh fleet, or Redis lost its state, until lease x 1.03 \
             + 2 s have passed and a valid refresh settled the fleet.",
            f64::from(u8::from(status.growth_held)),
        ),
        by_label(
            "spend_sentinel_fleet_mode",
            "1 for the current fleet mode (connecting, leased, floor), 0 for the others.",
            "gauge",
            "mode",
            Mode::ALL
                .iter()
                .map(|mode| (mode.as_str(), f64::from(u8::from(*mode == status.mode)))),
        ),
        by_label(
            "spend_sentinel_fleet_redis_errors_total",
            "Failed Redis calls by kind (connect, timeout, tls, auth, noperm, response, malformed).",
            "counter",
            "kind",
            ErrorKind::ALL
                .iter()
                .zip(status.errors)
                .map(|(kind, count)| (kind.as_str(), u64_as_f64(count))),
        ),
    ]
}
