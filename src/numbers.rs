//! Conversions between the number types the crate mixes (f64 units and JavaScript numbers, u64
//! counters and tokens, `Duration`s). Each says what happens at its edges, so no bare `as` cast
//! elsewhere has to be trusted (the cast lints in Cargo.toml enforce that).

use std::time::Duration;

/// A counter or small code as a JavaScript/Prometheus number: exact below 2^53; above, the
/// nearest f64 (what Prometheus stores anyway), never a wrong magnitude.
#[allow(clippy::cast_precision_loss)]
pub fn u64_as_f64(value: u64) -> f64 {
    value as f64
}

/// A float as a whole u64, rounding toward zero and saturating: negatives and NaN give 0, too
/// large gives `u64::MAX` (Rust's float-to-int `as` is defined to saturate; this names it).
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
pub fn saturating_u64(value: f64) -> u64 {
    value as u64
}

/// As [`saturating_u64`], into u32: for whole numbers the option schema already bounded.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
pub fn saturating_u32(value: f64) -> u32 {
    value as u32
}

/// Whole milliseconds, saturating at `u64::MAX` (585 million years).
pub fn millis_u64(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Whole nanoseconds, saturating at `u64::MAX` (584 years).
pub fn nanos_u64(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_to_whole_rounds_toward_zero_and_saturates() {
        assert_eq!(saturating_u64(2.9), 2);
        assert_eq!(saturating_u64(-1.0), 0);
        assert_eq!(saturating_u64(f64::NAN), 0);
        assert_eq!(saturating_u64(1e30), u64::MAX);
        assert_eq!(saturating_u32(4_294_967_296.0), u32::MAX);
        assert_eq!(saturating_u32(10_000.0), 10_000);
    }

    #[test]
    fn counters_are_exact_below_two_to_the_53() {
        assert_eq!(u64_as_f64(9_007_199_254_740_992), 9_007_199_254_740_992.0);
        assert_eq!(u64_as_f64(3), 3.0);
    }

    #[test]
    fn durations_saturate_instead_of_wrapping() {
        assert_eq!(millis_u64(Duration::from_millis(1500)), 1500);
        assert_eq!(millis_u64(Duration::MAX), u64::MAX);
        assert_eq!(nanos_u64(Duration::from_secs(2)), 2_000_000_000);
        assert_eq!(nanos_u64(Duration::MAX), u64::MAX);
    }
}
