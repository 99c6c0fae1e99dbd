//! [`FleetNode`]: every decision one node makes about its fleet grant. The lease task calls
//! Redis when [`FleetNode::renewal_due_at`] says so, with the request [`FleetNode::renewal`]
//! builds, and hands the answer to [`FleetNode::apply_renewal`], each through
//! `rules::fleet_exchange`, which runs them with the node's sentinel state; the explorer and the
//! simulation call the same functions.

use std::time::Duration;

use super::failures::Failures;
use super::memory::{own_settings, Memory};
use super::reply::{FleetReply, Grant};
use super::request::{ReleaseRequest, RenewRequest};
use super::status::{ErrorKind, FleetEvent, FleetStatus, Mode};
use crate::rules::budget::lease::lease_deadline;
use crate::rules::budget::lease::{FleetShape, Lease};

/// What the node's sentinel state says at one moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Local {
    /// The grant the admission guard uses, with its deadline.
    pub lease: Option<Lease>,
    /// Grant units the ledger has used: exposure beyond the floor.
    pub used_beyond_floor: f64,
    /// Floor units the ledger has used: min(exposure, the static floor).
    pub floor_used: f64,
    /// Send time of the latest refresh that answered `valid` (the evidence time).
    pub last_valid_sent: Option<Duration>,
}

impl Local {
    fn usable_at(&self, now: Duration) -> f64 {
        self.lease.map_or(0.0, |lease| lease.usable_at(now))
    }
}

/// The part of a grant the node may use. While growth is held (a fresh state, or a loss), Redis
/// grants a node its keep, which may count units it used beyond what it holds now (from a lapsed
/// grant, or a floor the new state does not give it): Redis reserves them so that no other node
/// is lent them, but they are spent, not new room. So the node uses at most what it held when it
/// sent the renewal. Keeps C across a split brain: a grant made by an old primary that was then
/// fenced, and used, comes back as a keep, never as room to spend again beside what the other
/// primary lent meanwhile.
fn usable_grant(reply: &FleetReply, grant: &Grant, request: &RenewRequest) -> f64 {
    match reply.held {
        true => grant.grant_units.min(request.held_units),
        false => grant.grant_units,
    }
}

/// What applying a renewal's answer asks of the shell.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// The lease to use from now on (`None`: keep the current one; a stale answer).
    pub lease: Option<Lease>,
    /// The static floor to use from now on (the fleet's shape, or none beyond `maxNodes`).
    pub floor_units: f64,
    /// This node's lease had ended in Redis, charged whole (grant and static floor): what the
    /// ledger used under it needs no reservation any more.
    pub lease_ended: bool,
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

#[derive(Debug, Clone)]
pub struct FleetNode {
    shape: FleetShape,
    seq: u64,
    /// The seq of the last renewal Redis answered (0: none), and the version it wrote.
    acked_seq: u64,
    acked_version: u64,
    memory: Memory,
    failures: Failures,
    /// Send time of the latest renewal.
    last_sent: Option<Duration>,
    /// The next regular renewal (every leaseSeconds / 3 ± 10 %).
    regular_at: Duration,
    /// The node lowered its own cap to its share: the next renewal hands the rest back.
    giving_back: bool,
}

impl FleetNode {
    /// A node that has not called Redis yet: its first renewal is due at once.
    pub fn new(shape: FleetShape) -> Self {
        FleetNode {
            shape,
            seq: 0,
            acked_seq: 0,
            acked_version: 0,
            memory: Memory::default(),
            failures: Failures::default(),
            last_sent: None,
            regular_at: Duration::ZERO,
            giving_back: false,
        }
    }

    pub fn shape(&self) -> &FleetShape {
        &self.shape
    }

    /// The fleet's lease length: adopted from Redis's answers, this node's own before any.
    fn lease(&self) -> Duration {
        self.memory.lease(&self.shape)
    }

    /// The static floor this node uses now (see `Memory::floor_units`).
    pub fn floor_units(&self) -> f64 {
        self.memory.floor_units(&self.shape)
    }

    /// Differences smaller than this are not worth a Redis call.
    fn slack(&self) -> f64 {
        0.5_f64.max(self.memory.target() * 0.01)
    }

    // ---- when to renew ------------------------------------------------------------------------

    /// When the next renewal is due: after a failure, when the backoff ends; else every
    /// leaseSeconds / 3 (±10 %), and sooner only when a renewal can change the grant: a hold
    /// this node may end, a share to give back, or a grant below the fair share (a joining
    /// node, or one whose others have handed units back).
    pub fn renewal_due_at(&self, now: Duration, local: &Local) -> Duration {
        if let Some(retry) = self.failures.retry_at {
            return retry;
        }
        let Some(last_sent) = self.last_sent else {
            return now;
        };
        let ends_hold = self.memory.can_end_hold(local.last_valid_sent).is_some();
        if ends_hold || self.giving_back {
            return (last_sent + self.lease() / 12).max(now);
        }
        if self.memory.can_grow() && local.usable_at(now) + self.slack() < self.memory.target() {
            return self.regular_at.min(last_sent + self.lease() / 10);
        }
        self.regular_at
    }

    /// Holding more than its fair share (others joined), the node lowers its own cap to
    /// max(used, share): always safe, it then uses less than Redis reserves for it; the next
    /// renewal, due at once, hands the difference back.
    pub fn share_to_give_back(&mut self, now: Duration, local: &Local) -> Option<Lease> {
        self.memory.last.as_ref()?;
        let share = self.memory.lowering_to()?;
        let lease = local.lease?;
        let cap = share.max(local.used_beyond_floor);
        if cap + self.slack() >= lease.usable_at(now) {
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
    /// grant, lowered towards its fair share but never below what it has used, lapsed or not),
    /// if lower than what it holds: Redis may lower the reservation to `keep`.
    pub fn renewal(&mut self, now: Duration, local: &Local) -> (RenewRequest, Option<Lease>) {
        self.seq += 1;
        self.last_sent = Some(now);
        self.giving_back = false;
        let held = local.usable_at(now);
        let used = local.used_beyond_floor;
        // Keeps U (docs/fleet-protocol.md, Invariants). Units the ledger used stay reserved even
        // when the grant they came from has lapsed: they may have been spent, and Redis may not
        // have ended (and charged) that lease yet.
        let keep = match self.memory.lowering_to() {
            Some(share) => held.min(share.max(used)),
            None => held,
        }
        .max(used)
        .max(0.0);
        let cap = local
            .lease
            .filter(|lease| lease.usable_at(now) > keep)
            .map(|lease| Lease {
                grant_units: keep,
                ..lease
            });
        let (settle_through, end_hold) = self.memory.settle_args(local.last_valid_sent);
        let request = RenewRequest {
            seq: self.seq,
            want: self.shape.want_beyond(self.floor_units()),
            keep,
            held_units: held,
            floor_units: self.floor_units(),
            floor_used: local.floor_used,
            known: self.memory.known(),
            acked_seq: self.acked_seq,
            acked_version: self.acked_version,
            seen: self.memory.seen_at(now, self.memory.sweep_age(&self.shape)),
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
        let mut events = self.failures.succeeded();
        events.extend(
            self.memory
                .learn(&self.shape, reply, Some(grant), received_at),
        );
        let lease = self.lease();
        let period = lease.mul_f64((1.0 + 0.2 * (u.clamp(0.0, 1.0) - 0.5)) / 3.0);
        self.regular_at = request.sent_at + period;
        let floor_units = self.floor_units();
        if grant.stale {
            return Applied {
                lease: None,
                floor_units,
                lease_ended: false,
                confirm: None,
                events,
            };
        }
        self.acked_seq = request.seq;
        self.acked_version = reply.version;
        let lease_ended = grant.ended;
        let deadline = lease_deadline(request.sent_at, lease);
        let granted = Lease {
            grant_units: usable_grant(reply, grant, request),
            deadline,
        };
        if grant.grant_units > request.held_units && reply.replicas > 0 {
            // Redis reserves the grown grant already, but a failover to a replica that lacks
            // it could hand the growth to another node: use it once `WAIT` says the replicas
            // have it. Until then the node keeps what it held, under the renewed deadline.
            return Applied {
                lease: Some(Lease {
                    grant_units: request.held_units,
                    deadline,
                }),
                floor_units,
                lease_ended,
                confirm: Some(Confirm {
                    replicas: reply.replicas,
                    grown: granted,
                }),
                events,
            };
        }
        Applied {
            lease: Some(granted),
            floor_units,
            lease_ended,
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
            floor_used: local.floor_used,
            known: self.memory.known(),
            seen: self.memory.seen_at(now, self.memory.sweep_age(&self.shape)),
        })
    }

    /// Takes in a release's answer.
    pub fn apply_release(&mut self, reply: &FleetReply, received_at: Duration) -> Vec<FleetEvent> {
        let mut events = self.failures.succeeded();
        events.extend(self.memory.learn(&self.shape, reply, None, received_at));
        events
    }

    /// A call failed: back off, and tell the logger when the kind of failure changed.
    pub fn call_failed(&mut self, now: Duration, kind: ErrorKind, u: f64) -> Vec<FleetEvent> {
        self.failures.failed(now, kind, u)
    }

    // ---- the read-out -------------------------------------------------------------------------

    /// `sentinel.fleet()` now, for the lease the admission guard uses.
    pub fn status(&self, now: Duration, lease: Option<Lease>) -> FleetStatus {
        let grant = lease.map_or(0.0, |lease| lease.usable_at(now));
        let floor = self.floor_units();
        let answered = self.memory.last.as_ref().map(|last| &last.reply);
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
            settings: self.memory.settings(&self.shape),
            configured: own_settings(&self.shape),
            beyond_max_nodes: self.memory.beyond_max_nodes(),
            charged_units: answered.map(|reply| reply.charged_units),
            growth_held: answered.is_none_or(|reply| reply.held),
            redis_error: self.failures.last_kind,
            errors: self.failures.counts,
        }
    }
}
