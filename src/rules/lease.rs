//! The fleet budget's local rules: a node's budget is a static floor plus a grant of the
//! fleet's pool held under a lease. Redis decides grants (see `crate::fleet`); these rules say
//! how much of a grant a node may use, until when, and how much it asks for.

use crate::numbers::u64_as_f64;
use std::time::Duration;

use super::stale_window::{ceiling_seconds, MAX_STALE_WINDOW_SECONDS};

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
    /// Optional cap on the stale window.
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

    /// want = r × maxStaleSeconds − floor: more would not lengthen the window. `None`: no limit.
    pub fn want_units(&self) -> Option<f64> {
        self.max_stale.map(|stale| {
            (self.max_units_per_second * stale.as_secs_f64() - self.floor_units()).max(0.0)
        })
    }

    /// The window a node budget gives: units / r, capped by `maxStaleSeconds` and by the
    /// longest supported window.
    pub fn stale_window_for(&self, node_budget_units: f64) -> Duration {
        let seconds = ceiling_seconds(node_budget_units, self.max_units_per_second)
            .min(MAX_STALE_WINDOW_SECONDS);
        let window = Duration::from_secs_f64(seconds.max(0.0));
        self.max_stale.map_or(window, |cap| window.min(cap))
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

    /// The local lease deadline of a grant obtained by a request sent at `sent_at`: always
    /// before Redis can let the lease expire (Redis starts its clock when the request arrives,
    /// later than the send; the 0.1 % absorbs clock-rate differences, the second the rest).
    pub fn lease_deadline(&self, sent_at: Duration) -> Duration {
        (sent_at + self.lease.mul_f64(0.999)).saturating_sub(Duration::from_secs(1))
    }
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
    pub lease: Option<Lease>,
    /// `shape.floor_units()`, computed once: it is read on every admission.
    floor_units: f64,
}

impl FleetBudget {
    pub fn new(shape: FleetShape) -> Self {
        FleetBudget {
            shape,
            lease: None,
            floor_units: shape.floor_units(),
        }
    }

    pub fn grant_at(&self, now: Duration) -> f64 {
        self.lease.map_or(0.0, |lease| lease.usable_at(now))
    }

    pub fn node_budget_at(&self, now: Duration) -> f64 {
        self.floor_units + self.grant_at(now)
    }

    pub fn stale_window_at(&self, now: Duration) -> Duration {
        self.shape.stale_window_for(self.node_budget_at(now))
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

    /// What the node promises not to exceed while a renewal is in flight, and so the least Redis
    /// must keep reserving for it: the grant it holds, lowered towards `target` (its fair share
    /// as of the last answer) but never below the grant units it has already used.
    pub fn keep_for_renewal(&self, now: Duration, used_beyond_floor: f64, target: f64) -> f64 {
        let held = self.grant_at(now);
        held.min(target.max(used_beyond_floor)).max(0.0)
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
        max_stale: None,
    }
}

/// Max-min fair split of `pool` among `wants` (`None` = no limit): a node that wants less than
/// an equal split gets what it wants; the rest is split equally among the others.
pub fn fair_split(pool: f64, wants: &[Option<f64>]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..wants.len()).collect();
    let want = |i: usize| wants[i].unwrap_or(f64::INFINITY);
    order.sort_by(|&a, &b| want(a).total_cmp(&want(b)));
    let mut shares = vec![0.0; wants.len()];
    let mut left = pool.max(0.0);
    for (k, &i) in order.iter().enumerate() {
        let equal = left / u64_as_f64((wants.len() - k) as u64);
        shares[i] = want(i).min(equal);
        left -= shares[i];
    }
    shares
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
        let deadline = shape().lease_deadline(secs(100.0));
        assert_eq!(deadline, secs(100.0 + 29.97 - 1.0));
        assert!(deadline < secs(130.0));
    }

    #[test]
    fn a_grant_is_usable_until_its_deadline_only() {
        let mut budget = FleetBudget::new(shape());
        assert_eq!(budget.node_budget_at(secs(0.0)), 12.5);
        budget.lease = Some(Lease {
            grant_units: 50.0,
            deadline: secs(10.0),
        });
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
        assert_eq!(capped.want_units(), Some(40.0 - 12.5));
        assert_eq!(shape().want_units(), None);
        let window = capped.stale_window_for(500.0);
        assert_eq!(window, secs(2.0), "maxStaleSeconds caps the window");
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
    fn a_renewal_keeps_what_is_used_and_lowers_towards_the_fair_share() {
        let mut budget = FleetBudget::new(shape());
        budget.lease = Some(Lease {
            grant_units: 100.0,
            deadline: secs(10.0),
        });
        assert_eq!(budget.keep_for_renewal(secs(1.0), 30.0, 50.0), 50.0);
        assert_eq!(budget.keep_for_renewal(secs(1.0), 80.0, 50.0), 80.0);
        assert_eq!(budget.keep_for_renewal(secs(1.0), 10.0, 150.0), 100.0);
        assert_eq!(
            budget.keep_for_renewal(secs(11.0), 80.0, 50.0),
            0.0,
            "a lapsed grant keeps nothing"
        );
    }

    #[test]
    fn fair_split_is_max_min_fair() {
        assert_eq!(
            fair_split(150.0, &[None, None, None]),
            vec![50.0, 50.0, 50.0]
        );
        assert_eq!(
            fair_split(150.0, &[Some(10.0), None, None]),
            vec![10.0, 70.0, 70.0]
        );
        assert_eq!(
            fair_split(150.0, &[Some(10.0), Some(20.0), Some(30.0)]),
            vec![10.0, 20.0, 30.0]
        );
        assert_eq!(
            fair_split(90.0, &[Some(100.0), Some(20.0)]),
            vec![70.0, 20.0]
        );
        assert!(fair_split(10.0, &[]).is_empty());
    }
}
