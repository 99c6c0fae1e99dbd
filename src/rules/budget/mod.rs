//! The budget and its stale window, in one place. Where a node's budget comes from
//! ([`BudgetSource`]): fixed at construction (`budget.nodes` / `budget.share`: [`fixed`]), or a
//! fleet's floor plus a leased grant that changes while the node runs ([`lease`]). Both turn a
//! node budget into a window by the one rule of [`window`]. The state asks this at every read,
//! so readiness and admission always see the budget of the moment. What the `window` calculator
//! shows of a budget is composed from these (and the cadence, and the fleet's growth hold) in
//! `rules::window_figures`, outside this folder: the fleet's rules use the budget's.

pub mod fixed;
pub mod lease;
pub mod window;

use std::time::Duration;

use fixed::Budget;
use lease::{FleetBudget, Lease};

#[derive(Debug, Clone, PartialEq)]
pub enum BudgetSource {
    Static(Budget),
    Fleet(FleetBudget),
}

impl From<Budget> for BudgetSource {
    fn from(budget: Budget) -> Self {
        BudgetSource::Static(budget)
    }
}

impl BudgetSource {
    /// The units this node may admit on unverified evidence now, and w for them (min(node
    /// budget / r, `maxStaleSeconds`)): read together, once per admission.
    pub fn at(&self, now: Duration) -> (f64, Duration) {
        match self {
            BudgetSource::Static(budget) => (budget.node_budget_units, budget.stale_window),
            BudgetSource::Fleet(fleet) => fleet.at(now),
        }
    }

    /// The units this node may admit on unverified evidence, now.
    pub fn node_budget_at(&self, now: Duration) -> f64 {
        self.at(now).0
    }

    /// w, now: min(node budget / r, `maxStaleSeconds`).
    pub fn stale_window_at(&self, now: Duration) -> Duration {
        self.at(now).1
    }

    /// The window the default refresh cadence scales with, now.
    pub fn cadence_basis_at(&self, now: Duration) -> Duration {
        match self {
            BudgetSource::Static(budget) => budget.stale_window,
            BudgetSource::Fleet(fleet) => fleet.cadence_basis_at(now),
        }
    }

    /// The smallest window the node can run with: a fixed budget's window; a fleet node's floor
    /// window, or the equal split's without a floor. Explicit refresh options must fit it, and
    /// the default cadence asks the authority most often there.
    pub fn smallest_stale_window(&self) -> Duration {
        match self {
            BudgetSource::Static(budget) => budget.stale_window,
            BudgetSource::Fleet(fleet) => fleet.shape.smallest_stale_window(),
        }
    }

    /// The next moment the budget changes by time alone (a lease deadline).
    pub fn next_change_after(&self, now: Duration) -> Option<Duration> {
        match self {
            BudgetSource::Static(_) => None,
            BudgetSource::Fleet(fleet) => fleet.next_change_after(now),
        }
    }

    pub fn fleet(&self) -> Option<&FleetBudget> {
        match self {
            BudgetSource::Static(_) => None,
            BudgetSource::Fleet(fleet) => Some(fleet),
        }
    }

    /// A new lease (or none) from the fleet; a static budget ignores it.
    pub fn set_lease(&mut self, lease: Option<Lease>) {
        if let BudgetSource::Fleet(fleet) = self {
            fleet.set_lease(lease);
        }
    }

    /// A new static floor from the fleet; a static budget ignores it.
    pub fn set_floor(&mut self, floor_units: f64) {
        if let BudgetSource::Fleet(fleet) = self {
            fleet.set_floor(floor_units);
        }
    }
}
