//! `budget` and `refresh` options → where the node budget comes from and the refresh cadence.
//! The arithmetic and its messages are the rules' (`crate::rules::budget` and `crate::rules::cadence`).

use super::fleet::{parse_fleet, FleetConfig};
use crate::options::{error, ConfigError, Section};
use crate::rules::budget::fixed::{compute_budget, BudgetInput};
use crate::rules::budget::lease::FleetBudget;
use crate::rules::cadence::{compute_cadence, CadenceInput};
use crate::rules::{BudgetSource, CadencePlan};

pub(super) fn parse_budget(
    top: &Section<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(BudgetSource, Option<FleetConfig>), ConfigError> {
    let budget = top.section("budget")?.ok_or_else(|| {
        error(
            "budget",
            "is required (unverifiedUnits and maxUnitsPerSecond)",
        )
    })?;
    let input = BudgetInput {
        fleet_ceiling_units: budget.required_number("unverifiedUnits")?,
        max_units_per_second: budget.required_number("maxUnitsPerSecond")?,
        nodes: budget.number("nodes")?,
        share: budget.number("share")?,
        max_stale_seconds: budget.number("maxStaleSeconds")?,
    };
    let checked =
        |input: &BudgetInput| compute_budget(input).map_err(|e| error(e.option(), e.rule()));
    let Some(fleet) = budget.section("fleet")? else {
        return Ok((BudgetSource::Static(checked(&input)?), None));
    };
    for key in ["nodes", "share"] {
        if budget.has(key) {
            return Err(error(
                &budget.path_of(key),
                "cannot be combined with budget.fleet: the fleet leases each node's share",
            ));
        }
    }
    // b and r first (their own errors), then the fleet options.
    checked(&input)?;
    let fleet = parse_fleet(
        &fleet,
        input.fleet_ceiling_units,
        input.max_units_per_second,
        input.max_stale_seconds,
        env,
    )?;
    // The largest node budget is floor + pool: maxStaleSeconds must not pass its window, by the
    // rule of a fixed budget.
    let shape = &fleet.shape;
    let largest_share = (shape.floor_units() + shape.pool_units()) / shape.fleet_ceiling_units;
    checked(&BudgetInput {
        share: Some(largest_share.min(1.0)),
        ..input
    })?;
    Ok((
        BudgetSource::Fleet(FleetBudget::new(fleet.shape)),
        Some(fleet),
    ))
}

/// Explicit refresh options are checked against the smallest window the node can run with (a
/// fleet node's floor, or the equal split's without a floor); the defaults scale with the window.
pub(super) fn parse_cadence(
    refresh: Option<&Section<'_>>,
    budget: &BudgetSource,
) -> Result<CadencePlan, ConfigError> {
    let input = match refresh {
        None => CadenceInput::default(),
        Some(refresh) => CadenceInput {
            min_interval_ms: refresh.number("minIntervalMs")?,
            max_interval_ms: refresh.number("maxIntervalMs")?,
            timeout_ms: refresh.number("timeoutMs")?,
        },
    };
    let smallest_stale_window = match budget {
        BudgetSource::Static(budget) => budget.stale_window,
        BudgetSource::Fleet(fleet) => fleet.shape.smallest_stale_window(),
    };
    let cadence =
        compute_cadence(&input, smallest_stale_window).map_err(|e| error(e.option(), e.rule()))?;
    let plan = CadencePlan::from_input(&input, cadence);
    Ok(match budget {
        BudgetSource::Static(_) => plan,
        BudgetSource::Fleet(_) => plan.for_fleet(),
    })
}
