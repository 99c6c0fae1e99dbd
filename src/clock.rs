//! The clock the shell is handed. Rules take its readings as `now` arguments; the shell reads it
//! and sleeps on it through the [`Clock`] its sentinel holds (`SharedSentinel::clock`), never
//! through an ambient `Instant::now()`, so that the refresh loop's timing runs on fake time in
//! tests (`crate::refresher`'s cadence tests).
//!
//! The fake is tokio's own paused clock (`#[tokio::test(start_paused = true)]`), read through
//! [`RuntimeClock`], rather than a hand-rolled one like governor's `FakeRelativeClock`: the shell
//! waits with `tokio::select!` on sleeps, `Notify`s and the authority at once, and a paused
//! runtime moves time forward only once every task is idle, to the next timer. A test thus never
//! races the loop it drives, and every tokio timer follows the fake time; a hand-rolled fake would
//! need its own registry of sleepers and a way to know that the loop has parked before advancing.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// What the shell reads the time from and sleeps on. Both must be the same clock: a loop that
/// reads one clock and sleeps on another never sees its pause end.
pub trait Clock: Send + Sync + 'static {
    /// Time since this clock's origin: the `now` every rule expects.
    fn now(&self) -> Duration;

    /// The runtime instant at which [`now`](Clock::now) reads `at`.
    fn deadline(&self, at: Duration) -> tokio::time::Instant;

    /// Sleeps until [`now`](Clock::now) reads `at` (at once if it already has).
    fn sleep_until(&self, at: Duration) -> tokio::time::Sleep {
        tokio::time::sleep_until(self.deadline(at))
    }
}

/// The operating system's monotonic clock, from one origin for the whole process: what every
/// sentinel runs on outside tests.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

fn origin() -> Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    *ORIGIN.get_or_init(Instant::now)
}

/// How far out a deadline that `Instant` cannot hold is put: as good as never for a sentinel.
const FAR_FUTURE: Duration = Duration::from_secs(365 * 24 * 3600);

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        origin().elapsed()
    }

    /// A moment past what the platform's `Instant` can hold becomes a year from now instead of
    /// a panic.
    fn deadline(&self, at: Duration) -> tokio::time::Instant {
        let at = origin()
            .checked_add(at)
            .unwrap_or_else(|| Instant::now() + FAR_FUTURE);
        tokio::time::Instant::from_std(at)
    }
}

/// A clock that reads what it was last told: for a part whose time comes from JavaScript (a
/// `CircuitBreaker`'s `now` option). It moves only when told, and never back: a reading below
/// the last one counts as time standing still.
#[derive(Debug, Default)]
pub struct ToldClock(AtomicU64);

impl ToldClock {
    /// Time is now `at` (since the teller's origin), unless it was told later already.
    pub fn tell(&self, at: Duration) {
        let nanos = crate::numbers::nanos_u64(at);
        self.0.fetch_max(nanos, Ordering::AcqRel);
    }
}

impl Clock for ToldClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.0.load(Ordering::Acquire))
    }

    /// Nothing sleeps on a told clock (a breaker never waits): when it will read `at` is not
    /// known, so as good as never.
    fn deadline(&self, _at: Duration) -> tokio::time::Instant {
        tokio::time::Instant::now() + FAR_FUTURE
    }
}

/// The clock of the tokio runtime it is read on, from the moment it was made: under a paused
/// test runtime it reads the fake time that the runtime advances.
#[cfg(test)]
#[derive(Debug, Clone, Copy)]
pub struct RuntimeClock {
    origin: tokio::time::Instant,
}

#[cfg(test)]
impl RuntimeClock {
    /// Reads 0 now. Make it on the runtime it will be read on.
    pub fn starting_now() -> Self {
        RuntimeClock {
            origin: tokio::time::Instant::now(),
        }
    }
}

#[cfg(test)]
impl Clock for RuntimeClock {
    fn now(&self) -> Duration {
        tokio::time::Instant::now().saturating_duration_since(self.origin)
    }

    fn deadline(&self, at: Duration) -> tokio::time::Instant {
        self.origin
            .checked_add(at)
            .unwrap_or_else(|| tokio::time::Instant::now() + FAR_FUTURE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_told_clock_reads_what_it_was_told_and_never_goes_back() {
        let clock = ToldClock::default();
        assert_eq!(clock.now(), Duration::ZERO);
        clock.tell(Duration::from_millis(1500));
        assert_eq!(clock.now(), Duration::from_millis(1500));
        clock.tell(Duration::from_millis(1000));
        assert_eq!(clock.now(), Duration::from_millis(1500), "stands still");
    }

    #[test]
    fn a_deadline_past_any_instant_is_far_away_not_a_panic() {
        let far = SystemClock.deadline(Duration::MAX);
        assert!(far > tokio::time::Instant::now() + Duration::from_secs(300 * 24 * 3600));
        assert!(
            SystemClock.deadline(Duration::from_secs(1))
                <= tokio::time::Instant::now() + Duration::from_secs(1)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_runtime_clock_reads_and_sleeps_on_the_paused_time() {
        let clock = RuntimeClock::starting_now();
        assert_eq!(clock.now(), Duration::ZERO);
        let real = Instant::now();
        clock.sleep_until(Duration::from_secs(3600)).await;
        assert_eq!(clock.now(), Duration::from_secs(3600));
        assert!(
            real.elapsed() < Duration::from_secs(60),
            "an hour passed on fake time only"
        );
        assert!(clock.deadline(Duration::MAX) > tokio::time::Instant::now());
    }
}
