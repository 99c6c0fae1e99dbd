//! What a fleet node remembers of Redis's answers, and what it makes of them: its fair share, the
//! fleet's shape it adopted, the hold it is timing, which charges a valid refresh may settle,
//! which state it can report as seen a whole lease ago, and the episodes its logger has already
//! heard of.

use std::collections::VecDeque;
use std::time::Duration;

use super::reply::{FleetReply, Grant};
use super::request::{Known, Seen};
use super::status::{FleetEvent, Settings};
use crate::numbers::{millis_u64, u64_as_f64};
use crate::rules::budget::lease::FleetShape;

/// After a loss, no grant grows for maxSplitSeconds + leaseSeconds × 1.03 + 2 s on the
/// detecting node's clock: every lease granted before has lapsed by then, with clocks within
/// ±1 % of real time, including those an old primary went on renewing for up to maxSplitSeconds.
const HOLD_RATE_MARGIN: f64 = 1.03;
const HOLD_MARGIN: Duration = Duration::from_secs(2);

/// How long growth is held after a loss (and on a fleet's first start), for leases of `lease`
/// and splits of up to `max_split`: maxSplitSeconds + leaseSeconds × 1.03 + 2 s. It is also how
/// long ago a node must have seen a state for its report to end leases (the sweep): a lease
/// whose holder renewed on an old primary during a split, unseen here, lapses by then too.
pub fn growth_hold(lease: Duration, max_split: Duration) -> Duration {
    max_split + lease.mul_f64(HOLD_RATE_MARGIN) + HOLD_MARGIN
}
/// How many recent answers a node remembers, to find the one a valid refresh was sent after.
const RECENT_ANSWERS: usize = 4;

/// The last answer, as the node keeps it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct LastAnswer {
    pub(super) reply: FleetReply,
    received_at: Duration,
    /// This node's fair share, and whether it holds a static floor (renewals only).
    target_units: f64,
    slot: bool,
}

/// One recent answer: what it lets a later valid refresh settle, and what a renewal reports of
/// it once it is a lease old.
#[derive(Debug, Clone, PartialEq)]
struct Answer {
    received_at: Duration,
    fleet_id: String,
    epoch: String,
    version: u64,
    charges_through: u64,
}

/// The hold of one epoch as this node times it: it ends for this node leaseSeconds + 2 s after
/// the node first saw it (on its monotonic clock), so every lease granted before the hold began
/// has lapsed by then, whatever Redis's clock did.
#[derive(Debug, Clone, PartialEq)]
struct HoldTimer {
    epoch: String,
    ends_at: Duration,
    /// The floor in effect when the hold began: nothing grows during a hold, the floor neither
    /// (a state created anew may carry a larger one).
    floor_units: f64,
}

/// A node's floor under the fleet's shape: its own b × the fleet's reserve / the fleet's maxNodes.
fn fleet_floor(shape: &FleetShape, reply: &FleetReply) -> f64 {
    shape.fleet_ceiling_units * reply.fleet_reserve / u64_as_f64(reply.fleet_max_nodes.max(1))
}

pub(super) fn own_settings(shape: &FleetShape) -> Settings {
    Settings {
        reserve: shape.reserve,
        max_nodes: u64::from(shape.max_nodes),
        lease: shape.lease,
        max_split: shape.max_split,
    }
}

fn fleet_settings(reply: &FleetReply) -> Settings {
    Settings {
        reserve: reply.fleet_reserve,
        max_nodes: reply.fleet_max_nodes,
        lease: Duration::from_millis(reply.fleet_lease_ms),
        max_split: Duration::from_millis(reply.fleet_max_split_ms),
    }
}

/// Whether the fleet's shape differs from this node's own settings (a rolling update).
fn adopts(shape: &FleetShape, reply: &FleetReply) -> bool {
    u64::from(shape.max_nodes) != reply.fleet_max_nodes
        || (shape.reserve - reply.fleet_reserve).abs() > 1e-12
        || millis_u64(shape.lease) != reply.fleet_lease_ms
        || millis_u64(shape.max_split) != reply.fleet_max_split_ms
}

#[derive(Debug, Clone, Default)]
pub(super) struct Memory {
    pub(super) last: Option<LastAnswer>,
    recent: VecDeque<Answer>,
    /// Answers not yet a whole lease old, oldest first, and the newest that is (what a renewal
    /// reports as seen).
    seen: VecDeque<Answer>,
    hold: Option<HoldTimer>,
    over_max_nodes: bool,
    /// The longest leaseSeconds and maxSplitSeconds this node ever ran with (its own or
    /// adopted): its holds last at least that.
    longest_lease: Duration,
    longest_split: Duration,
    adopted: bool,
}

impl Memory {
    /// Takes in an answer received at `received_at` (a renewal's carries its `grant`, a
    /// release's none): the hold timer, the settle bookkeeping, and the events of episodes that
    /// begin with it (a loss, more nodes than `maxNodes`, settings that differ from the fleet's).
    pub(super) fn learn(
        &mut self,
        shape: &FleetShape,
        reply: &FleetReply,
        grant: Option<&Grant>,
        received_at: Duration,
    ) -> Vec<FleetEvent> {
        let mut events = Vec::new();
        if reply.loss {
            events.push(FleetEvent::StateLost);
        }
        let (target_units, slot) = match (grant, &self.last) {
            (Some(grant), _) => (grant.target_units, grant.slot),
            (None, Some(last)) => (last.target_units, last.slot),
            (None, None) => (0.0, true),
        };
        let adopted = adopts(shape, reply);
        if adopted && !self.adopted {
            events.push(FleetEvent::Adopted {
                fleet: fleet_settings(reply),
                own: own_settings(shape),
            });
        }
        self.adopted = adopted;
        let over = !slot;
        if over && !self.over_max_nodes {
            events.push(FleetEvent::OverMaxNodes {
                live: reply.live_nodes,
                max_nodes: reply.fleet_max_nodes,
            });
        }
        self.over_max_nodes = over;
        self.longest_lease = self
            .longest_lease
            .max(shape.lease)
            .max(Duration::from_millis(reply.fleet_lease_ms));
        self.longest_split = self
            .longest_split
            .max(shape.max_split)
            .max(Duration::from_millis(reply.fleet_max_split_ms));
        let hold_length = growth_hold(self.longest_lease, self.longest_split);
        let floor_units = self.floor_units(shape);
        self.hold = match self.hold.take() {
            _ if !reply.held => None,
            Some(timer) if timer.epoch == reply.epoch => Some(timer),
            Some(timer) => Some(HoldTimer {
                epoch: reply.epoch.clone(),
                ends_at: received_at + hold_length,
                floor_units: floor_units.min(timer.floor_units),
            }),
            None => Some(HoldTimer {
                epoch: reply.epoch.clone(),
                ends_at: received_at + hold_length,
                floor_units,
            }),
        };
        let answer = Answer {
            received_at,
            fleet_id: reply.fleet_id.clone(),
            epoch: reply.epoch.clone(),
            version: reply.version,
            charges_through: reply.charges_through,
        };
        if self.recent.len() == RECENT_ANSWERS {
            self.recent.pop_front();
        }
        self.recent.push_back(answer.clone());
        self.seen.push_back(answer);
        self.last = Some(LastAnswer {
            reply: reply.clone(),
            received_at,
            target_units,
            slot,
        });
        events
    }

    /// The fleet's lease length as adopted from the last answer (this node's own before any).
    pub(super) fn lease(&self, shape: &FleetShape) -> Duration {
        self.last.as_ref().map_or(shape.lease, |last| {
            Duration::from_millis(last.reply.fleet_lease_ms)
        })
    }

    /// How long ago a state must have been seen for a report of it to end leases: the hold's
    /// length for the fleet's lease and maxSplitSeconds as adopted (this node's own before any).
    pub(super) fn sweep_age(&self, shape: &FleetShape) -> Duration {
        let max_split = self.last.as_ref().map_or(shape.max_split, |last| {
            Duration::from_millis(last.reply.fleet_max_split_ms)
        });
        growth_hold(self.lease(shape), max_split)
    }

    /// The static floor this node may use: its own before Redis answered; after, none when it
    /// holds no static floor (more nodes than `maxNodes`), else the smaller of its own and the
    /// fleet's (b × the fleet's reserve / the fleet's maxNodes): a smaller floor is always safe.
    /// During a hold, never more than when the hold began.
    pub(super) fn floor_units(&self, shape: &FleetShape) -> f64 {
        let floor = match &self.last {
            None => shape.floor_units(),
            Some(last) if !last.slot => 0.0,
            Some(last) => shape.floor_units().min(fleet_floor(shape, &last.reply)),
        };
        self.hold
            .as_ref()
            .map_or(floor, |timer| floor.min(timer.floor_units))
    }

    /// The fleet's shape in force: adopted from the last answer, this node's own before any.
    pub(super) fn settings(&self, shape: &FleetShape) -> Settings {
        self.last
            .as_ref()
            .map_or_else(|| own_settings(shape), |last| fleet_settings(&last.reply))
    }

    /// Whether the node holds no static floor (more live nodes than the fleet's `maxNodes`).
    pub(super) fn beyond_max_nodes(&self) -> bool {
        self.last.as_ref().is_some_and(|last| !last.slot)
    }

    /// The newest answer received `age` (the sweep's age, [`Memory::sweep_age`]) or more before
    /// `now`, as a report; older ones are forgotten.
    /// Keeps T (docs/fleet-protocol.md, Invariants), with `sweep` in common.lua.
    pub(super) fn seen_at(&mut self, now: Duration, age: Duration) -> Option<Seen> {
        let old_enough = |a: &Answer| a.received_at + age <= now;
        while self.seen.len() > 1 && self.seen.get(1).is_some_and(old_enough) {
            self.seen.pop_front();
        }
        self.seen.front().filter(|a| old_enough(a)).map(|a| Seen {
            fleet_id: a.fleet_id.clone(),
            epoch: a.epoch.clone(),
            version: a.version,
            age: now.saturating_sub(a.received_at),
        })
    }

    /// This node's fair share as of the last answer (0 before any).
    pub(super) fn target(&self) -> f64 {
        self.last.as_ref().map_or(0.0, |last| last.target_units)
    }

    /// The share a node lowers itself towards: its fair share, while growth is allowed. During a
    /// hold nothing can grow, so units given back would only sit unused: a node keeps what it
    /// holds (never more) until the hold is over.
    pub(super) fn lowering_to(&self) -> Option<f64> {
        let held = self.last.as_ref().is_some_and(|last| last.reply.held);
        (!held).then(|| self.target())
    }

    /// Whether a renewal could grow the grant: Redis answered, no hold.
    pub(super) fn can_grow(&self) -> bool {
        self.last.as_ref().is_some_and(|last| !last.reply.held)
    }

    /// What a renewal sent now may settle: the charges of the latest answer (in the current
    /// epoch) that arrived before the latest valid refresh was sent, and the hold, when this
    /// node's hold timer ran out before that send.
    /// Keeps S (docs/fleet-protocol.md, Invariants).
    pub(super) fn settle_args(&self, last_valid_sent: Option<Duration>) -> (u64, Option<String>) {
        let (Some(sent), Some(last)) = (last_valid_sent, &self.last) else {
            return (0, None);
        };
        let epoch = &last.reply.epoch;
        let through = self
            .recent
            .iter()
            .rev()
            .find(|seen| seen.received_at < sent && seen.epoch == *epoch)
            .map_or(0, |seen| seen.charges_through);
        (through, self.can_end_hold(Some(sent)))
    }

    /// The epoch whose hold a valid refresh sent at `sent` may end.
    pub(super) fn can_end_hold(&self, sent: Option<Duration>) -> Option<String> {
        let sent = sent?;
        self.hold
            .as_ref()
            .filter(|timer| timer.ends_at <= sent)
            .map(|timer| timer.epoch.clone())
    }

    /// The fleet id, version and epoch of the last answer ("", 0, "" before any).
    pub(super) fn known(&self) -> Known {
        self.last
            .as_ref()
            .map_or_else(Known::default, |last| Known {
                fleet_id: last.reply.fleet_id.clone(),
                version: last.reply.version,
                epoch: last.reply.epoch.clone(),
            })
    }
}
