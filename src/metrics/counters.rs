//! The counters of one sentinel, kept with atomics: the admit path adds a few relaxed atomic
//! operations, no lock. Each array is indexed by a closed list (`X::COUNT` entries, `x.index()`),
//! so a value cannot be filed under another's slot. Read at scrape time by `families`.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use super::catalog::DURATION_BUCKETS;
use crate::rules::ledger::Settlement;
use crate::rules::{Outcome, Readiness, Reason, RefreshCause, Status, Verdict};

/// Whether a status can be entered with a reason: each reason goes with one status.
pub(super) fn can_enter(to: Status, reason: Reason) -> bool {
    reason.status() == to
}

/// A refusal's counter; a reason admission cannot refuse with (a defect) counts as internal_error.
fn refusal_index(reason: Reason) -> usize {
    debug_assert!(reason.is_refusal(), "refused with {reason:?}");
    if reason.is_refusal() {
        reason.index()
    } else {
        Reason::InternalError.index()
    }
}

/// A float counter on an atomic (units are fractional).
#[derive(Default)]
struct AtomicF64(AtomicU64);

impl AtomicF64 {
    fn add(&self, value: f64) {
        let _ = self.0.fetch_update(Relaxed, Relaxed, |bits| {
            Some((f64::from_bits(bits) + value).to_bits())
        });
    }

    /// `add` for a counter with one writer (a plain load and store: no read-modify-write).
    fn add_single_writer(&self, value: f64) {
        self.0.store(
            (f64::from_bits(self.0.load(Relaxed)) + value).to_bits(),
            Relaxed,
        );
    }

    fn get(&self) -> f64 {
        f64::from_bits(self.0.load(Relaxed))
    }
}

#[derive(Default)]
pub struct Metrics {
    refreshes: [AtomicU64; Outcome::COUNT],
    indeterminate: [AtomicU64; RefreshCause::COUNT],
    duration_buckets: [AtomicU64; DURATION_BUCKETS.len()],
    duration_count: AtomicU64,
    duration_sum: AtomicF64,
    /// [from][to][reason]
    transitions: [[[AtomicU64; Reason::COUNT]; Status::COUNT]; Status::COUNT],
    /// Units admitted, by the status admitted on (`not_ready`'s entry never moves).
    admitted_units: [AtomicF64; Status::COUNT],
    /// Only the refusal reasons' entries ever move or are shown.
    refused: [AtomicU64; Reason::COUNT],
    refused_units: [AtomicF64; Reason::COUNT],
    /// Held units that settled reservations gave back.
    refunded_units: AtomicF64,
    /// Units recorded beyond what was held: a reservation's record or settle beyond its hold, and charges.
    overage_units: AtomicF64,
    /// Refreshes started at once because the ledger reached half the node budget.
    demand_refreshes: AtomicU64,
}

/// The refresh duration histogram as read: cumulative bucket counts (`DURATION_BUCKETS`' order),
/// the count and the sum in seconds.
pub(super) struct Durations {
    pub cumulative: [u64; DURATION_BUCKETS.len()],
    pub count: u64,
    pub sum: f64,
}

impl Metrics {
    /// A refresh that was sent and took `took` (a refresh an open breaker skipped passes `None`).
    pub fn refreshed(&self, verdict: Verdict, took: Option<Duration>) {
        self.refreshes[verdict.outcome().index()].fetch_add(1, Relaxed);
        if let Some(cause) = verdict.cause() {
            self.indeterminate[cause.index()].fetch_add(1, Relaxed);
        }
        if let Some(took) = took {
            let seconds = took.as_secs_f64();
            if let Some(i) = DURATION_BUCKETS.iter().position(|le| seconds <= *le) {
                self.duration_buckets[i].fetch_add(1, Relaxed);
            }
            self.duration_count.fetch_add(1, Relaxed);
            self.duration_sum.add(seconds);
        }
    }

    pub fn transitioned(&self, from: Status, now: &Readiness) {
        debug_assert!(from != now.status && can_enter(now.status, now.reason));
        self.transitions[from.index()][now.status.index()][now.reason.index()]
            .fetch_add(1, Relaxed);
    }

    // Admission runs on the sentinel's JavaScript thread only: these counters have one
    // writer, so a relaxed load and store replaces the (several times dearer) atomic
    // read-modify-write, and a scrape from any thread still reads a whole value.

    pub fn admitted(&self, units: f64, on: Status) {
        self.admitted_units[on.index()].add_single_writer(units);
    }

    pub fn refused(&self, reason: Reason, units: f64) {
        let index = refusal_index(reason);
        let counter = &self.refused[index];
        counter.store(counter.load(Relaxed) + 1, Relaxed);
        self.refused_units[index].add_single_writer(units);
    }

    /// A refresh started on demand (the ledger reached half the node budget).
    pub fn refreshed_on_demand(&self) {
        self.demand_refreshes.fetch_add(1, Relaxed);
    }

    /// A settle or a charge (JavaScript thread only, like admission).
    pub fn settled(&self, settlement: Settlement) {
        self.refunded_units.add_single_writer(settlement.refunded);
        self.overage_units.add_single_writer(settlement.overage);
    }

    /// The refreshes that ended with `outcome` (those an open breaker skipped included).
    pub fn refreshes(&self, outcome: Outcome) -> u64 {
        self.refreshes[outcome.index()].load(Relaxed)
    }

    /// The indeterminate refreshes with `cause`.
    pub fn indeterminate(&self, cause: RefreshCause) -> u64 {
        self.indeterminate[cause.index()].load(Relaxed)
    }

    pub(super) fn durations(&self) -> Durations {
        let mut cumulative = [0; DURATION_BUCKETS.len()];
        let mut sum = 0;
        for (bucket, total) in self.duration_buckets.iter().zip(&mut cumulative) {
            sum += bucket.load(Relaxed);
            *total = sum;
        }
        Durations {
            cumulative,
            count: self.duration_count.load(Relaxed),
            sum: self.duration_sum.get(),
        }
    }

    pub(super) fn transitions(&self, from: Status, to: Status, reason: Reason) -> u64 {
        self.transitions[from.index()][to.index()][reason.index()].load(Relaxed)
    }

    pub(super) fn admitted_units(&self, on: Status) -> f64 {
        self.admitted_units[on.index()].get()
    }

    pub(super) fn refused_count(&self, reason: Reason) -> u64 {
        self.refused[reason.index()].load(Relaxed)
    }

    pub(super) fn refused_units(&self, reason: Reason) -> f64 {
        self.refused_units[reason.index()].get()
    }

    pub(super) fn refunded_units(&self) -> f64 {
        self.refunded_units.get()
    }

    pub(super) fn overage_units(&self) -> f64 {
        self.overage_units.get()
    }

    /// The refreshes started on demand so far.
    pub fn demand_refreshes(&self) -> u64 {
        self.demand_refreshes.load(Relaxed)
    }
}
