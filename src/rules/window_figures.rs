//! What the `spend-sentinel window` calculator shows for a budget: the node budget and its window,
//! a fleet's floor, pool and settled grant for a number of live nodes, and at each window the
//! default refresh cadence and the authority calls a second it makes. Composed from the types a
//! sentinel runs with ([`BudgetSource`], [`FleetBudget`], [`CadencePlan`]): no second copy of
//! their arithmetic.

use std::fmt;
use std::time::Duration;

use super::budget::lease::{FleetBudget, FleetShape, Lease};
use super::budget::window::ceiling_seconds;
use super::budget::BudgetSource;
use super::cadence::{Cadence, CadencePlan};
use super::fleet::growth_hold;
use super::JsNumber;

/// A node budget, its window, and the default refresh cadence there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowFigures {
    pub node_budget_units: f64,
    /// w = min(node budget / r, `maxStaleSeconds`).
    pub stale_window: Duration,
    /// node budget / r.
    pub ceiling_seconds: f64,
    /// The window the cadence plans with: this one, or with no budget at all (a fleet node
    /// without floor or grant) the equal split's.
    pub cadence_window: Duration,
    /// The default cadence for `cadence_window`.
    pub cadence: Cadence,
}

/// A fleet node's figures for a number of live nodes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FleetFigures {
    /// The options it was computed from (defaults filled in).
    pub shape: FleetShape,
    pub live_nodes: u32,
    pub floor_units: f64,
    pub pool_units: f64,
    /// r × maxStaleSeconds − floor; `None`: no limit (no `maxStaleSeconds`).
    pub want_units: Option<f64>,
    /// The settled grant ([`FleetShape::settled_grant`]).
    pub grant_units: f64,
    /// On the floor alone: a fresh fleet during its first hold, a node past its lease deadline.
    pub floor_only: WindowFigures,
    /// A fresh fleet's first grants come this long after its first Redis call, at the earliest.
    pub first_grants_after: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    /// This node's budget: a fixed one, or a fleet node's floor plus its settled grant.
    pub node: WindowFigures,
    pub fleet: Option<FleetFigures>,
}

/// A number of live nodes the calculator cannot work with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LiveNodesError {
    /// Given for a fixed budget, whose share does not depend on who is alive.
    NotAFleet,
    /// Not a whole number from 1 to `maxNodes`: nodes beyond it have no floor of their own, a
    /// state the fleet reports as a fault rather than one to plan for.
    OutOfRange { value: f64, max_nodes: u32 },
}

impl fmt::Display for LiveNodesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LiveNodesError::NotAFleet => f.write_str(
                "liveNodes: only for a fleet budget (budget.fleet.maxNodes): a fixed share \
                 does not depend on how many nodes are alive",
            ),
            LiveNodesError::OutOfRange { value, max_nodes } => write!(
                f,
                "liveNodes: must be a whole number from 1 to budget.fleet.maxNodes = {max_nodes} \
                 (got {}); nodes beyond maxNodes have no floor of their own",
                JsNumber(*value)
            ),
        }
    }
}

impl std::error::Error for LiveNodesError {}

/// The figures of `budget` with default refresh options; for a fleet, with `live_nodes` alive
/// (all `maxNodes` of them when not given: the smallest grant).
pub fn figures(budget: &BudgetSource, live_nodes: Option<f64>) -> Result<Figures, LiveNodesError> {
    match budget {
        BudgetSource::Static(fixed) => match live_nodes {
            Some(_) => Err(LiveNodesError::NotAFleet),
            None => Ok(Figures {
                node: window_figures(budget, fixed.max_units_per_second, CadencePlan::Scaled),
                fleet: None,
            }),
        },
        BudgetSource::Fleet(fleet) => {
            let live_nodes = whole_live_nodes(live_nodes, fleet.shape.max_nodes)?;
            Ok(fleet_figures(&fleet.shape, live_nodes))
        }
    }
}

fn whole_live_nodes(value: Option<f64>, max_nodes: u32) -> Result<u32, LiveNodesError> {
    let Some(value) = value else {
        return Ok(max_nodes);
    };
    if value.fract() == 0.0 && value >= 1.0 && value <= f64::from(max_nodes) {
        // In range: a whole number from 1 to a u32.
        Ok(crate::numbers::saturating_u32(value))
    } else {
        Err(LiveNodesError::OutOfRange { value, max_nodes })
    }
}

fn fleet_figures(shape: &FleetShape, live_nodes: u32) -> Figures {
    let plan = CadencePlan::Scaled.for_fleet();
    let r = shape.max_units_per_second;
    let on_floor = FleetBudget::new(*shape);
    let grant_units = shape.settled_grant(live_nodes);
    let mut leased = on_floor;
    leased.set_lease(Some(Lease {
        grant_units,
        deadline: Duration::MAX,
    }));
    Figures {
        node: window_figures(&BudgetSource::Fleet(leased), r, plan),
        fleet: Some(FleetFigures {
            shape: *shape,
            live_nodes,
            floor_units: on_floor.floor_units(),
            pool_units: shape.pool_units(),
            want_units: shape.want_beyond(on_floor.floor_units()),
            grant_units,
            floor_only: window_figures(&BudgetSource::Fleet(on_floor), r, plan),
            first_grants_after: growth_hold(shape.lease, shape.max_split),
        }),
    }
}

fn window_figures(budget: &BudgetSource, r: f64, plan: CadencePlan) -> WindowFigures {
    let now = Duration::ZERO;
    let (node_budget_units, stale_window) = budget.at(now);
    let cadence_window = budget.cadence_basis_at(now);
    WindowFigures {
        node_budget_units,
        stale_window,
        ceiling_seconds: ceiling_seconds(node_budget_units, r),
        cadence_window,
        cadence: plan.at(cadence_window),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::budget::fixed::seed_budget;
    use crate::rules::budget::lease::example_shape;

    fn ms(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    #[test]
    fn the_seed_budget_refreshes_every_1_5_to_2_5_s_half_a_call_a_second() {
        let figures = figures(&seed_budget().into(), None).unwrap();
        let node = figures.node;
        assert_eq!(
            (node.node_budget_units, node.stale_window),
            (100.0, ms(5000))
        );
        assert_eq!(node.ceiling_seconds, 5.0);
        assert_eq!(
            (node.cadence.min_interval, node.cadence.max_interval),
            (ms(1500), ms(2500))
        );
        assert_eq!(node.cadence.calls_per_second(Duration::ZERO), 0.5);
        assert_eq!(figures.fleet, None);
        assert_eq!(
            super::figures(&seed_budget().into(), Some(2.0)),
            Err(LiveNodesError::NotAFleet)
        );
    }

    #[test]
    fn a_fleet_shows_floor_pool_and_the_settled_grant_and_both_windows() {
        // b 200, r 20, 4 nodes, reserve 0.25: floor 12.5 (0.625 s), pool 150.
        let shape = example_shape();
        let figures = figures(&BudgetSource::Fleet(FleetBudget::new(shape)), Some(3.0)).unwrap();
        let fleet = figures.fleet.unwrap();
        assert_eq!((fleet.floor_units, fleet.pool_units), (12.5, 150.0));
        assert_eq!((fleet.want_units, fleet.grant_units), (None, 50.0));
        assert_eq!(figures.node.node_budget_units, 62.5);
        assert_eq!(figures.node.stale_window, ms(3125));
        assert_eq!(fleet.floor_only.stale_window, ms(625));
        assert_eq!(fleet.floor_only.cadence.mean_pause(), ms(250));
        assert_eq!(
            fleet.floor_only.cadence.calls_per_second(Duration::ZERO),
            4.0
        );
        assert_eq!(
            fleet.first_grants_after,
            Duration::from_secs_f64(30.9 + 2.0)
        );
        let all = super::figures(&BudgetSource::Fleet(FleetBudget::new(shape)), None).unwrap();
        assert_eq!(
            all.fleet.unwrap().live_nodes,
            4,
            "all maxNodes alive by default"
        );
        assert_eq!(all.fleet.unwrap().grant_units, 37.5);
    }

    #[test]
    fn without_a_floor_the_floor_only_cadence_is_the_equal_splits() {
        let shape = FleetShape {
            reserve: 0.0,
            ..example_shape()
        };
        let figures = figures(&BudgetSource::Fleet(FleetBudget::new(shape)), None).unwrap();
        let floor_only = figures.fleet.unwrap().floor_only;
        assert_eq!(
            (floor_only.node_budget_units, floor_only.stale_window),
            (0.0, Duration::ZERO)
        );
        assert_eq!(floor_only.cadence_window, ms(2500), "(200 / 4) / 20 s");
        assert_eq!(floor_only.cadence.min_interval, ms(750));
    }

    #[test]
    fn live_nodes_must_be_whole_and_within_max_nodes() {
        let fleet = BudgetSource::Fleet(FleetBudget::new(example_shape()));
        for bad in [0.0, 1.5, 5.0, -1.0, f64::NAN, f64::INFINITY] {
            let err = figures(&fleet, Some(bad)).unwrap_err();
            assert!(
                matches!(err, LiveNodesError::OutOfRange { max_nodes: 4, .. }),
                "{bad}"
            );
            assert!(
                err.to_string().starts_with(
                    "liveNodes: must be a whole number from 1 to budget.fleet.maxNodes = 4 (got "
                ),
                "{err}"
            );
        }
        assert!(figures(&fleet, Some(4.0)).is_ok());
        assert!(figures(&fleet, Some(1.0)).is_ok());
    }
}
