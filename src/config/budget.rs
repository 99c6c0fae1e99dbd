//! `budget` and `refresh` options → where the node budget comes from and the refresh cadence.
//! The arithmetic and its messages are the rules' (`crate::rules::budget` and `crate::rules::cadence`).

use super::fleet::{parse_fleet, parse_fleet_shape, FleetConfig};
use crate::options::{error, ConfigError, Section};
use crate::rules::budget::fixed::{compute_budget, BudgetInput};
use crate::rules::budget::lease::{FleetBudget, FleetShape};
use crate::rules::cadence::{compute_cadence, CadenceInput};
use crate::rules::{BudgetSource, CadencePlan};

pub(super) fn parse_budget(
    top: &Section<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(BudgetSource, Option<FleetConfig>), ConfigError> {
    parse_budget_with(top, |fleet, input| {
        let config = parse_fleet(fleet, input, env)?;
        Ok((config.shape, config))
    })
}

/// The `window` calculator's budget: the same rules and errors, but of `budget.fleet` only its
/// shape (`maxNodes`, `reserve`, `leaseSeconds`): the calculator connects to no Redis.
pub(super) fn parse_budget_shape(top: &Section<'_>) -> Result<BudgetSource, ConfigError> {
    let (source, _) = parse_budget_with(top, |fleet, input| {
        Ok((parse_fleet_shape(fleet, input)?, ()))
    })?;
    Ok(source)
}

/// `budget`, with `fleet_options` reading `budget.fleet` (once b and r passed their own checks)
/// into the fleet's shape and whatever else the caller needs of it.
fn parse_budget_with<T>(
    top: &Section<'_>,
    fleet_options: impl FnOnce(&Section<'_>, &BudgetInput) -> Result<(FleetShape, T), ConfigError>,
) -> Result<(BudgetSource, Option<T>), ConfigError> {
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
    let (shape, fleet) = fleet_options(&fleet, &input)?;
    // The largest node budget is floor + pool: maxStaleSeconds must not pass its window, by the
    // rule of a fixed budget.
    let largest_share = (shape.floor_units() + shape.pool_units()) / shape.fleet_ceiling_units;
    checked(&BudgetInput {
        share: Some(largest_share.min(1.0)),
        ..input
    })?;
    Ok((BudgetSource::Fleet(FleetBudget::new(shape)), Some(fleet)))
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
    let cadence = compute_cadence(&input, budget.smallest_stale_window())
        .map_err(|e| error(e.option(), e.rule()))?;
    let plan = CadencePlan::from_input(&input, cadence);
    Ok(match budget {
        BudgetSource::Static(_) => plan,
        BudgetSource::Fleet(_) => plan.for_fleet(),
    })
}
