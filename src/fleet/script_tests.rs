//! The scripts on the in-memory stand-in, driven through the same exchange functions the lease
//! task runs: what one call does to the fleet's state.

use std::time::Duration;

use super::lua_redis::LuaRedis;
use super::scripts;
use crate::rules::budget::lease::{FleetBudget, FleetShape};
use crate::rules::fleet::{FleetNode, FleetReply, Seen};
use crate::rules::fleet_exchange;
use crate::rules::{BudgetSource, SentinelState};

const KEY: &str = "{spend-sentinel:script-tests}";

fn shape() -> FleetShape {
    split_shape(Duration::ZERO)
}

/// b 1000, 3 nodes, reserve 0.25, 30 s leases, splits of up to `max_split`.
fn split_shape(max_split: Duration) -> FleetShape {
    FleetShape {
        fleet_ceiling_units: 1000.0,
        max_units_per_second: 2.0,
        max_nodes: 3,
        reserve: 0.25,
        lease: Duration::from_secs(30),
        max_split,
        max_stale: None,
    }
}

struct Node {
    name: &'static str,
    shape: FleetShape,
    fleet: FleetNode,
    state: SentinelState,
}

impl Node {
    fn new(name: &'static str) -> Self {
        Self::with(name, shape())
    }

    fn with(name: &'static str, shape: FleetShape) -> Self {
        Node {
            name,
            shape,
            fleet: FleetNode::new(shape),
            state: SentinelState::new(BudgetSource::Fleet(FleetBudget::new(shape))),
        }
    }

    /// A renewal sent at `at` seconds, answered at once.
    fn renew(&mut self, redis: &mut LuaRedis, at: u64) -> FleetReply {
        self.renew_reporting(redis, at, |_| {})
    }

    /// As `renew`, with the report of a state seen long ago changed by `report` first.
    fn renew_reporting(
        &mut self,
        redis: &mut LuaRedis,
        at: u64,
        report: impl FnOnce(&mut Option<Seen>),
    ) -> FleetReply {
        let now = Duration::from_secs(at);
        let mut request = fleet_exchange::send_renewal(&mut self.fleet, &mut self.state, now);
        report(&mut request.seen);
        let new_id = format!("{}-{at}", self.name);
        let argv = scripts::renew_argv(self.name, &new_id, &self.shape, &request);
        let fields = redis.eval(scripts::RENEW_SCRIPT, &[KEY], &argv).unwrap();
        let answer = FleetReply::parse_renewal(&fields).unwrap();
        let reply = answer.0.clone();
        fleet_exchange::apply_renewal_answer(
            &mut self.fleet,
            &mut self.state,
            &request,
            &answer,
            now,
            0.5,
        );
        reply
    }

    /// The release on close at `at` seconds.
    fn release(&mut self, redis: &mut LuaRedis, at: u64) -> FleetReply {
        let now = Duration::from_secs(at);
        let request = fleet_exchange::send_release(&mut self.fleet, &self.state, now).unwrap();
        let new_id = format!("{}-release", self.name);
        let argv = scripts::release_argv(self.name, &new_id, &self.shape, &request);
        let fields = redis.eval(scripts::RELEASE_SCRIPT, &[KEY], &argv).unwrap();
        FleetReply::parse(&fields).unwrap()
    }
}

/// B renews, then A (a later version); a replica copies the state; B renews on the primary (its
/// deadline moves, the copy never hears of it); the replica is promoted. 40 s in, A closes: its
/// report (the state at A's version, seen 40 s ago) would sweep B's lease in the copy, written
/// before that version, although B's deadline, moved by the renewal the copy lacks, is still
/// ahead. Found on another server, the release opens a new epoch, held, and sweeps nothing.
#[test]
fn a_release_on_another_server_sweeps_nothing_and_tells_the_loss() {
    let mut redis = LuaRedis::new();
    let (mut a, mut b) = (Node::new("a"), Node::new("b"));
    b.renew(&mut redis, 0);
    let seen = a.renew(&mut redis, 0);
    let copy = redis.dump(KEY).expect("a state to copy");
    b.renew(&mut redis, 10);
    redis.restore(KEY, copy);
    redis.new_server_identity(9);

    let reply = a.release(&mut redis, 40);
    let state = redis.hash(KEY);
    assert!(state.contains_key("n:b"), "B's lease stays: {state:?}");
    assert!(!state.contains_key("t:b"), "B's lease was not ended");
    assert!(reply.loss, "the release tells the loss");
    assert_ne!(reply.epoch, seen.epoch, "a new epoch");
    assert!(reply.held, "growth held");
    assert!(
        !state.contains_key("n:a"),
        "A's own lease is released all the same"
    );
}

/// The same report on the server that wrote the state does end B's lease: the sweep itself is
/// unchanged.
#[test]
fn a_release_on_the_same_server_sweeps_as_before() {
    let mut redis = LuaRedis::new();
    let (mut a, mut b) = (Node::new("a"), Node::new("b"));
    b.renew(&mut redis, 0);
    a.renew(&mut redis, 0);
    let reply = a.release(&mut redis, 40);
    let state = redis.hash(KEY);
    assert!(
        !state.contains_key("n:b") && state.contains_key("t:b"),
        "{state:?}"
    );
    assert!(!reply.loss);
}

/// A report ends a lease only once its state was seen maxSplitSeconds + leaseSeconds × 1.03 +
/// 2 s ago (12 + 30.9 + 2 = 44.9 s): B's lease, written before the state A saw, stays on a
/// report 44.8 s old and ends on one 44.9 s old.
#[test]
fn a_report_ends_leases_only_once_its_state_is_a_split_and_a_lease_old() {
    let shape = split_shape(Duration::from_secs(12));
    let mut redis = LuaRedis::new();
    let (mut a, mut b) = (Node::with("a", shape), Node::with("b", shape));
    b.renew(&mut redis, 0);
    let seen = a.renew(&mut redis, 0);
    let report = |age_ms: u64| {
        let seen = seen.clone();
        move |report: &mut Option<Seen>| {
            *report = Some(Seen {
                fleet_id: seen.fleet_id,
                epoch: seen.epoch,
                version: seen.version,
                age: Duration::from_millis(age_ms),
            });
        }
    };
    a.renew_reporting(&mut redis, 45, report(44_800));
    assert!(
        redis.hash(KEY).contains_key("n:b"),
        "44.8 s: B's lease stays"
    );
    a.renew_reporting(&mut redis, 46, report(44_900));
    let state = redis.hash(KEY);
    assert!(
        !state.contains_key("n:b") && state.contains_key("t:b"),
        "44.9 s: ended, {state:?}"
    );
}

/// A state written before maxSplitSeconds existed takes the caller's, keeps it, and answers it.
#[test]
fn a_state_without_max_split_adopts_the_callers() {
    let mut redis = LuaRedis::new();
    let mut a = Node::with("a", split_shape(Duration::from_secs(12)));
    a.renew(&mut redis, 0);
    let old = "local s = redis.call('HDEL', KEYS[1], 'max_split_ms') return {tostring(s)}";
    assert_eq!(redis.eval(old, &[KEY], &[]).unwrap(), ["1"]);
    let mut c = Node::with("c", split_shape(Duration::from_secs(5)));
    let reply = c.renew(&mut redis, 1);
    assert_eq!(reply.fleet_max_split_ms, 5_000);
    assert_eq!(redis.hash(KEY)["max_split_ms"], "5000");
    assert_eq!(
        a.renew(&mut redis, 2).fleet_max_split_ms,
        5_000,
        "the fleet's from then on"
    );
}
