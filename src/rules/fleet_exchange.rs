//! One node's side of each exchange with the fleet's Redis, as one sequence on its two halves:
//! its fleet decisions ([`FleetNode`]) and its sentinel state (the ledger and the lease the
//! admission guard uses). The lease task runs each function under both locks; the explorer and
//! the simulation call the very same functions on their nodes, so what they check is the path
//! production runs, not a copy of it.
//!
//! Why one sequence and one lock: a renewal's `keep` is computed from the ledger's used units,
//! and the cap it implies must be on the lease before the next admission, or an admission
//! between the read and the cap would be used beyond what the renewal tells Redis to keep. The
//! answer is applied in a fixed order for the same reason: an ended lease is covered with the
//! grant and floor it ended with, before the answer's floor and lease replace them.

use std::time::Duration;

use super::fleet::{
    Confirm, FleetEvent, FleetNode, FleetReply, Grant, ReleaseRequest, RenewRequest,
};
use super::sentinel_state::SentinelState;

/// What the node does next: it lowered its cap to hand a share back (the renewal that returns
/// it is due at once), or it waits until the next renewal is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextStep {
    GaveBack,
    RenewAt(Duration),
}

/// Holding more than its fair share, the node lowers its own cap at once (always safe: it uses
/// less than Redis reserves for it); otherwise, when its next renewal is due.
pub fn next_step(fleet: &mut FleetNode, state: &mut SentinelState, now: Duration) -> NextStep {
    let local = state.fleet_local();
    match fleet.share_to_give_back(now, &local) {
        Some(lowered) => {
            state.set_lease(Some(lowered));
            NextStep::GaveBack
        }
        None => NextStep::RenewAt(fleet.renewal_due_at(now, &local)),
    }
}

/// The renewal to send now, built from the ledger of this moment, with the lease capped at the
/// `keep` it tells Redis (a share above the fair one is handed back first). Keeps U
/// (docs/fleet-protocol.md, Invariants): nothing is admitted beyond what Redis is told to keep.
pub fn send_renewal(
    fleet: &mut FleetNode,
    state: &mut SentinelState,
    now: Duration,
) -> RenewRequest {
    next_step(fleet, state, now);
    let (request, cap) = fleet.renewal(now, &state.fleet_local());
    if let Some(cap) = cap {
        state.set_lease(Some(cap));
    }
    request
}

/// What a renewal's answer leaves for the shell to do: confirm growth with `WAIT`, and tell the
/// logger.
#[derive(Debug, Clone, PartialEq)]
pub struct Answered {
    pub confirm: Option<Confirm>,
    pub events: Vec<FleetEvent>,
}

/// Applies the answer to `request`, received at `now` (`draw` in [0, 1) jitters the next
/// renewal): the fleet's memory learns it; a lease that ended in Redis is covered with what it
/// ended with; then the answer's floor, then its lease (unless the answer was stale).
pub fn apply_renewal_answer(
    fleet: &mut FleetNode,
    state: &mut SentinelState,
    request: &RenewRequest,
    (reply, grant): &(FleetReply, Grant),
    now: Duration,
    draw: f64,
) -> Answered {
    let applied = fleet.apply_renewal(request, reply, grant, now, draw);
    if applied.lease_ended {
        state.cover_ended_lease();
    }
    state.set_fleet_floor(applied.floor_units);
    if let Some(lease) = applied.lease {
        state.set_lease(Some(lease));
    }
    Answered {
        confirm: applied.confirm,
        events: applied.events,
    }
}

/// `WAIT` answered with `acknowledged` replicas: the grown lease is used when every replica
/// connected at the renewal has it. Answers whether it grew.
pub fn apply_confirmation(
    fleet: &FleetNode,
    state: &mut SentinelState,
    confirm: &Confirm,
    acknowledged: u64,
) -> bool {
    let grown = fleet.confirmed(confirm, acknowledged);
    if let Some(lease) = grown {
        state.set_lease(Some(lease));
    }
    grown.is_some()
}

/// The release on close, from the ledger of this moment, if this node ever renewed.
pub fn send_release(
    fleet: &mut FleetNode,
    state: &SentinelState,
    now: Duration,
) -> Option<ReleaseRequest> {
    fleet.release(now, &state.fleet_local())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::budget::lease::{example_shape, FleetBudget};
    use crate::rules::{BudgetSource, Outcome};

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    /// b = 200, 4 nodes, reserve 0.25: a floor of 12.5 and a pool of 150; evidence from 0 s.
    fn fleet_state() -> SentinelState {
        let mut state = SentinelState::new(BudgetSource::Fleet(FleetBudget::new(example_shape())));
        let ticket = state.refresh_sent(secs(0.0)).unwrap();
        state.refresh_answered(ticket, Outcome::Valid);
        state
    }

    /// Fleet "f1" at version `version`, not held, growth allowed.
    fn reply(version: u64) -> FleetReply {
        FleetReply {
            version,
            ..crate::rules::fleet::example_reply()
        }
    }

    fn grant(grant_units: f64, target_units: f64, ended: bool) -> Grant {
        Grant {
            grant_units,
            target_units,
            stale: false,
            ended,
            slot: true,
        }
    }

    /// One renewal sent at `at` and answered 10 ms later with a grant of `units` (fair share
    /// `target`).
    fn renewed(
        fleet: &mut FleetNode,
        state: &mut SentinelState,
        at: f64,
        answer: (FleetReply, Grant),
    ) {
        let request = send_renewal(fleet, state, secs(at));
        apply_renewal_answer(fleet, state, &request, &answer, secs(at + 0.01), 0.5);
    }

    #[test]
    fn a_renewal_caps_the_lease_at_what_it_tells_redis_to_keep_before_it_returns() {
        let (mut fleet, mut state) = (FleetNode::new(example_shape()), fleet_state());
        renewed(
            &mut fleet,
            &mut state,
            0.0,
            (reply(1), grant(100.0, 20.0, false)),
        );
        assert_eq!(state.node_budget_units(secs(1.0)), 112.5, "floor + grant");
        assert!(state.admit(42.5, secs(1.0)), "30 of the grant used");
        let request = send_renewal(&mut fleet, &mut state, secs(2.0));
        assert_eq!(
            request.keep, 30.0,
            "the fair share 20, but never below the 30 used"
        );
        assert_eq!(
            state.node_budget_units(secs(2.0)),
            42.5,
            "already capped: nothing more is admitted before the answer"
        );
        assert!(!state.admit(1.0, secs(2.0)));
    }

    #[test]
    fn an_ended_lease_is_covered_with_what_it_ended_with_before_the_answer_replaces_it() {
        let (mut fleet, mut state) = (FleetNode::new(example_shape()), fleet_state());
        renewed(
            &mut fleet,
            &mut state,
            0.0,
            (reply(1), grant(40.0, 40.0, false)),
        );
        assert!(
            state.admit(50.0, secs(1.0)),
            "the floor's 12.5 and 37.5 of the grant"
        );
        assert_eq!(state.fleet_local().used_beyond_floor, 37.5);
        // Redis ended that lease (charged whole) and grants nothing new yet.
        renewed(
            &mut fleet,
            &mut state,
            2.0,
            (reply(2), grant(0.0, 40.0, true)),
        );
        assert_eq!(
            state.fleet_local().used_beyond_floor,
            0.0,
            "covered by the charge of the ended grant of 40, not by the new grant of 0"
        );
        assert_eq!(
            state.exposure_units(),
            50.0,
            "still unverified: only no longer reserved"
        );
    }

    #[test]
    fn growth_waits_for_every_replica() {
        let (mut fleet, mut state) = (FleetNode::new(example_shape()), fleet_state());
        let request = send_renewal(&mut fleet, &mut state, secs(0.0));
        let answer = (
            FleetReply {
                replicas: 2,
                ..reply(1)
            },
            grant(60.0, 60.0, false),
        );
        let answered =
            apply_renewal_answer(&mut fleet, &mut state, &request, &answer, secs(0.01), 0.5);
        let confirm = answered.confirm.expect("growth on a primary with replicas");
        assert_eq!(state.node_budget_units(secs(0.02)), 12.5, "not yet");
        assert!(!apply_confirmation(&fleet, &mut state, &confirm, 1));
        assert_eq!(state.node_budget_units(secs(0.02)), 12.5);
        assert!(apply_confirmation(&fleet, &mut state, &confirm, 2));
        assert_eq!(state.node_budget_units(secs(0.02)), 72.5);
    }
}
