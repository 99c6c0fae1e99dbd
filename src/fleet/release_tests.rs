//! The release script on the in-memory stand-in, driven through the same exchange functions the
//! lease task runs: what one release does to the fleet's state when the server changed under it.

use std::time::Duration;

use super::lua_redis::LuaRedis;
use super::scripts;
use crate::rules::budget::lease::{FleetBudget, FleetShape};
use crate::rules::fleet::{FleetNode, FleetReply};
use crate::rules::fleet_exchange;
use crate::rules::{BudgetSource, SentinelState};

const KEY: &str = "{spend-sentinel:release-tests}";

fn shape() -> FleetShape {
    FleetShape {
        fleet_ceiling_units: 1000.0,
        max_units_per_second: 2.0,
        max_nodes: 3,
        reserve: 0.25,
        lease: Duration::from_secs(30),
        max_stale: None,
    }
}

struct Node {
    name: &'static str,
    fleet: FleetNode,
    state: SentinelState,
}

impl Node {
    fn new(name: &'static str) -> Self {
        Node {
            name,
            fleet: FleetNode::new(shape()),
            state: SentinelState::new(BudgetSource::Fleet(FleetBudget::new(shape()))),
        }
    }

    /// A renewal sent at `at` seconds, answered at once.
    fn renew(&mut self, redis: &mut LuaRedis, at: u64) -> FleetReply {
        let now = Duration::from_secs(at);
        let request = fleet_exchange::send_renewal(&mut self.fleet, &mut self.state, now);
        let new_id = format!("{}-{at}", self.name);
        let argv = scripts::renew_argv(self.name, &new_id, &shape(), &request);
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
        let argv = scripts::release_argv(self.name, &new_id, &shape(), &request);
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
