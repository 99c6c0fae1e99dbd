//! Shrinking a failing schedule to one a reader can follow: delete chunks of actions (halving
//! the chunk size down to single actions) while the schedule still breaks a promise, then merge
//! neighbouring waits. Any promise broken counts: a shorter trace that breaks another one is a
//! counterexample too. [`narrate`] prints the result as a timeline.

use super::action::Action;
use super::checker::Violation;
use super::replay;
use super::world::World;
use crate::rules::budget::lease::FleetShape;

/// At most this many replays: a trace of a few thousand actions shrinks in seconds.
const REPLAYS: usize = 4_000;

pub(super) fn shrink(
    configs: &[FleetShape],
    mut actions: Vec<Action>,
    _: &Violation,
) -> Vec<Action> {
    let mut replays = 0;
    let mut chunk = actions.len().div_ceil(2).max(1);
    loop {
        let mut at = 0;
        while at < actions.len() && replays < REPLAYS {
            let mut candidate = actions.clone();
            candidate.drain(at..(at + chunk).min(candidate.len()));
            replays += 1;
            match replay(configs, &candidate) {
                (ran, Some(_)) => {
                    candidate.truncate(ran);
                    actions = candidate;
                }
                (_, None) => at += chunk,
            }
        }
        if chunk == 1 || replays >= REPLAYS {
            break;
        }
        chunk = chunk.div_ceil(2);
    }
    merge_waits(configs, actions)
}

/// Neighbouring waits become one, where the trace still fails (merging can change what lands
/// between two steps).
fn merge_waits(configs: &[FleetShape], actions: Vec<Action>) -> Vec<Action> {
    let mut merged: Vec<Action> = Vec::with_capacity(actions.len());
    for action in &actions {
        if let (Some(Action::Wait(total)), Action::Wait(ms)) = (merged.last_mut(), action) {
            *total = total.saturating_add(*ms);
        } else {
            merged.push(action.clone());
        }
    }
    match replay(configs, &merged) {
        (_, Some(_)) => merged,
        (_, None) => actions,
    }
}

/// The trace as a timeline: each action at its real time (seconds from the start), with what
/// the world logged while carrying it out.
pub(super) fn narrate(configs: &[FleetShape], actions: &[Action]) -> String {
    let mut world = World::new(configs.to_vec());
    world.log = Some(Vec::new());
    let mut story = Vec::new();
    for action in actions {
        let at = world.now().as_secs_f64() - World::START.as_secs_f64();
        let result = world.apply(action);
        story.push(format!("{at:>9.3} s  {action:?}"));
        story.extend(world.log.replace(Vec::new()).unwrap_or_default());
        if let Err(violation) = result {
            story.push(format!("           BROKEN: {violation}"));
            break;
        }
    }
    story.join("\n")
}
