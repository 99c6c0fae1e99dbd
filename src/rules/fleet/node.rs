//! [`FleetNode`]: every decision one node makes about its fleet grant. The lease task calls
//! Redis when [`FleetNode::renewal_due_at`] says so, with the request [`FleetNode::renewal`]
//! builds, and hands the answer to [`FleetNode::apply_renewal`]; the simulation does the same
//! against a real Redis with a fake clock.

use std::collections::VecDeque;
use std::time::Duration;

use super::reply::{FleetReply, Grant};
use super::request::{Known, ReleaseRequest, RenewRequest};
use super::status::{ErrorKind, FleetEvent, FleetStatus, Mode};
use crate::numbers::millis_f64;
use crate::rules::lease::{FleetShape, Lease};

/// Reconnect backoff: doubling from the first to the last, with jitter.
const BACKOFF: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(5));
/// After a loss, no grant grows for leaseSeconds + this (every lease granted before has lapsed).
const HOLD_MARGIN: Duration = Duration::from_secs(2);
/// Monotonic clocks of different machines may run at slightly different rates: the fleet clock
/// is advanced by 99.9 % of what a node measured.
const CLOCK_RATE_MARGIN: f64 = 0.999;
/// How many recent answers a node remembers, to find the one a valid refresh was sent after.
const RECENT_ANSWERS: usize = 4;

/// What the node's sentinel state says at one moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Local {
    /// The grant the admission guard uses, with its deadline.
    pub lease: Option<Lease>,
    /// Grant units the ledger has used: exposure beyond the floor.
    pub used_beyond_floor: f64,
    /// Send time of the latest refresh that answered `valid` (the evidence time).
    pub last_valid_sent: Option<Duration>,
}

impl Local {
    fn usable_at(&self, now: Duration) -> f64 {
        self.lease.map_or(0.0, |lease| lease.usable_at(now))
    }
}

/// What applying a renewal's answer asks of the shell.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// The lease to use from now on (`None`: keep the current one; a stale answer).
    pub lease: Option<Lease>,
    /// The grant grew on a primary with replicas: the grown lease is usable only once `WAIT`
    /// confirms `replicas` replicas hold the renewal.
    pub confirm: Option<Confirm>,
    pub events: Vec<FleetEvent>,
}

/// Growth waiting for `WAIT replicas`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Confirm {
    pub replicas: u64,
    pub grown: Lease,
}

/// The last answer, as the node keeps it.
#[derive(Debug, Clone, PartialEq)]
struct LastAnswer {
    reply: FleetReply,
    received_at: Duration,
    /// This node's fair share and whether it matches the fleet's settings (renewals only).
    target_units: f64,
    mismatch: bool,
}

/// One recent answer, for settling: what it let a later valid refresh settle.
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

#[derive(Debug, Clone)]
pub struct FleetNode {
    shape: FleetShape,
    seq: u64,
    acked_seq: u64,
    last: Option<LastAnswer>,
    recent: VecDeque<Seen>,
    hold: Option<HoldTimer>,
    /// Send time of the latest renewal.
    last_sent: Option<Duration>,
    /// The next regular renewal (every leaseSeconds / 3 ± 10 %).
    regular_at: Duration,
    /// After a failed call: when to try again (backoff).
    retry_at: Option<Duration>,
    failures: u32,
    /// The node lowered its own cap to its share: the next renewal hands the rest back.
    giving_back: bool,
    redis_error: Option<ErrorKind>,
    errors: [u64; ErrorKind::ALL.len()],
    over_max_nodes: bool,
    mismatched: bool,
}

impl FleetNode {
    /// A node that has not called Redis yet: its first renewal is due at once.
    pub fn new(shape: FleetShape) -> Self {
        FleetNode {
            shape,
            seq: 0,
            acked_seq: 0,
            last: None,
            recent: VecDeque::with_capacity(RECENT_ANSWERS),
            hold: None,
            last_sent: None,
            regular_at: Duration::ZERO,
            retry_at: None,
            failures: 0,
            giving_back: false,
            redis_error: None,
            errors: [0; ErrorKind::ALL.len()],
            over_max_nodes: false,
            mismatched: false,
        }
    }

    pub fn shape(&self) -> &FleetShape {
        &self.shape
    }

    /// This node's fair share as of the last answer (0 when its settings differ from the
    /// fleet's, or before any answer).
    fn target(&self) -> f64 {
        self.last
            .as_ref()
            .filter(|last| !last.mismatch)
            .map_or(0.0, |last| last.target_units)
    }

    /// The share a node lowers itself towards: its fair share, while growth is allowed. During a
    /// hold nothing can grow, so units given back would only sit unused: a node keeps what it
    /// holds (never more) until the hold is over.
    fn lowering_to(&self) -> Option<f64> {
        let held = self.last.as_ref().is_some_and(|last| last.reply.held);
        (!held).then(|| self.target())
    }

    /// Differences smaller than this are not worth a Redis call.
    fn slack(&self) -> f64 {
        0.5_f64.max(self.target() * 0.01)
    }

    // ---- when to renew ------------------------------------------------------------------------

    /// When the next renewal is due: after a failure, when the backoff ends; else every
    /// leaseSeconds / 3 (±10 %), and sooner only when a renewal can change the grant: a hold
    /// this node may end, a share to give back, or a grant below the fair share (a joining
    /// node, or one whose others have handed units back).
    pub fn renewal_due_at(&self, now: Duration, local: &Local) -> Duration {
        if let Some(retry) = self.retry_at {
            return retry;
        }
        let Some(last_sent) = self.last_sent else {
            return now;
        };
        if self.can_end_hold(local.last_valid_sent).is_some() || self.giving_back {
            return (last_sent + self.shape.lease / 12).max(now);
        }
        if self.can_grow() && local.usable_at(now) + self.slack() < self.target() {
            return self.regular_at.min(last_sent + self.shape.lease / 10);
        }
        self.regular_at
    }

    /// Whether a renewal could grow the grant: Redis answered, no hold, settings agree.
    fn can_grow(&self) -> bool {
        self.last
            .as_ref()
            .is_some_and(|last| !last.reply.held && !last.mismatch)
    }

    /// Holding more than its fair share (others joined), the node lowers its own cap to
    /// max(used, share): always safe, it then uses less than Redis reserves for it; the next
    /// renewal, due at once, hands the difference back.
    pub fn share_to_give_back(&mut self, now: Duration, local: &Local) -> Option<Lease> {
        self.last.as_ref()?;
        let share = self.lowering_to()?;
        let lease = local.lease?;
        let held = lease.usable_at(now);
        let cap = share.max(local.used_beyond_floor);
        if cap + self.slack() >= held {
            return None;
        }
        self.giving_back = true;
        Some(Lease {
            grant_units: cap,
            ..lease
        })
    }

    // ---- renewing -----------------------------------------------------------------------------

    /// The next renewal, and the cap the node puts on itself until the answer (`keep`: its
    /// grant, lowered towards its fair share but never below what it has used), if lower than
    /// what it holds: Redis may lower the reservation to `keep`.
    pub fn renewal(&mut self, now: Duration, local: &Local) -> (RenewRequest, Option<Lease>) {
        self.seq += 1;
        self.last_sent = Some(now);
        self.giving_back = false;
        let held = local.usable_at(now);
        let keep = match self.lowering_to() {
            Some(share) => held.min(share.max(local.used_beyond_floor)),
            None => held,
        }
        .max(0.0);
        let cap = local
            .lease
            .filter(|lease| lease.usable_at(now) > keep)
            .map(|lease| Lease {
                grant_units: keep,
                ..lease
            });
        let (settle_through, end_hold) = self.settle_args(local.last_valid_sent);
        let request = RenewRequest {
            seq: self.seq,
            want: self.shape.want_units(),
            keep,
            held_units: held,
            known: self.known(),
            acked_seq: self.acked_seq,
            clock_to_ms: self.clock_to(now),
            settle_through,
            end_hold,
            sent_at: now,
        };
        (request, cap)
    }

    /// Takes in a renewal's answer, received at `received_at`; `u` is a uniform sample in [0, 1)
    /// for the next renewal's jitter.
    pub fn apply_renewal(
        &mut self,
        request: &RenewRequest,
        reply: &FleetReply,
        grant: &Grant,
        received_at: Duration,
        u: f64,
    ) -> Applied {
        let mut events = self.succeeded();
        let period = self
            .shape
            .lease
            .mul_f64((1.0 + 0.2 * (u.clamp(0.0, 1.0) - 0.5)) / 3.0);
        self.regular_at = request.sent_at + period;
        if grant.mismatch && !self.mismatched {
            events.push(FleetEvent::Mismatch);
        }
        self.mismatched = grant.mismatch;
        self.learn(reply, received_at, grant, &mut events);
        if grant.stale {
            return Applied {
                lease: None,
                confirm: None,
                events,
            };
        }
        self.acked_seq = request.seq;
        let deadline = self.shape.lease_deadline(request.sent_at);
        let granted = Lease {
            grant_units: grant.grant_units,
            deadline,
        };
        let grew = grant.grant_units > request.held_units;
        if grew && reply.replicas > 0 {
            // Redis reserves the grown grant already, but a failover to a replica that lacks
            // it could hand the growth to another node: use it once `WAIT` says the replicas
            // have it. Until then the node keeps what it held, under the renewed deadline.
            return Applied {
                lease: Some(Lease {
                    grant_units: request.held_units,
                    deadline,
                }),
                confirm: Some(Confirm {
                    replicas: reply.replicas,
                    grown: granted,
                }),
                events,
            };
        }
        Applied {
            lease: Some(granted),
            confirm: None,
            events,
        }
    }

    /// `WAIT` answered: the grown lease is usable when every replica connected at the renewal
    /// acknowledged it. Unconfirmed growth is retried by the next renewal (the grant stays below
    /// the fair share, so it comes sooner).
    pub fn confirmed(&self, confirm: &Confirm, acknowledged: u64) -> Option<Lease> {
        (acknowledged >= confirm.replicas).then_some(confirm.grown)
    }

    /// Takes in the answer's fleet facts: the hold timer, the settle bookkeeping, the episodes
    /// the logger hears of.
    fn learn(
        &mut self,
        reply: &FleetReply,
        received_at: Duration,
        grant: &Grant,
        events: &mut Vec<FleetEvent>,
    ) {
        if reply.loss {
            events.push(FleetEvent::StateLost);
        }
        self.hold = match self.hold.take() {
            _ if !reply.held => None,
            Some(timer) if timer.epoch == reply.epoch => Some(timer),
            _ => Some(HoldTimer {
                epoch: reply.epoch.clone(),
                ends_at: received_at + self.shape.lease + HOLD_MARGIN,
            }),
        };
        let max_nodes = self.shape.max_nodes;
        let over = reply.live_nodes > u64::from(max_nodes);
        if over && !self.over_max_nodes {
            events.push(FleetEvent::OverMaxNodes {
                live: reply.live_nodes,
                max_nodes,
            });
        }
        self.over_max_nodes = over;
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
            target_units: grant.target_units,
            mismatch: grant.mismatch,
        });
    }

    /// What a renewal sent now may settle: the charges of the latest answer (in the current
    /// epoch) that arrived before the latest valid refresh was sent, and the hold, when this
    /// node's hold timer ran out before that send.
    fn settle_args(&self, last_valid_sent: Option<Duration>) -> (u64, Option<String>) {
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
    fn can_end_hold(&self, sent: Option<Duration>) -> Option<String> {
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
    fn clock_to(&self, now: Duration) -> Option<f64> {
        let last = self.last.as_ref()?;
        let since = now.checked_sub(last.received_at)?;
        (since <= self.shape.lease / 2)
            .then(|| last.reply.clock_ms + millis_f64(since) * CLOCK_RATE_MARGIN)
    }

    fn known(&self) -> Known {
        self.last
            .as_ref()
            .map_or_else(Known::default, |last| Known {
                fleet_id: last.reply.fleet_id.clone(),
                version: last.reply.version,
                epoch: last.reply.epoch.clone(),
            })
    }

    // ---- releasing ----------------------------------------------------------------------------

    /// The release on close, if this node ever sent a renewal (Redis may hold a lease for it).
    pub fn release(&mut self, now: Duration, local: &Local) -> Option<ReleaseRequest> {
        if self.seq == 0 {
            return None;
        }
        self.seq += 1;
        Some(ReleaseRequest {
            seq: self.seq,
            used_units: local.used_beyond_floor,
            known: self.known(),
            clock_to_ms: self.clock_to(now),
        })
    }

    /// Takes in a release's answer.
    pub fn apply_release(&mut self, reply: &FleetReply, received_at: Duration) -> Vec<FleetEvent> {
        let mut events = self.succeeded();
        let grant = Grant {
            grant_units: 0.0,
            target_units: 0.0,
            stale: true,
            mismatch: self.mismatched,
        };
        self.learn(reply, received_at, &grant, &mut events);
        events
    }

    // ---- failures -----------------------------------------------------------------------------

    /// A call failed: back off (doubling, jittered by `u` in [0, 1)) and tell the logger when the
    /// kind of failure changed.
    pub fn call_failed(&mut self, now: Duration, kind: ErrorKind, u: f64) -> Vec<FleetEvent> {
        self.errors[kind.index()] += 1;
        self.failures = self.failures.saturating_add(1);
        let (first, last) = BACKOFF;
        let backoff = first
            .saturating_mul(1 << self.failures.min(16))
            .min(last)
            .mul_f64(0.5 + u.clamp(0.0, 1.0) / 2.0);
        self.retry_at = Some(now + backoff);
        let changed = self.redis_error != Some(kind);
        self.redis_error = Some(kind);
        if changed {
            vec![FleetEvent::RedisError(Some(kind))]
        } else {
            Vec::new()
        }
    }

    /// A call succeeded: the backoff ends, and the logger hears that Redis answers again.
    fn succeeded(&mut self) -> Vec<FleetEvent> {
        self.failures = 0;
        self.retry_at = None;
        match self.redis_error.take() {
            Some(_) => vec![FleetEvent::RedisError(None)],
            None => Vec::new(),
        }
    }

    // ---- the read-out -------------------------------------------------------------------------

    /// `sentinel.fleet()` now, for the lease the admission guard uses.
    pub fn status(&self, now: Duration, lease: Option<Lease>) -> FleetStatus {
        let grant = lease.map_or(0.0, |lease| lease.usable_at(now));
        let floor = self.shape.floor_units();
        let answered = self.last.as_ref().map(|last| &last.reply);
        FleetStatus {
            mode: match (answered, grant > 0.0) {
                (None, _) => Mode::Connecting,
                (Some(_), true) => Mode::Leased,
                (Some(_), false) => Mode::Floor,
            },
            grant_units: grant,
            floor_units: floor,
            node_budget_units: floor + grant,
            lease_remaining: match lease {
                Some(lease) if grant > 0.0 => lease.deadline.saturating_sub(now),
                _ => Duration::ZERO,
            },
            live_nodes: answered.map(|reply| reply.live_nodes),
            max_nodes: self.shape.max_nodes,
            charged_units: answered.map(|reply| reply.charged_units),
            growth_held: answered.is_none_or(|reply| reply.held),
            redis_error: self.redis_error,
            errors: self.errors,
        }
    }
}
