//! What a fleet node remembers of Redis's answers, and what it makes of them: its fair share, the
//! hold it is timing, which charges a valid refresh may settle, how far the fleet clock may move,
//! and the episodes its logger has already heard of.

use std::collections::VecDeque;
use std::time::Duration;

use super::reply::{FleetReply, Grant};
use super::request::Known;
use super::status::FleetEvent;
use crate::numbers::millis_f64;
use crate::rules::budget::lease::FleetShape;

/// After a loss, no grant grows for leaseSeconds + this (every lease granted before has lapsed).
const HOLD_MARGIN: Duration = Duration::from_secs(2);
/// Monotonic clocks of different machines may run at slightly different rates: the fleet clock
/// is advanced by 99.9 % of what a node measured.
const CLOCK_RATE_MARGIN: f64 = 0.999;
/// How many recent answers a node remembers, to find the one a valid refresh was sent after.
const RECENT_ANSWERS: usize = 4;

/// The last answer, as the node keeps it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct LastAnswer {
    pub(super) reply: FleetReply,
    received_at: Duration,
    /// This node's fair share, and whether its settings match the fleet's (renewals only).
    target_units: f64,
    mismatch: bool,
}

/// One recent answer, for settling: what it lets a later valid refresh settle.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    received_at: Duration,
    epoch: String,
    charges_through: u64,
}

/// The hold of one epoch as this node times it: it ends for this node leaseSeconds + 2 s after
/// the node first saw it (on its monotonic clock), so every lease granted before the hold began
/// has lapsed by then, whatever Redis's clock did.
#[derive(Debug, Clone, PartialEq)]
struct HoldTimer {
    epoch: String,
    ends_at: Duration,
}

#[derive(Debug, Clone, Default)]
pub(super) struct Memory {
    pub(super) last: Option<LastAnswer>,
    recent: VecDeque<Seen>,
    hold: Option<HoldTimer>,
    over_max_nodes: bool,
    mismatched: bool,
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
        let (target_units, mismatch) = match (grant, &self.last) {
            (Some(grant), _) => (grant.target_units, grant.mismatch),
            (None, Some(last)) => (last.target_units, last.mismatch),
            (None, None) => (0.0, false),
        };
        if mismatch && !self.mismatched {
            events.push(FleetEvent::Mismatch);
        }
        self.mismatched = mismatch;
        let over = reply.live_nodes > u64::from(shape.max_nodes);
        if over && !self.over_max_nodes {
            events.push(FleetEvent::OverMaxNodes {
                live: reply.live_nodes,
                max_nodes: shape.max_nodes,
            });
        }
        self.over_max_nodes = over;
        self.hold = match self.hold.take() {
            _ if !reply.held => None,
            Some(timer) if timer.epoch == reply.epoch => Some(timer),
            _ => Some(HoldTimer {
                epoch: reply.epoch.clone(),
                ends_at: received_at + shape.lease + HOLD_MARGIN,
            }),
        };
        if self.recent.len() == RECENT_ANSWERS {
            self.recent.pop_front();
        }
        self.recent.push_back(Seen {
            received_at,
            epoch: reply.epoch.clone(),
            charges_through: reply.charges_through,
        });
        self.last = Some(LastAnswer {
            reply: reply.clone(),
            received_at,
            target_units,
            mismatch,
        });
        events
    }

    /// This node's fair share as of the last answer (0 when its settings differ from the
    /// fleet's, or before any answer).
    pub(super) fn target(&self) -> f64 {
        self.last
            .as_ref()
            .filter(|last| !last.mismatch)
            .map_or(0.0, |last| last.target_units)
    }

    /// The share a node lowers itself towards: its fair share, while growth is allowed. During a
    /// hold nothing can grow, so units given back would only sit unused: a node keeps what it
    /// holds (never more) until the hold is over.
    pub(super) fn lowering_to(&self) -> Option<f64> {
        let held = self.last.as_ref().is_some_and(|last| last.reply.held);
        (!held).then(|| self.target())
    }

    /// Whether a renewal could grow the grant: Redis answered, no hold, settings agree.
    pub(super) fn can_grow(&self) -> bool {
        self.last
            .as_ref()
            .is_some_and(|last| !last.reply.held && !last.mismatch)
    }

    /// What a renewal sent now may settle: the charges of the latest answer (in the current
    /// epoch) that arrived before the latest valid refresh was sent, and the hold, when this
    /// node's hold timer ran out before that send.
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

    /// The fleet clock Redis may advance to: the last answer's clock plus what this node's
    /// monotonic clock saw pass since it arrived (a lower bound of the time that passed since
    /// Redis read that clock). Only from an answer younger than half a lease: lower bounds
    /// from different nodes lose a little each, and an old one could let the clock jump.
    pub(super) fn clock_to(&self, shape: &FleetShape, now: Duration) -> Option<f64> {
        let last = self.last.as_ref()?;
        let since = now.checked_sub(last.received_at)?;
        (since <= shape.lease / 2)
            .then(|| last.reply.clock_ms + millis_f64(since) * CLOCK_RATE_MARGIN)
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
