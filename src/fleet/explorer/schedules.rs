//! Regression schedules: the ways the ceiling was broken, replayed through the real code. Each
//! fails on the code before docs/fleet-protocol.md and passes now.

use std::time::Duration;

use super::action::{Action, Cut, Fate};
use super::replay;
use crate::rules::budget::lease::FleetShape;

fn renew(node: usize) -> Action {
    Action::Renew {
        node,
        fate: Fate::PROMPT,
        jitter: 32_768,
    }
}

fn verify(node: usize) -> [Action; 2] {
    [Action::RefreshSend(node), Action::RefreshAnswer(node)]
}

fn cut(node: usize) -> Action {
    Action::Link {
        node,
        cut: Some(Cut::Both),
    }
}

fn heal(node: usize) -> Action {
    Action::Link { node, cut: None }
}

fn shape(lease_seconds: u64) -> FleetShape {
    FleetShape {
        fleet_ceiling_units: 1000.0,
        max_units_per_second: 2.0,
        max_nodes: 3,
        reserve: 0.25,
        lease: Duration::from_secs(lease_seconds),
        max_split: Duration::ZERO,
        max_stale: None,
    }
}

/// Nodes 0 and 1 lease half the pool each: they renew and verify every 4 s until the
/// fresh fleet's hold is over.
fn two_leased_nodes() -> Vec<Action> {
    let mut actions = vec![join(0), join(0)];
    actions.extend(keep_renewing(0..2, 8, 4_000));
    actions
}

/// A node with configuration `config` starts, its clock at real rate.
fn join(config: usize) -> Action {
    Action::Join {
        config,
        rate_ppm: 0,
    }
}

fn assert_holds(configs: &[FleetShape], actions: &[Action]) {
    let (_, violation) = replay(configs, actions);
    assert_eq!(
        violation,
        None,
        "{}",
        super::shrink::narrate(configs, actions)
    );
}

/// Node 1 is cut off for more than half a lease, gets through once, and is cut off again,
/// while node 0 is cut off between its last answer and node 1's renewal. Node 1's lease must
/// not end in Redis before node 1's own deadline (with the fleet clock of old, it ended
/// about 4 s early here and its units were leased to node 0 while node 1 still used them).
#[test]
fn a_lease_lives_to_its_holders_deadline_through_a_partition_that_heals_in_stages() {
    let mut actions = two_leased_nodes();
    actions.extend([renew(1), Action::Wait(10), cut(1), Action::Wait(4_000)]);
    actions.extend([renew(0), Action::Wait(10), cut(0), Action::Wait(3_500)]);
    // Node 1's last answer is 7.5 s old: it gets through once.
    actions.extend([
        heal(1),
        renew(1),
        Action::Wait(10),
        cut(1),
        Action::Wait(2_000),
    ]);
    actions.push(heal(0));
    actions.extend(keep_renewing(0..1, 16, 600));
    assert_holds(&[shape(12)], &actions);
}

/// Nodes renew and verify every `every_ms` for `rounds` rounds.
fn keep_renewing(nodes: std::ops::Range<usize>, rounds: usize, every_ms: u32) -> Vec<Action> {
    let mut actions = Vec::new();
    for _ in 0..rounds {
        for node in nodes.clone() {
            actions.extend(verify(node));
            actions.push(renew(node));
        }
        actions.push(Action::Wait(every_ms));
    }
    actions
}

/// Three nodes with maxNodes 1 and half of b in floors: the two beyond maxNodes have no floor
/// of their own (the old code gave each its floor: 1.5 b in floors alone).
#[test]
fn nodes_beyond_max_nodes_have_no_floor_of_their_own() {
    let crowded = FleetShape {
        max_nodes: 1,
        reserve: 0.5,
        ..shape(5)
    };
    let mut actions = vec![join(0), join(0), join(0)];
    actions.extend(keep_renewing(0..3, 12, 1_500));
    assert_holds(&[crowded], &actions);
}

/// A node whose reserve and maxNodes differ from the fleet's joins (a rolling update): it
/// uses the fleet's, never its own larger floor (the old code let it keep 0.9 b).
#[test]
fn a_node_with_another_reserve_uses_the_fleets() {
    let odd = FleetShape {
        max_nodes: 1,
        reserve: 0.9,
        ..shape(5)
    };
    let mut actions = vec![join(0)];
    actions.extend(keep_renewing(0..1, 6, 1_500));
    actions.push(join(1));
    actions.extend(keep_renewing(0..2, 8, 1_500));
    assert_holds(&[shape(5), odd], &actions);
}

/// A rolling update lowers leaseSeconds from 52 to 7 s, then the fleet's key is lost: the
/// new node must not end the hold while the old node's 52 s lease is still usable.
#[test]
fn a_loss_holds_growth_for_the_longest_lease_in_the_fleet() {
    let configs = [shape(7), shape(52)];
    let mut actions = vec![join(1), join(0)];
    actions.extend(keep_renewing(0..2, 20, 3_000));
    actions.push(Action::LoseKey);
    actions.extend(keep_renewing(1..2, 20, 1_000));
    assert_holds(&configs, &actions);
}
