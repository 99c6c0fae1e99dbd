//! A rolling count of call results over the last `span` (the breaker's rolling window), in
//! constant time and memory.
//!
//! The span is cut into [`BUCKETS`] buckets, each stamped with the epoch (`now / bucket
//! length`) it counts for. Recording touches one bucket; totals add up the buckets whose epoch
//! is still inside the span. A bucket from an older epoch is stale and counts nothing, so an
//! idle gap longer than the span leaves no old samples behind, and the cost of a result does
//! not grow with the number of results in the span.

use crate::numbers::{nanos_u64, u64_as_f64};
use std::time::Duration;

/// Granularity: samples leave the span within one bucket (a tenth of it) of their age.
pub const BUCKETS: usize = 10;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Bucket {
    epoch: u64,
    successes: u64,
    failures: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    pub successes: u64,
    pub failures: u64,
}

impl Totals {
    pub fn calls(&self) -> u64 {
        self.successes + self.failures
    }

    /// Failures / calls; 0 without calls.
    pub fn failure_rate(&self) -> f64 {
        match self.calls() {
            0 => 0.0,
            calls => u64_as_f64(self.failures) / u64_as_f64(calls),
        }
    }
}

/// The bucket an epoch counts in.
fn bucket_index(epoch: u64) -> usize {
    // The remainder is below BUCKETS, so it fits any usize.
    usize::try_from(epoch % BUCKETS as u64).unwrap_or(0)
}

#[derive(Debug, Clone)]
pub struct RollingCounts {
    bucket_nanos: u64,
    buckets: [Bucket; BUCKETS],
}

impl RollingCounts {
    pub fn new(span: Duration) -> Self {
        let bucket_nanos = (nanos_u64(span) / BUCKETS as u64).max(1);
        RollingCounts {
            bucket_nanos,
            buckets: [Bucket::default(); BUCKETS],
        }
    }

    fn epoch(&self, now: Duration) -> u64 {
        // u64 nanoseconds cover 584 years of uptime, and a u64 division is several times
        // cheaper than a u128 one (this runs on every recorded result).
        // +1 so that epoch 0 (the default of an unused bucket) never looks current.
        nanos_u64(now) / self.bucket_nanos + 1
    }

    pub fn record(&mut self, failed: bool, now: Duration) {
        let epoch = self.epoch(now);
        let bucket = &mut self.buckets[bucket_index(epoch)];
        if bucket.epoch != epoch {
            *bucket = Bucket {
                epoch,
                ..Bucket::default()
            };
        }
        if failed {
            bucket.failures += 1;
        } else {
            bucket.successes += 1;
        }
    }

    /// The results of the last `BUCKETS` epochs, the current one included.
    pub fn totals(&self, now: Duration) -> Totals {
        let current = self.epoch(now);
        let oldest = current.saturating_sub(BUCKETS as u64 - 1);
        self.buckets
            .iter()
            .filter(|b| b.epoch >= oldest && b.epoch <= current)
            .fold(Totals::default(), |t, b| Totals {
                successes: t.successes + b.successes,
                failures: t.failures + b.failures,
            })
    }

    pub fn clear(&mut self) {
        self.buckets = [Bucket::default(); BUCKETS];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    #[test]
    fn counts_results_inside_the_span() {
        let mut counts = RollingCounts::new(ms(1000));
        counts.record(false, ms(0));
        counts.record(true, ms(450));
        counts.record(true, ms(899));
        assert_eq!(
            counts.totals(ms(900)),
            Totals {
                successes: 1,
                failures: 2
            }
        );
        assert!((counts.totals(ms(900)).failure_rate() - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn results_leave_within_one_bucket_of_the_span() {
        let mut counts = RollingCounts::new(ms(1000));
        counts.record(true, ms(0)); // bucket [0, 100)
        assert_eq!(counts.totals(ms(999)).failures, 1);
        assert_eq!(counts.totals(ms(1000)).failures, 0, "gone after one span");
    }

    #[test]
    fn an_idle_gap_longer_than_the_span_leaves_nothing_behind() {
        let mut counts = RollingCounts::new(ms(1000));
        for i in 0..500 {
            counts.record(i % 2 == 0, ms(i));
        }
        // An hour later the buckets' slots come round again with new epochs.
        let later = ms(3_600_000);
        assert_eq!(counts.totals(later), Totals::default());
        counts.record(true, later);
        assert_eq!(
            counts.totals(later),
            Totals {
                successes: 0,
                failures: 1
            }
        );
    }

    #[test]
    fn a_bucket_reused_by_a_later_epoch_starts_from_zero() {
        let mut counts = RollingCounts::new(ms(1000));
        counts.record(true, ms(50));
        counts.record(false, ms(1050)); // same slot, ten buckets later
        assert_eq!(
            counts.totals(ms(1050)),
            Totals {
                successes: 1,
                failures: 0
            }
        );
    }
}
