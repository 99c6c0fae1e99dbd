//! The fleet budget's local rules: a node's budget is a static floor plus a grant of the
//! fleet's pool held under a lease. Redis decides grants (see `crate::fleet`); these rules say
//! how much of a grant a node may use, until when, and how much it asks for.

use std::time::Duration;

use super::window::{stale_window_seconds, MAX_STALE_WINDOW_SECONDS};

/// The fleet's shape, fixed at construction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FleetShape {
    /// b: the fleet-wide ceiling.
    pub fleet_ceiling_units: f64,
    /// r: this node's maximum admission rate.
    pub max_units_per_second: f64,
    /// The most nodes alive at once (surge and terminating pods included).
    pub max_nodes: u32,
    /// The part of b kept back as static floors, 0 ≤ reserve < 1.
    pub reserve: f64,
    /// How long a grant lives in Redis without renewal.
    pub lease: Duration,
    /// The longest split brain the fleet is built to ride out: two Redis primaries taking the
    /// fleet's writes at once, after a failover that did not fence the old one. Every lease
    /// ends, and every hold lasts, this much longer (see `rules::fleet::growth_hold`).
    pub max_split: Duration,
    /// Optional cap on the stale window (see [`stale_window_seconds`]).
    pub max_stale: Option<Duration>,
}

impl FleetShape {
    /// floor = b × reserve / maxNodes: usable without Redis, by every node alive.
    pub fn floor_units(&self) -> f64 {
        self.fleet_ceiling_units * self.reserve / f64::from(self.max_nodes)
    }

    /// pool = b × (1 − reserve): what the nodes lease.
    pub fn pool_units(&self) -> f64 {
        self.fleet_ceiling_units * (1.0 - self.reserve)
    }

    /// want = r × maxStaleSeconds − floor, for the node's floor of the moment: more would not
    /// lengthen the window. `None`: no limit.
    pub fn want_beyond(&self, floor_units: f64) -> Option<f64> {
        self.max_stale
            .map(|stale| (self.max_units_per_second * stale.as_secs_f64() - floor_units).max(0.0))
    }

    /// The grant each of `live_nodes` nodes configured alike holds once renewals have settled
    /// (no charges outstanding, every node within `maxNodes` so each has its floor): the max-min
    /// fair split of the pool (`renew.lua`) when every node wants the same, min(want, pool /
    /// live nodes). What the `window` calculator shows for a fleet.
    pub fn settled_grant(&self, live_nodes: u32) -> f64 {
        let equal_split = self.pool_units() / f64::from(live_nodes.max(1));
        self.want_beyond(self.floor_units())
            .map_or(equal_split, |want| want.min(equal_split))
    }

    /// The window a node budget gives: min(units / r, `maxStaleSeconds`), the rule of a fixed
    /// budget ([`stale_window_seconds`]), held to the longest supported window (the options
    /// were checked against it for the largest node budget; this keeps the `Duration` sound).
    pub fn stale_window_for(&self, node_budget_units: f64) -> Duration {
        let cap = self.max_stale.map(|cap| cap.as_secs_f64());
        let seconds = stale_window_seconds(node_budget_units, self.max_units_per_second, cap);
        Duration::from_secs_f64(seconds.clamp(0.0, MAX_STALE_WINDOW_SECONDS))
    }

    /// The window of an equal split, (b / maxNodes) / r: what the cadence assumes while the
    /// node budget is 0 (reserve 0 and no grant yet).
    pub fn equal_split_stale_window(&self) -> Duration {
        self.stale_window_for(self.fleet_ceiling_units / f64::from(self.max_nodes))
    }

    /// The smallest window the node can run with: the floor's, or the equal split's when there
    /// is no floor. Explicit refresh options must fit it.
    pub fn smallest_stale_window(&self) -> Duration {
        if self.reserve > 0.0 {
            self.stale_window_for(self.floor_units())
        } else {
            self.equal_split_stale_window()
        }
    }
}

/// The local lease deadline of a grant obtained by a request sent at `sent_at` under leases of
/// `lease`: send + lease × 0.97 − 1 s on the holder's monotonic clock. A lease ends in Redis only
/// once some node measured a whole lease on its own clock since an answer that followed the
/// write; with every clock within ±1 % of real time that is at least lease / 1.01 after the
/// send, and this deadline at most (lease × 0.97 − 1 s) / 0.99 after it: always earlier.
// Keeps T (docs/fleet-protocol.md, Invariants): the deadline comes before any sweep can end it.
pub fn lease_deadline(sent_at: Duration, lease: Duration) -> Duration {
    (sent_at + lease.mul_f64(0.97)).saturating_sub(Duration::from_secs(1))
}

/// A grant and the moment it stops being usable.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lease {
    pub grant_units: f64,
    pub deadline: Duration,
}

impl Lease {
    /// The grant while the deadline is ahead, 0 from the deadline on.
    pub fn usable_at(&self, now: Duration) -> f64 {
        if now < self.deadline {
            self.grant_units
        } else {
            0.0
        }
    }
}

/// A node's budget under a fleet: floor + the usable grant, re-evaluated at every read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FleetBudget {
    pub shape: FleetShape,
    lease: Option<Lease>,
    /// `shape.floor_units()` and its window, computed once.
    floor: (f64, Duration),
    /// floor + the lease's grant and its window, computed when the lease is set: every admission
    /// reads one of these two pairs, never the window arithmetic.
    leased: (f64, Duration),
}

impl FleetBudget {
    pub fn new(shape: FleetShape) -> Self {
        let floor_units = shape.floor_units();
        let floor = (floor_units, shape.stale_window_for(floor_units));
        FleetBudget {
            shape,
            lease: None,
            floor,
            leased: floor,
        }
    }

    pub fn lease(&self) -> Option<Lease> {
        self.lease
    }

    /// The static floor of the moment: the node's own until Redis answers, then the fleet's
    /// (0 for a node beyond `maxNodes`).
    pub fn floor_units(&self) -> f64 {
        self.floor.0
    }

    pub fn set_lease(&mut self, lease: Option<Lease>) {
        self.lease = lease;
        self.leased = match lease {
            Some(lease) => {
                let units = self.floor.0 + lease.grant_units;
                (units, self.shape.stale_window_for(units))
            }
            None => self.floor,
        };
    }

    /// A new static floor (what the fleet's answer says this node may use without Redis).
    pub fn set_floor(&mut self, floor_units: f64) {
        self.floor = (floor_units, self.shape.stale_window_for(floor_units));
        self.set_lease(self.lease);
    }

    /// The node budget and its window at `now`: floor + grant before the lease deadline, the
    /// floor alone from it on.
    pub fn at(&self, now: Duration) -> (f64, Duration) {
        match self.lease {
            Some(lease) if now < lease.deadline => self.leased,
            _ => self.floor,
        }
    }

    /// The floor's window: what w falls to at the lease deadline.
    pub fn floor_window(&self) -> Duration {
        self.floor.1
    }

    pub fn node_budget_at(&self, now: Duration) -> f64 {
        self.at(now).0
    }

    pub fn stale_window_at(&self, now: Duration) -> Duration {
        self.at(now).1
    }

    /// The window the refresh cadence plans with: the current one, or the equal split's while
    /// the node budget is 0 (so a node waiting for its first grant does not refresh in a loop).
    pub fn cadence_basis_at(&self, now: Duration) -> Duration {
        if self.node_budget_at(now) > 0.0 {
            self.stale_window_at(now)
        } else {
            self.shape.equal_split_stale_window()
        }
    }

    /// The lease deadline, if still ahead: the budget shrinks to the floor then.
    pub fn next_change_after(&self, now: Duration) -> Option<Duration> {
        self.lease
            .map(|lease| lease.deadline)
            .filter(|deadline| *deadline > now)
    }

    /// When the next refresh must be sent so that the evidence is young enough for the floor's
    /// window once the lease deadline takes the grant away (a lapse with a healthy authority is
    /// then no `not_ready` blip): half the floor's window before the deadline. `None` when no
    /// deadline is ahead, there is no floor, or the evidence (sent at `evidence_at`) will still
    /// be young enough at the deadline.
    pub fn refresh_before_lapse(
        &self,
        now: Duration,
        evidence_at: Option<Duration>,
    ) -> Option<Duration> {
        let deadline = self.next_change_after(now)?;
        let floor_window = self.floor_window();
        if floor_window.is_zero() {
            return None;
        }
        let young_enough = deadline.saturating_sub(floor_window);
        if evidence_at.is_some_and(|at| at > young_enough) {
            return None;
        }
        Some(deadline.saturating_sub(floor_window / 2))
    }
}

/// b = 200, r = 20, 4 nodes, reserve 0.25 (floor 12.5, pool 150), 30 s leases: for tests.
#[cfg(test)]
pub fn example_shape() -> FleetShape {
    FleetShape {
        fleet_ceiling_units: 200.0,
        max_units_per_second: 20.0,
        max_nodes: 4,
        reserve: 0.25,
        lease: Duration::from_secs(30),
        max_split: Duration::ZERO,
        max_stale: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape() -> FleetShape {
        example_shape()
    }

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn floor_and_pool_split_b_by_the_reserve() {
        assert_eq!(shape().floor_units(), 12.5);
        assert_eq!(shape().pool_units(), 150.0);
    }

    #[test]
    fn the_lease_deadline_comes_before_redis_can_expire_the_lease() {
        let deadline = lease_deadline(secs(100.0), shape().lease);
        assert_eq!(deadline, secs(100.0 + 29.1 - 1.0));
        assert!(deadline < secs(130.0));
    }

    #[test]
    fn a_grant_is_usable_until_its_deadline_only() {
        let mut budget = FleetBudget::new(shape());
        assert_eq!(budget.node_budget_at(secs(0.0)), 12.5);
        budget.set_lease(Some(Lease {
            grant_units: 50.0,
            deadline: secs(10.0),
        }));
        assert_eq!(budget.node_budget_at(secs(9.999)), 62.5);
        assert_eq!(budget.stale_window_at(secs(9.999)), secs(62.5 / 20.0));
        assert_eq!(budget.node_budget_at(secs(10.0)), 12.5);
        assert_eq!(budget.stale_window_at(secs(10.0)), secs(12.5 / 20.0));
        assert_eq!(budget.next_change_after(secs(9.0)), Some(secs(10.0)));
        assert_eq!(budget.next_change_after(secs(10.0)), None);
    }

    #[test]
    fn want_is_what_max_stale_can_use_beyond_the_floor() {
        let capped = FleetShape {
            max_stale: Some(secs(2.0)),
            ..shape()
        };
        assert_eq!(capped.want_beyond(12.5), Some(40.0 - 12.5));
        assert_eq!(shape().want_beyond(12.5), None);
        assert_eq!(
            capped.stale_window_for(500.0),
            secs(2.0),
            "maxStaleSeconds caps the window"
        );
        assert_eq!(
            capped.stale_window_for(20.0),
            secs(1.0),
            "a cap above units / r changes nothing, as with a fixed budget"
        );
    }

    #[test]
    fn a_settled_grant_is_what_the_node_wants_or_an_equal_split_whichever_is_less() {
        // floor 12.5, pool 150 at r = 20
        assert_eq!(
            shape().settled_grant(4),
            37.5,
            "no maxStaleSeconds: all it can get"
        );
        assert_eq!(shape().settled_grant(1), 150.0);
        let capped = FleetShape {
            max_nodes: 8,
            max_stale: Some(secs(2.0)),
            ..shape()
        }; // floor 6.25: wants 20 × 2 − 6.25 = 33.75
        assert_eq!(capped.settled_grant(4), 33.75);
        assert_eq!(capped.settled_grant(8), 18.75, "the equal split is less");
    }

    #[test]
    fn with_no_floor_and_no_grant_the_cadence_plans_with_the_equal_split() {
        let bare = FleetBudget::new(FleetShape {
            reserve: 0.0,
            ..shape()
        });
        assert_eq!(bare.node_budget_at(secs(1.0)), 0.0);
        assert_eq!(bare.stale_window_at(secs(1.0)), Duration::ZERO);
        assert_eq!(bare.cadence_basis_at(secs(1.0)), secs(50.0 / 20.0));
        assert_eq!(bare.shape.smallest_stale_window(), secs(2.5));
        assert_eq!(shape().smallest_stale_window(), secs(12.5 / 20.0));
    }

    #[test]
    fn before_a_lapse_fresh_evidence_is_due_half_the_floors_window_ahead() {
        let mut budget = FleetBudget::new(FleetShape {
            fleet_ceiling_units: 400.0,
            ..shape()
        }); // floor 25 units at r = 20: a 1.25 s window
        assert_eq!(
            budget.refresh_before_lapse(secs(0.0), None),
            None,
            "no lease"
        );
        budget.set_lease(Some(Lease {
            grant_units: 100.0,
            deadline: secs(30.0),
        }));
        assert_eq!(
            budget.refresh_before_lapse(secs(1.0), Some(secs(0.5))),
            Some(secs(30.0 - 0.625))
        );
        assert_eq!(
            budget.refresh_before_lapse(secs(29.0), Some(secs(28.9))),
            None,
            "evidence sent within the floor's window of the deadline is young enough"
        );
        let mut no_floor = FleetBudget::new(FleetShape {
            reserve: 0.0,
            ..shape()
        });
        no_floor.set_lease(budget.lease());
        assert_eq!(no_floor.refresh_before_lapse(secs(1.0), None), None);
    }
}
