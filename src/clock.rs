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
