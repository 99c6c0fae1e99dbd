//! A fleet node's failed Redis calls: the backoff before the next try, the kind of the last
//! failure (`redisError`), the counts the metrics show, and one event per change of kind.

use std::time::Duration;

use super::status::{ErrorKind, FleetEvent};

/// Reconnect backoff: doubling from the first to the last, with jitter.
const BACKOFF: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(5));

#[derive(Debug, Clone, Default)]
pub(super) struct Failures {
    /// Consecutive failed calls.
    consecutive: u32,
    /// When to try again after the last failure (`None` after a success).
    pub(super) retry_at: Option<Duration>,
    pub(super) last_kind: Option<ErrorKind>,
    /// Failed calls by kind, in [`ErrorKind::ALL`]'s order.
    pub(super) counts: [u64; ErrorKind::COUNT],
}

impl Failures {
    /// A call failed at `now`: back off (doubling, jittered by `u` in [0, 1)); the logger hears
    /// of it when the kind of failure changed.
    pub(super) fn failed(&mut self, now: Duration, kind: ErrorKind, u: f64) -> Vec<FleetEvent> {
        self.counts[kind.index()] += 1;
        self.consecutive = self.consecutive.saturating_add(1);
        let (first, last) = BACKOFF;
        let backoff = first
            .saturating_mul(1 << self.consecutive.min(16))
            .min(last)
            .mul_f64(0.5 + u.clamp(0.0, 1.0) / 2.0);
        self.retry_at = Some(now + backoff);
        let changed = self.last_kind != Some(kind);
        self.last_kind = Some(kind);
        if changed {
            vec![FleetEvent::RedisError(Some(kind))]
        } else {
            Vec::new()
        }
    }

    /// A call succeeded: the backoff ends, and the logger hears that Redis answers again.
    pub(super) fn succeeded(&mut self) -> Vec<FleetEvent> {
        self.consecutive = 0;
        self.retry_at = None;
        match self.last_kind.take() {
            Some(_) => vec![FleetEvent::RedisError(None)],
            None => Vec::new(),
        }
    }
}
