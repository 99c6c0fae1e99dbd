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

/// The tokio deadline for a rules-time moment (a `Duration` since the origin).
pub fn deadline(at: Duration) -> tokio::time::Instant {
    tokio::time::Instant::from_std(origin() + at)
}
