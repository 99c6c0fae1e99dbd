use super::*;

/// One explored batch, printed; a counterexample fails the test with its shrunk trace.
fn explore_or_fail(profile: Profile, first_seed: u64, runs: u64, steps: usize) -> Explored {
    let started = std::time::Instant::now();
    match explore(profile, first_seed, runs, steps) {
        Ok(explored) => {
            println!(
                "explored {} runs, {} steps, {} script calls in {:.1} s; worst silence {:.2} of its bound",
                explored.runs,
                explored.steps,
                explored.script_calls,
                started.elapsed().as_secs_f64(),
                explored.worst
            );
            explored
        }
        Err(counterexample) => panic!("counterexample:\n{counterexample}"),
    }
}

#[test]
fn the_explorer_finds_no_schedule_that_breaks_a_promise() {
    let steps: u64 = std::env::var("EXPLORER_STEPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let explored = explore_or_fail(Profile::EVERYTHING, 1, steps.div_ceil(2_000), 2_000);
    assert!(explored.steps >= steps);
    assert!(
        explored.worst > 0.5,
        "no silence came near its bound ({:.2}): the explorer tested little",
        explored.worst
    );
}

/// Each kind of trouble alone, in its own batch: a counterexample then says which kind it needs.
/// The first four are the ways the ceiling was broken after every example test passed (see
/// docs/fleet-protocol.md, "The explorer").
const KINDS: [(&str, Profile); 5] = [
    (
        "links cut and calls lost, clocks within ±1 %",
        Profile {
            network_faults: true,
            ..Profile::CALM
        },
    ),
    (
        "a rolling update that changes leaseSeconds, and the key lost",
        Profile {
            mixed: Mixed::Lease,
            redis_faults: true,
            ..Profile::CALM
        },
    ),
    (
        "more nodes than maxNodes",
        Profile {
            crowd: true,
            ..Profile::CALM
        },
    ),
    (
        "nodes whose reserve or maxNodes differ",
        Profile {
            mixed: Mixed::Floors,
            ..Profile::CALM
        },
    ),
    (
        "nodes whose b differs, and the key lost",
        Profile {
            mixed: Mixed::Ceiling,
            redis_faults: true,
            ..Profile::CALM
        },
    ),
];

#[test]
fn no_kind_of_trouble_alone_breaks_a_promise() {
    let number = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let (first_seed, runs) = (
        number("EXPLORER_FIRST_SEED", 1),
        number("EXPLORER_KIND_RUNS", 100),
    );
    let only = std::env::var("EXPLORER_KIND").unwrap_or_default();
    let mut broken = Vec::new();
    for (kind, profile) in KINDS.into_iter().filter(|(kind, _)| kind.contains(&only)) {
        let started = std::time::Instant::now();
        match explore(profile, first_seed, runs, 2_000) {
            Ok(explored) => println!(
                "{kind}: {} steps in {:.1} s, worst silence {:.2} of its bound",
                explored.steps,
                started.elapsed().as_secs_f64(),
                explored.worst
            ),
            Err(counterexample) => broken.push(format!("{kind}:\n{counterexample}")),
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n\n"));
}

/// Regression schedules: the ways the ceiling was broken, replayed through the real code.
mod schedules {
    use std::time::Duration;

    use super::super::action::{Action, Cut, Fate};
    use super::super::replay;
    use crate::rules::budget::lease::FleetShape;

    const PROMPT: Fate = Fate {
        land_ms: Some(1),
        answer_ms: Some(1),
    };

    fn renew(node: usize) -> Action {
        Action::Renew {
            node,
            fate: PROMPT,
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
            max_stale: None,
        }
    }

    /// Nodes 0 and 1 lease half the pool each: they renew and verify every 4 s until the
    /// fresh fleet's hold is over.
    fn two_leased_nodes() -> Vec<Action> {
        let mut actions = vec![
            Action::Join {
                config: 0,
                rate_ppm: 0,
            },
            Action::Join {
                config: 0,
                rate_ppm: 0,
            },
        ];
        for _ in 0..8 {
            for node in 0..2 {
                actions.extend(verify(node));
                actions.push(renew(node));
            }
            actions.push(Action::Wait(4_000));
        }
        actions
    }

    fn assert_holds(configs: &[FleetShape], actions: &[Action]) {
        let (_, violation) = replay(configs, actions);
        assert_eq!(
            violation,
            None,
            "{}",
            super::super::shrink::narrate(configs, actions)
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
        for _ in 0..16 {
            actions.extend(verify(0));
            actions.extend([renew(0), Action::Wait(600)]);
        }
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
        let mut actions: Vec<Action> = (0..3)
            .map(|_| Action::Join {
                config: 0,
                rate_ppm: 0,
            })
            .collect();
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
        let mut actions = vec![Action::Join {
            config: 0,
            rate_ppm: 0,
        }];
        actions.extend(keep_renewing(0..1, 6, 1_500));
        actions.push(Action::Join {
            config: 1,
            rate_ppm: 0,
        });
        actions.extend(keep_renewing(0..2, 8, 1_500));
        assert_holds(&[shape(5), odd], &actions);
    }

    /// A rolling update lowers leaseSeconds from 52 to 7 s, then the fleet's key is lost: the
    /// new node must not end the hold while the old node's 52 s lease is still usable.
    #[test]
    fn a_loss_holds_growth_for_the_longest_lease_in_the_fleet() {
        let configs = [shape(7), shape(52)];
        let mut actions = vec![
            Action::Join {
                config: 1,
                rate_ppm: 0,
            },
            Action::Join {
                config: 0,
                rate_ppm: 0,
            },
        ];
        for _ in 0..20 {
            for node in 0..2 {
                actions.extend(verify(node));
                actions.push(renew(node));
            }
            actions.push(Action::Wait(3_000));
        }
        actions.push(Action::LoseKey);
        for _ in 0..20 {
            actions.extend(verify(1));
            actions.extend([renew(1), Action::Wait(1_000)]);
        }
        assert_holds(&configs, &actions);
    }
}

/// What a node costs Redis at the default lease (30 s) under full-rate traffic with an authority
/// answering in 700 ms: at most 10 calls (round trips) and 30 commands a minute as
/// `INFO commandstats` counts them (the stand-in counts as Redis does: `lua_redis::cross_check`).
#[test]
fn a_node_costs_redis_at_most_10_calls_and_30_commands_a_minute() {
    use std::time::Duration;

    use crate::rules::budget::lease::FleetShape;
    use action::{Action, Fate};

    const NODES: usize = 2;
    const MINUTES: u64 = 10;
    let shape = FleetShape {
        fleet_ceiling_units: 1000.0,
        max_units_per_second: 50.0,
        max_nodes: 4,
        reserve: 0.25,
        lease: Duration::from_secs(30),
        max_stale: None,
    };
    let prompt = Fate {
        land_ms: Some(1),
        answer_ms: Some(1),
    };
    let mut world = world::World::new(vec![shape]);
    let mut sent: [Option<Duration>; NODES] = [None; NODES];
    let mut tick = |world: &mut world::World, sent: &mut [Option<Duration>; NODES]| {
        for node in 0..NODES {
            let mut actions = Vec::new();
            if world.renewal_due(node) {
                actions.push(Action::Renew {
                    node,
                    fate: prompt,
                    jitter: 32_768,
                });
            }
            if sent[node].is_some_and(|at| world.now() >= at + Duration::from_millis(700)) {
                actions.push(Action::RefreshAnswer(node));
                sent[node] = None;
            }
            if sent[node].is_none() && world.refresh_due(node) {
                actions.push(Action::RefreshSend(node));
                sent[node] = Some(world.now());
            }
            // r = 50 units a second, at full rate.
            actions.push(Action::Admit { node, units: 5 });
            for action in actions {
                world.apply(&action).expect("no promise broken");
            }
        }
        world.apply(&Action::Wait(100)).expect("no promise broken");
    };
    for node in 0..NODES {
        world
            .apply(&Action::Join {
                config: 0,
                rate_ppm: 0,
            })
            .expect("joined");
        let _ = node;
    }
    // A minute to end the fresh fleet's hold and settle into the regular cadence.
    for _ in 0..600 {
        tick(&mut world, &mut sent);
    }
    let (calls_before, commands_before) = (world.script_calls, world.redis_commands());
    for _ in 0..600 * MINUTES {
        tick(&mut world, &mut sent);
    }
    let per_node_minute = |n: u64| n as f64 / (NODES as u64 * MINUTES) as f64;
    let calls = per_node_minute(world.script_calls - calls_before);
    let after = world.redis_commands();
    let by_command: Vec<(String, f64)> = after
        .iter()
        .map(|(name, n)| {
            (
                name.clone(),
                per_node_minute(n - commands_before.get(name).copied().unwrap_or(0)),
            )
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
