//! What a node knows of its fleet between calls to Redis, and the decisions it makes from it:
//! what to promise when renewing, how to read an answer, when to settle and with what cutoff.
//! Plain Rust with the time passed in, like the rules.

use std::time::Duration;

use crate::numbers::saturating_u64;
use crate::rules::lease::{FleetShape, Lease};

/// The fields every script answers with (see `common.lua`, `reply`).
#[derive(Debug, Clone, PartialEq)]
pub struct FleetReply {
    /// Redis time when the script ran, ms.
    pub redis_now_ms: f64,
    pub fleet_id: String,
    pub version: u64,
    /// Redis time before which no grant grows, ms.
    pub hold_until_ms: f64,
    /// A valid refresh sent after `hold_until_ms` has settled the fleet: grants may grow.
    pub settled: bool,
    pub live_nodes: u64,
    pub charged_units: f64,
}

/// What the renew script adds to the common reply.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grant {
    pub grant_units: f64,
    /// This node's max-min fair share as Redis sees it now.
    pub target_units: f64,
    /// The request was older than one Redis already applied: nothing changed.
    pub stale: bool,
    /// This node's reserve or maxNodes differ from the live fleet's: no grant.
    pub mismatch: bool,
}

/// Why an answer could not be read (a Redis that is not running our scripts, or a bug).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MalformedReply;

impl FleetReply {
    /// Reads the common fields, and the grant fields when `with_grant`.
    pub fn parse(
        fields: &[String],
        with_grant: bool,
    ) -> Result<(Self, Option<Grant>), MalformedReply> {
        let number = |i: usize| -> Result<f64, MalformedReply> {
            fields
                .get(i)
                .and_then(|f| f.parse::<f64>().ok())
                .filter(|v| v.is_finite())
                .ok_or(MalformedReply)
        };
        let whole = |i: usize| number(i).map(saturating_u64);
        let reply = FleetReply {
            redis_now_ms: number(0)?,
            fleet_id: fields.get(1).cloned().ok_or(MalformedReply)?,
            version: whole(2)?,
            hold_until_ms: number(3)?,
            settled: whole(4)? == 1,
            live_nodes: whole(5)?,
            charged_units: number(6)?,
        };
        let grant = if with_grant {
            Some(Grant {
                grant_units: number(7)?.max(0.0),
                target_units: number(8)?.max(0.0),
                stale: whole(9)? == 1,
                mismatch: whole(10)? == 1,
            })
        } else {
            None
        };
        Ok((reply, grant))
    }
}

/// The arguments of one renewal.
#[derive(Debug, Clone, PartialEq)]
pub struct Renewal {
    pub seq: u64,
    /// -1: no limit.
    pub want: f64,
    pub keep: f64,
    pub known_id: String,
    pub known_version: u64,
    pub sent_at: Duration,
}

#[derive(Debug, Clone, Default)]
pub struct Session {
    seq: u64,
    /// Fleet id and version from the last answer: a Redis showing another id or an older
    /// version has lost writes.
    known: Option<(String, u64)>,
    /// (Redis time of an answer, local time it was received): maps local times to a lower bound
    /// of the Redis clock.
    clock: Option<(f64, Duration)>,
    /// The fair share from the last renewal answer.
    pub target_units: f64,
    pub last: Option<FleetReply>,
    /// The cutoff of the last settle sent, so each valid refresh settles once at most.
    settled_up_to_ms: f64,
}

impl Session {
    /// Has Redis answered yet?
    pub fn answered(&self) -> bool {
        self.last.is_some()
    }

    /// The next renewal: `keep` is what the node caps itself at until the answer.
    pub fn renewal(&mut self, shape: &FleetShape, keep: f64, now: Duration) -> Renewal {
        self.seq += 1;
        let (known_id, known_version) = self.known.clone().unwrap_or_default();
        Renewal {
            seq: self.seq,
            want: shape.want_units().unwrap_or(-1.0),
            keep,
            known_id,
            known_version,
            sent_at: now,
        }
    }

    /// The fleet id and version of the last answer ("" and 0 before any).
    pub fn known(&self) -> (String, u64) {
        self.known.clone().unwrap_or_default()
    }

    /// Takes in any script's answer, received at `received_at`.
    pub fn answered_with(&mut self, reply: &FleetReply, received_at: Duration) {
        self.known = Some((reply.fleet_id.clone(), reply.version));
        self.clock = Some((reply.redis_now_ms, received_at));
        self.last = Some(reply.clone());
    }

    /// The lease a renewal answer gives, or `None` to keep the current one (a stale answer).
    pub fn lease_from(
        &mut self,
        shape: &FleetShape,
        renewal: &Renewal,
        grant: &Grant,
    ) -> Option<Lease> {
        if grant.stale {
            return None;
        }
        self.target_units = grant.target_units;
        Some(Lease {
            grant_units: grant.grant_units,
            deadline: shape.lease_deadline(renewal.sent_at),
        })
    }

    /// A lower bound of the Redis clock at local time `at`: the answer's Redis time was read
    /// before the answer arrived, so Redis time at `at` ≥ that time + (`at` − arrival).
    pub fn redis_time_at_least(&self, at: Duration) -> Option<f64> {
        let (redis_ms, received) = self.clock?;
        let offset_ms = match at.checked_sub(received) {
            Some(later) => later.as_secs_f64() * 1000.0,
            None => -(received.saturating_sub(at).as_secs_f64() * 1000.0),
        };
        Some(redis_ms + offset_ms)
    }

    /// After a valid refresh sent at `sent_at`: the cutoff to settle with, when settling would
    /// change something (charges wait, or a hold that ended before the send awaits it).
    pub fn settle_cutoff(&self, sent_at: Duration) -> Option<f64> {
        let last = self.last.as_ref()?;
        let cutoff = self.redis_time_at_least(sent_at)?.floor();
        let ends_hold = !last.settled && last.hold_until_ms <= cutoff;
        let clears_charges = last.charged_units > 0.0;
        ((ends_hold || clears_charges) && cutoff > self.settled_up_to_ms).then_some(cutoff)
    }

    pub fn settling(&mut self, cutoff: f64) {
        self.settled_up_to_ms = cutoff;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape() -> FleetShape {
        crate::rules::lease::example_shape()
    }

    fn fields(values: &[&str]) -> Vec<String> {
        values.iter().map(|v| v.to_string()).collect()
    }

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    fn reply(now_ms: f64, hold_until_ms: f64, settled: bool, charged: f64) -> FleetReply {
        FleetReply {
            redis_now_ms: now_ms,
            fleet_id: "f1".into(),
            version: 3,
            hold_until_ms,
            settled,
            live_nodes: 2,
            charged_units: charged,
        }
    }

    #[test]
    fn answers_parse_and_garbage_is_refused() {
        let (reply, grant) = FleetReply::parse(
            &fields(&[
                "1000", "f1", "3", "33000", "0", "2", "12.5", "40", "50", "0", "0",
            ]),
            true,
        )
        .unwrap();
        assert_eq!(reply.charged_units, 12.5);
        assert_eq!(grant.unwrap().target_units, 50.0);
        assert_eq!(
            FleetReply::parse(&fields(&["x"]), false),
            Err(MalformedReply)
        );
        assert_eq!(
            FleetReply::parse(&fields(&["1", "f", "1", "1", "1", "1", "NaN"]), false),
            Err(MalformedReply)
        );
    }

    #[test]
    fn renewals_carry_what_the_node_last_saw_and_a_growing_seq() {
        let mut session = Session::default();
        let first = session.renewal(&shape(), 0.0, secs(1.0));
        assert_eq!(
            (first.seq, first.known_id.as_str(), first.want),
            (1, "", -1.0)
        );
        session.answered_with(&reply(5000.0, 0.0, true, 0.0), secs(1.1));
        let second = session.renewal(&shape(), 10.0, secs(2.0));
        assert_eq!(
            (second.seq, second.known_id.as_str(), second.known_version),
            (2, "f1", 3)
        );
    }

    #[test]
    fn a_lease_runs_from_the_send_and_a_stale_answer_changes_nothing() {
        let mut session = Session::default();
        let renewal = session.renewal(&shape(), 0.0, secs(10.0));
        let fresh = Grant {
            grant_units: 40.0,
            target_units: 50.0,
            stale: false,
            mismatch: false,
        };
        let lease = session.lease_from(&shape(), &renewal, &fresh).unwrap();
        assert_eq!(lease.deadline, secs(10.0 + 29.97 - 1.0));
        let stale = Grant {
            stale: true,
            ..fresh
        };
        assert_eq!(session.lease_from(&shape(), &renewal, &stale), None);
    }

    #[test]
    fn the_redis_clock_is_bounded_from_below_even_for_earlier_moments() {
        let mut session = Session::default();
        session.answered_with(&reply(50_000.0, 0.0, true, 0.0), secs(100.0));
        assert_eq!(session.redis_time_at_least(secs(101.5)), Some(51_500.0));
        assert_eq!(session.redis_time_at_least(secs(99.0)), Some(49_000.0));
    }

    #[test]
    fn settles_only_when_it_would_change_something_and_once_per_cutoff() {
        let mut session = Session::default();
        assert_eq!(session.settle_cutoff(secs(1.0)), None, "no answer yet");
        // Fresh fleet: hold until Redis time 40 000.
        session.answered_with(&reply(10_000.0, 40_000.0, false, 0.0), secs(10.0));
        assert_eq!(
            session.settle_cutoff(secs(20.0)),
            None,
            "sent before the hold ends"
        );
        let cutoff = session.settle_cutoff(secs(40.5)).unwrap();
        assert_eq!(cutoff, 40_500.0);
        session.settling(cutoff);
        assert_eq!(
            session.settle_cutoff(secs(40.5)),
            None,
            "the same refresh settles once"
        );
        session.answered_with(&reply(41_000.0, 40_000.0, true, 0.0), secs(41.0));
        assert_eq!(
            session.settle_cutoff(secs(45.0)),
            None,
            "settled, nothing charged"
        );
        session.answered_with(&reply(46_000.0, 40_000.0, true, 30.0), secs(46.0));
        assert_eq!(
            session.settle_cutoff(secs(47.0)),
            Some(47_000.0),
            "charges wait"
        );
    }
}
