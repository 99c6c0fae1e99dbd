//! The stale window a node budget gives, for a fixed budget and a fleet's alike: one rule, one
//! function ([`stale_window_seconds`]).

/// The longest stale window this library runs with: 7 days. A longer one is a mistake (a rate
/// per hour given as per second) and would put refresh deadlines past what timers can hold.
pub const MAX_STALE_WINDOW_SECONDS: f64 = 7.0 * 24.0 * 3600.0;

/// node budget / r: how long admitting at the full rate takes to spend the node budget, the
/// longest window the ceiling allows.
pub fn ceiling_seconds(node_budget_units: f64, max_units_per_second: f64) -> f64 {
    node_budget_units / max_units_per_second
}

/// w = min(node budget / r, `maxStaleSeconds`), seconds. `maxStaleSeconds` is a cap: below
/// node budget / r it shortens the window, at or above it it changes nothing (the ceiling
/// already sets a shorter window). So a cap that fits one fleet size, or one lease, never makes
/// another refused, and no cap can lengthen the window past what the ceiling allows
/// (docs/api.md, `budget.maxStaleSeconds`).
pub fn stale_window_seconds(
    node_budget_units: f64,
    max_units_per_second: f64,
    max_stale_seconds: Option<f64>,
) -> f64 {
    let ceiling = ceiling_seconds(node_budget_units, max_units_per_second);
    max_stale_seconds.map_or(ceiling, |cap| ceiling.min(cap))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_the_ceiling_lowered_by_the_cap_never_raised() {
        assert_eq!(stale_window_seconds(100.0, 20.0, None), 5.0);
        assert_eq!(stale_window_seconds(100.0, 20.0, Some(2.0)), 2.0);
        assert_eq!(stale_window_seconds(100.0, 20.0, Some(5.0)), 5.0);
        assert_eq!(stale_window_seconds(100.0, 20.0, Some(6.0)), 5.0);
        assert_eq!(stale_window_seconds(0.0, 20.0, Some(6.0)), 0.0);
    }
}
