//! `computeBudget(budget)`: the budget math (README) for the `spend-sentinel window`
//! calculator, through the very code `new Sentinel` validates its `budget` with.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::errors::{self, Kind};
use super::options::to_raw;
use crate::config::parse_budget_options;

#[napi(object)]
pub struct BudgetAnswer {
    /// b × share.
    pub node_budget_units: f64,
    /// w = min(node budget / r, `maxStaleSeconds`).
    pub stale_window_seconds: f64,
    /// node budget / r: the longest window the ceiling allows.
    pub ceiling_seconds: f64,
}

/// The node budget and stale window `new Sentinel({ budget })` would use; throws the same
/// `ERR_SPEND_SENTINEL_CONFIG` error it would.
#[napi(ts_args_type = "budget: import('./js/option-types').BudgetOptions")]
pub fn compute_budget(env: Env, budget: Unknown) -> Result<BudgetAnswer> {
    let raw = to_raw(&budget)?;
    let parsed = parse_budget_options(&raw)
        .map_err(|e| errors::throw(env.raw(), Kind::Error, errors::CONFIG, &e.to_string()))?;
    Ok(BudgetAnswer {
        node_budget_units: parsed.node_budget_units,
        stale_window_seconds: parsed.stale_window.as_secs_f64(),
        ceiling_seconds: parsed.ceiling_seconds(),
    })
}
