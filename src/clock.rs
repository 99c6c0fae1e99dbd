//! The one monotonic clock the shell reads. Rules take its readings as `now` arguments.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn origin() -> Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    *ORIGIN.get_or_init(Instant::now)
}

/// Time since the process-wide origin: the `now` every rule expects.
pub fn now() -> Duration {
    origin().elapsed()
}

/// How far out a deadline that `Instant` cannot hold is put: as good as never for a sentinel.
const FAR_FUTURE: Duration = Duration::from_secs(365 * 24 * 3600);

/// The tokio deadline for a rules-time moment (a `Duration` since the origin). A moment past
/// what the platform's `Instant` can hold becomes a year from now instead of a panic.
pub fn deadline(at: Duration) -> tokio::time::Instant {
    let at = origin()
        .checked_add(at)
        .unwrap_or_else(|| Instant::now() + FAR_FUTURE);
    tokio::time::Instant::from_std(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_past_any_instant_is_far_away_not_a_panic() {
        let far = deadline(Duration::MAX);
        assert!(far > tokio::time::Instant::now() + Duration::from_secs(300 * 24 * 3600));
        assert!(
            deadline(Duration::from_secs(1))
                <= tokio::time::Instant::now() + Duration::from_secs(1)
        );
    }
}
