//! `computeBudget(budget)`: the budget math (README), through the very code `new Sentinel`
//! validates its `budget` with; and `windowFigures(budget, liveNodes)`, internal, what the
//! `spend-sentinel window` calculator prints (a fleet's figures and the authority call rate).

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::errors::{self, Kind};
use super::options::to_raw;
use crate::config::{parse_budget_options, parse_calculator_budget};
use crate::rules::cadence::shortest_calm_default_window;
use crate::rules::window_figures::{self as figures, Figures};

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

/// A node budget, its window, and the default refresh cadence there.
#[napi(object)]
pub struct WindowFigures {
    pub node_budget_units: f64,
    pub stale_window_seconds: f64,
    /// node budget / r.
    pub ceiling_seconds: f64,
    /// The window the default cadence plans with: this one, or with no budget at all (a fleet
    /// node without floor or grant) the equal split's.
    pub cadence_window_seconds: f64,
    /// The default refresh pauses for that window, uniform in [min, max].
    pub min_pause_ms: f64,
    pub max_pause_ms: f64,
    /// Authority calls a second with an authority that answers at once: 1 / mean pause.
    pub calls_per_second: f64,
}

#[napi(object)]
pub struct FleetFigures {
    pub live_nodes: u32,
    pub max_nodes: u32,
    pub reserve: f64,
    pub lease_seconds: f64,
    pub floor_units: f64,
    pub pool_units: f64,
    /// r × maxStaleSeconds − floor; `null` without `maxStaleSeconds` (no limit).
    pub want_units: Either<f64, Null>,
    pub grant_units: f64,
    /// On the floor alone (a fresh fleet's first hold, a lapsed lease).
    pub floor_only: WindowFigures,
    /// leaseSeconds × 1.03 + 2 s: the earliest a fresh fleet's first grants come.
    pub first_grants_after_seconds: f64,
}

#[napi(object)]
pub struct WindowFiguresAnswer {
    /// This node's: a fixed budget's, or a fleet node's with its settled grant.
    pub node: WindowFigures,
    pub fleet: Either<FleetFigures, Null>,
    /// The shortest window whose default cadence asks the authority at most once a second.
    pub calm_window_seconds: f64,
}

/// Internal (the `window` calculator): the figures of `budget` with default refresh options; for
/// `budget.fleet` (its shape only: no Redis URL or name needed), with `liveNodes` alive (default
/// `maxNodes`). Bad options throw the `ERR_SPEND_SENTINEL_CONFIG` error `new Sentinel` would.
#[napi(ts_args_type = "budget: import('./js/option-types').BudgetOptions, liveNodes?: number")]
pub fn window_figures(
    env: Env,
    budget: Unknown,
    live_nodes: Option<f64>,
) -> Result<WindowFiguresAnswer> {
    let throw = |message: &str| errors::throw(env.raw(), Kind::Error, errors::CONFIG, message);
    let source = parse_calculator_budget(&to_raw(&budget)?).map_err(|e| throw(&e.to_string()))?;
    let Figures { node, fleet } =
        figures::figures(&source, live_nodes).map_err(|e| throw(&e.to_string()))?;
    Ok(WindowFiguresAnswer {
        node: node.into(),
        fleet: match fleet {
            None => Either::B(Null),
            Some(fleet) => Either::A(FleetFigures {
                live_nodes: fleet.live_nodes,
                max_nodes: fleet.shape.max_nodes,
                reserve: fleet.shape.reserve,
                lease_seconds: fleet.shape.lease.as_secs_f64(),
                floor_units: fleet.floor_units,
                pool_units: fleet.pool_units,
                want_units: fleet.want_units.map_or(Either::B(Null), Either::A),
                grant_units: fleet.grant_units,
                floor_only: fleet.floor_only.into(),
                first_grants_after_seconds: fleet.first_grants_after.as_secs_f64(),
            }),
        },
        calm_window_seconds: shortest_calm_default_window().as_secs_f64(),
    })
}

impl From<figures::WindowFigures> for WindowFigures {
    fn from(figures: figures::WindowFigures) -> Self {
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
        WindowFigures {
            node_budget_units: figures.node_budget_units,
            stale_window_seconds: figures.stale_window.as_secs_f64(),
            ceiling_seconds: figures.ceiling_seconds,
            cadence_window_seconds: figures.cadence_window.as_secs_f64(),
            min_pause_ms: ms(figures.cadence.min_interval),
            max_pause_ms: ms(figures.cadence.max_interval),
            calls_per_second: figures.cadence.calls_per_second(std::time::Duration::ZERO),
        }
    }
}
