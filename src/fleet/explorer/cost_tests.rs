//! What a node costs Redis, on fake time with the real scripts: the stand-in counts commands as
//! `INFO commandstats` does (checked against a real server in `crate::fleet::lua_redis`).

use std::time::Duration;

use super::action::{Action, Fate};
use super::world::World;
use crate::numbers::u64_as_f64;
use crate::rules::budget::lease::FleetShape;

const NODES: usize = 2;
const MINUTES: u64 = 10;

/// 100 ms of a node's life: its renewal when due, its refresh (answered 700 ms after it went
/// out), and r / 10 units admitted: traffic at full rate.
fn tick(world: &mut World, sent: &mut [Option<Duration>]) {
    for (node, sent) in sent.iter_mut().enumerate() {
        let mut actions = Vec::new();
        if world.renewal_due(node) {
            actions.push(Action::Renew {
                node,
                fate: Fate::PROMPT,
                jitter: 32_768,
            });
        }
        if sent.is_some_and(|at| world.now() >= at + Duration::from_millis(700)) {
            actions.push(Action::RefreshAnswer(node));
            *sent = None;
        }
        if sent.is_none() && world.refresh_due(node) {
            actions.push(Action::RefreshSend(node));
            *sent = Some(world.now());
        }
        actions.push(Action::Admit { node, units: 5 });
        for action in actions {
            world.apply(&action).expect("no promise broken");
        }
    }
    world.apply(&Action::Wait(100)).expect("no promise broken");
}

/// At the default lease (30 s) and split (12 s), under full-rate traffic, with an authority
/// answering in 700 ms: at most 10 calls (round trips) and 30 commands a node a minute.
#[test]
fn a_node_costs_redis_at_most_10_calls_and_30_commands_a_minute() {
    let shape = FleetShape {
        fleet_ceiling_units: 1000.0,
        max_units_per_second: 50.0,
        max_nodes: 4,
        reserve: 0.25,
        lease: Duration::from_secs(30),
        max_split: Duration::from_secs(12),
        max_stale: None,
    };
    let mut world = World::new(vec![shape]);
    let mut sent = [None; NODES];
    for _ in 0..NODES {
        let join = Action::Join {
            config: 0,
            rate_ppm: 0,
        };
        world.apply(&join).expect("joined");
    }
    // A minute to end the fresh fleet's hold and settle into the regular cadence.
    for _ in 0..600 {
        tick(&mut world, &mut sent);
    }
    let (calls_before, commands_before) = (world.script_calls, world.redis_commands());
    for _ in 0..600 * MINUTES {
        tick(&mut world, &mut sent);
    }
    let per_node_minute = |n: u64| u64_as_f64(n) / u64_as_f64(NODES as u64 * MINUTES);
    let calls = per_node_minute(world.script_calls - calls_before);
    let by_command: Vec<(String, f64)> = world
        .redis_commands()
        .into_iter()
        .map(|(name, n)| {
            let before = commands_before.get(&name).copied().unwrap_or(0);
            (name, per_node_minute(n - before))
        })
        .collect();
    let commands: f64 = by_command.iter().map(|(_, n)| n).sum();
    println!("per node per minute: {calls:.2} calls, {commands:.2} commands {by_command:?}");
    assert!(calls <= 10.0, "{calls} calls a node a minute");
    assert!(commands <= 30.0, "{commands} commands a node a minute");
    assert!(
        calls >= 5.0,
        "{calls}: the nodes did renew (every lease / 3)"
    );
}
