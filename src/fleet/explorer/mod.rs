//! The fleet explorer: drives the real [`crate::rules::fleet::FleetNode`], the real
//! [`crate::rules::SentinelState`] and the real Lua scripts (run in an embedded Lua 5.1 against an
//! in-memory stand-in for the Redis commands they use, checked against a real `redis-server` in
//! `crate::fleet::lua_redis`) through generated schedules: nodes whose monotonic clocks run up to
//! 1 % fast or slow, links cut one way or both, calls that land late or whose answers are lost,
//! crashes, joins, more nodes than `maxNodes`, mixed configurations, the fleet's key lost, failovers
//! to a replica that missed writes, split brains (two primaries taking writes at once), restarts
//! from old snapshots, Redis's clock stepped. The [`checker`] tests the fleet's promises after
//! every step; a failing schedule is shrunk to a short trace a reader can follow
//! (docs/fleet-protocol.md says what each invariant means and why the protocol keeps it).

pub(crate) mod action;
pub(crate) mod checker;
mod generate;
mod shrink;
mod world;

use action::Action;
use checker::Violation;
pub(crate) use generate::{Mixed, Profile};
use world::World;

use crate::rules::budget::lease::FleetShape;

/// A schedule that broke a promise, shrunk.
#[derive(Debug)]
pub(crate) struct Counterexample {
    pub(crate) seed: u64,
    pub(crate) configs: Vec<FleetShape>,
    pub(crate) actions: Vec<Action>,
    pub(crate) violation: Violation,
}

/// Runs `actions` on a fresh world; answers the first violation and how many actions ran.
fn replay(configs: &[FleetShape], actions: &[Action]) -> (usize, Option<Violation>) {
    let mut world = World::new(configs.to_vec());
    for (i, action) in actions.iter().enumerate() {
        if let Err(violation) = world.apply(action) {
            return (i + 1, Some(violation));
        }
    }
    (actions.len(), None)
}

/// What a batch of runs did.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Explored {
    pub(crate) runs: u64,
    pub(crate) steps: u64,
    pub(crate) script_calls: u64,
    /// The largest share of its bound any silence reached.
    pub(crate) worst: f64,
}

/// Explores `runs` seeded schedules of `steps` actions each, from `first_seed` on, in the parts
/// of the world `profile` names; stops at the first counterexample, shrunk.
pub(crate) fn explore(
    profile: Profile,
    first_seed: u64,
    runs: u64,
    steps: usize,
) -> Result<Explored, Box<Counterexample>> {
    let mut explored = Explored::default();
    for seed in first_seed..first_seed + runs {
        let mut generator = generate::Generator::new(seed, profile);
        let configs = generator.configs().to_vec();
        let mut world = World::new(configs.clone());
        let mut actions = Vec::with_capacity(steps);
        for _ in 0..steps {
            let action = generator.next(&world);
            actions.push(action);
            if let Err(violation) = world.apply(actions.last().expect("just pushed")) {
                let actions = shrink::shrink(&configs, actions, &violation);
                let (_, violation) = replay(&configs, &actions);
                return Err(Box::new(Counterexample {
                    seed,
                    configs,
                    actions,
                    violation: violation.expect("a shrunk trace still fails"),
                }));
            }
        }
        explored.runs += 1;
        explored.steps += steps as u64;
        explored.script_calls += world.script_calls;
        explored.worst = explored.worst.max(world.checker.worst);
    }
    Ok(explored)
}

impl std::fmt::Display for Counterexample {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "seed {}: {}", self.seed, self.violation)?;
        for (i, shape) in self.configs.iter().enumerate() {
            writeln!(
                f,
                "  config {i}: b {} r {} maxNodes {} reserve {} lease {:?}",
                shape.fleet_ceiling_units,
                shape.max_units_per_second,
                shape.max_nodes,
                shape.reserve,
                shape.lease
            )?;
        }
        write!(f, "{}", shrink::narrate(&self.configs, &self.actions))
    }
}

#[cfg(test)]
mod cost_tests;
#[cfg(test)]
mod schedules;
#[cfg(test)]
mod tests;
