//! The refresh cadence: how often the authority is asked and how long one refresh may take,
//! which must fit inside the stale window (README, the budget math).

use std::fmt;
use std::time::Duration;

use super::JsNumber;

/// The shortest pause between two refreshes, ms: anything shorter hammers the authority (50
/// calls a second at most). With the default cadence (pauses from 0.3 w) it puts the shortest
/// usable window at [`MIN_DEFAULT_WINDOW_MS`].
pub const MIN_REFRESH_INTERVAL_MS: f64 = 20.0;

/// The shortest window the default cadence can refresh within: 0.3 w ≥ 20 ms.
pub const MIN_DEFAULT_WINDOW_MS: f64 = MIN_REFRESH_INTERVAL_MS / 0.3;

/// The `refresh` options as given, milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CadenceInput {
    pub min_interval_ms: Option<f64>,
    pub max_interval_ms: Option<f64>,
    pub timeout_ms: Option<f64>,
}

/// How often the authority is asked, and how long one refresh may take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cadence {
    pub min_interval: Duration,
    pub max_interval: Duration,
    pub timeout: Duration,
}

#[derive(Debug, Clone, PartialEq)]
pub enum CadenceError {
    Negative {
        option: &'static str,
        value: f64,
    },
    TimeoutNotPositive {
        value: f64,
    },
    MinAboveMax {
        min: f64,
        max: f64,
    },
    CannotFitWindow {
        max_interval_ms: f64,
        timeout_ms: f64,
        window_ms: f64,
    },
    /// An explicit `minIntervalMs` below [`MIN_REFRESH_INTERVAL_MS`].
    IntervalBelowFloor {
        value: f64,
    },
    /// The default cadence (0.3 w) would pause less than [`MIN_REFRESH_INTERVAL_MS`].
    WindowTooShortForDefaults {
        window_ms: f64,
    },
}

impl CadenceError {
    pub fn option(&self) -> &'static str {
        match self {
            CadenceError::Negative { option, .. } => option,
            CadenceError::TimeoutNotPositive { .. } => "refresh.timeoutMs",
            CadenceError::MinAboveMax { .. } => "refresh.minIntervalMs",
            CadenceError::CannotFitWindow { .. } => "refresh.maxIntervalMs",
            CadenceError::IntervalBelowFloor { .. } => "refresh.minIntervalMs",
            CadenceError::WindowTooShortForDefaults { .. } => "budget",
        }
    }
}

impl CadenceError {
    /// The rule broken, without the option path (see [`CadenceError::option`]).
    pub fn rule(&self) -> String {
        match self {
            CadenceError::Negative { value, .. } => {
                format!("must be a finite number ≥ 0 (got {})", JsNumber(*value))
            }
            CadenceError::TimeoutNotPositive { value } => {
                format!("must be a finite number greater than 0 (got {})", JsNumber(*value))
            }
            CadenceError::MinAboveMax { min, max } => format!(
                "must be at most refresh.maxIntervalMs ({min} > {max})"
            ),
            CadenceError::CannotFitWindow { max_interval_ms, timeout_ms, window_ms } => format!(
                "maxIntervalMs + timeoutMs ({max_interval_ms} + {timeout_ms}) \
                 must be less than the stale window ({window_ms} ms), or healthy evidence could expire \
                 between two refreshes"
            ),
            CadenceError::IntervalBelowFloor { value } => format!(
                "must be at least {MIN_REFRESH_INTERVAL_MS} ms (got {}): shorter pauses would \
                 call the authority more than 50 times a second",
                JsNumber(*value)
            ),
            CadenceError::WindowTooShortForDefaults { window_ms } => format!(
                "the stale window node budget / maxUnitsPerSecond = {} ms is too short to \
                 refresh within: the default pause (0.3 × window) would be under the \
                 {MIN_REFRESH_INTERVAL_MS} ms floor, so the window must be at least {:.1} ms \
                 (raise budget.unverifiedUnits or lower budget.maxUnitsPerSecond)",
                JsNumber(*window_ms),
                MIN_DEFAULT_WINDOW_MS
            ),
        }
    }
}

impl fmt::Display for CadenceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.option(), self.rule())
    }
}

impl std::error::Error for CadenceError {}

/// The refresh defaults (docs/api.md, Options), scaled with the window w in seconds:
/// minIntervalMs = 300·w, maxIntervalMs = 500·w, timeoutMs = min(2000, 400·w).
pub fn default_cadence_ms(window: Duration) -> (f64, f64, f64) {
    let w = window.as_secs_f64();
    (300.0 * w, 500.0 * w, (400.0 * w).min(2000.0))
}

/// Fills in defaults and checks that the cadence keeps healthy evidence younger than the window:
/// `maxIntervalMs + timeoutMs` must stay below `w × 1000`.
pub fn compute_cadence(input: &CadenceInput, window: Duration) -> Result<Cadence, CadenceError> {
    let (default_min, default_max, default_timeout) = default_cadence_ms(window);
    let min = input.min_interval_ms.unwrap_or(default_min);
    let max = input.max_interval_ms.unwrap_or(default_max);
    let timeout = input.timeout_ms.unwrap_or(default_timeout);
    for (option, value) in [
        ("refresh.minIntervalMs", min),
        ("refresh.maxIntervalMs", max),
    ] {
        if !(value.is_finite() && value >= 0.0) {
            return Err(CadenceError::Negative { option, value });
        }
    }
    if min < MIN_REFRESH_INTERVAL_MS {
        return Err(match input.min_interval_ms {
            Some(value) => CadenceError::IntervalBelowFloor { value },
            None => CadenceError::WindowTooShortForDefaults {
                window_ms: window.as_secs_f64() * 1000.0,
            },
        });
    }
    if !(timeout.is_finite() && timeout > 0.0) {
        return Err(CadenceError::TimeoutNotPositive { value: timeout });
    }
    if min > max {
        return Err(CadenceError::MinAboveMax { min, max });
    }
    let window_ms = window.as_secs_f64() * 1000.0;
    if max + timeout >= window_ms {
        return Err(CadenceError::CannotFitWindow {
            max_interval_ms: max,
            timeout_ms: timeout,
            window_ms,
        });
    }
    // In range: finite, ≥ 0 and below the window (itself at most 7 days), checked above.
    let ms = |v: f64| Duration::from_secs_f64(v / 1000.0);
    Ok(Cadence {
        min_interval: ms(min),
        max_interval: ms(max),
        timeout: ms(timeout),
    })
}

/// A fleet node's refresh, with default options, is never abandoned before this, however small
/// its window: a slow authority's late `valid` answer still settles the fleet and lets grants
/// grow (an abandoned one would keep a fresh fleet on its floors for ever).
pub const FLEET_DEFAULT_TIMEOUT_MS: f64 = 2000.0;

/// How the refresh cadence is chosen: explicit `refresh` options, fixed; or the defaults,
/// scaled with the window of the moment (a fleet node's window changes with its grant).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CadencePlan {
    Fixed(Cadence),
    Scaled,
    /// A fleet node's defaults: pauses scaled with the window, a timeout of
    /// [`FLEET_DEFAULT_TIMEOUT_MS`].
    ScaledForFleet,
}

impl CadencePlan {
    /// Explicit options give a fixed cadence; none at all, the scaled defaults.
    pub fn from_input(input: &CadenceInput, validated: Cadence) -> Self {
        if *input == CadenceInput::default() {
            CadencePlan::Scaled
        } else {
            CadencePlan::Fixed(validated)
        }
    }

    /// The same plan for a fleet node: the defaults keep a refresh going for 2 s.
    pub fn for_fleet(self) -> Self {
        match self {
            CadencePlan::Scaled => CadencePlan::ScaledForFleet,
            other => other,
        }
    }

    /// The cadence for a window `window`. Scaled pauses never go below the 20 ms floor.
    pub fn at(&self, window: Duration) -> Cadence {
        let (min, max, timeout) = default_cadence_ms(window);
        let timeout = match self {
            CadencePlan::Fixed(cadence) => return *cadence,
            CadencePlan::Scaled => timeout,
            CadencePlan::ScaledForFleet => FLEET_DEFAULT_TIMEOUT_MS,
        };
        let floor = MIN_REFRESH_INTERVAL_MS;
        let ms = |v: f64| Duration::from_secs_f64(v / 1000.0);
        Cadence {
            min_interval: ms(min.max(floor)),
            max_interval: ms(max.max(floor)),
            timeout: ms(timeout.max(1.0)),
        }
    }
}

impl Cadence {
    /// The pause before the next refresh, given a uniform sample `u` in [0, 1).
    /// Taking the sample as an argument keeps the randomness out of the rule.
    pub fn pause(&self, u: f64) -> Duration {
        let spread = self.max_interval.saturating_sub(self.min_interval);
        self.min_interval + spread.mul_f64(u.clamp(0.0, 1.0))
    }

    /// The mean of [`Cadence::pause`]: the middle of [min, max], pauses being uniform.
    pub fn mean_pause(&self) -> Duration {
        (self.min_interval + self.max_interval) / 2
    }

    /// Authority calls a second in the long run with an authority answering in `answer_time`:
    /// refreshes never overlap, so one call per mean pause plus the refresh's own time.
    /// `Duration::ZERO` gives the most this cadence can ask (a fast authority is asked most).
    pub fn calls_per_second(&self, answer_time: Duration) -> f64 {
        1.0 / (self.mean_pause() + answer_time).as_secs_f64()
    }

    /// Whether this cadence may ask the authority more than [`CALM_CALLS_PER_SECOND`] times a
    /// second: a mean pause under a second. The answer time is unknown before the first refresh,
    /// so it counts as 0, the rate's upper bound.
    pub fn busier_than_calm(&self) -> bool {
        self.calls_per_second(Duration::ZERO) > CALM_CALLS_PER_SECOND
    }
}

/// The authority calls a second a node may make without `new Sentinel` warning: one. The refresh
/// loop is a background check, not a proxy; a billing API asked more often from every pod of a
/// fleet is load (and often a rate limit) the service brought on itself.
pub const CALM_CALLS_PER_SECOND: f64 = 1.0;

/// The shortest window whose default cadence is calm: the default pauses average 0.4 w, so
/// w = 1 / (0.4 × [`CALM_CALLS_PER_SECOND`]) = 2.5 s.
pub fn shortest_calm_default_window() -> Duration {
    let (min_ms, max_ms, _) = default_cadence_ms(Duration::from_secs(1));
    let mean_pause_per_window_second = (min_ms + max_ms) / 2.0 / 1000.0;
    Duration::from_secs_f64(1.0 / (mean_pause_per_window_second * CALM_CALLS_PER_SECOND))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::budget::fixed::*;

    #[test]
    fn seed_cadence_defaults_are_1500_2500_2000() {
        let cadence = compute_cadence(&CadenceInput::default(), Duration::from_secs(5)).unwrap();
        assert_eq!(cadence.min_interval, Duration::from_millis(1500));
        assert_eq!(cadence.max_interval, Duration::from_millis(2500));
        assert_eq!(cadence.timeout, Duration::from_millis(2000));
    }

    #[test]
    fn default_timeout_is_capped_at_two_seconds() {
        let cadence = compute_cadence(&CadenceInput::default(), Duration::from_secs(60)).unwrap();
        assert_eq!(cadence.timeout, Duration::from_millis(2000));
        let short = compute_cadence(&CadenceInput::default(), Duration::from_secs(1)).unwrap();
        assert_eq!(short.timeout, Duration::from_millis(400));
    }

    #[test]
    fn cadence_that_cannot_keep_evidence_young_is_refused() {
        let window = Duration::from_secs(5);
        let exactly = CadenceInput {
            max_interval_ms: Some(3000.0),
            timeout_ms: Some(2000.0),
            ..Default::default()
        };
        assert!(matches!(
            compute_cadence(&exactly, window),
            Err(CadenceError::CannotFitWindow { .. })
        ));
        let inside = CadenceInput {
            max_interval_ms: Some(2999.0),
            timeout_ms: Some(2000.0),
            ..Default::default()
        };
        assert!(compute_cadence(&inside, window).is_ok());
    }

    #[test]
    fn min_above_max_and_bad_values_are_refused() {
        let window = Duration::from_secs(5);
        let swapped = CadenceInput {
            min_interval_ms: Some(2000.0),
            max_interval_ms: Some(1000.0),
            ..Default::default()
        };
        assert_eq!(
            compute_cadence(&swapped, window).unwrap_err().option(),
            "refresh.minIntervalMs"
        );
        let negative = CadenceInput {
            min_interval_ms: Some(-1.0),
            ..Default::default()
        };
        assert_eq!(
            compute_cadence(&negative, window).unwrap_err().option(),
            "refresh.minIntervalMs"
        );
        let zero_timeout = CadenceInput {
            timeout_ms: Some(0.0),
            ..Default::default()
        };
        assert_eq!(
            compute_cadence(&zero_timeout, window).unwrap_err().option(),
            "refresh.timeoutMs"
        );
    }

    #[test]
    fn pause_is_uniform_between_min_and_max() {
        let cadence = compute_cadence(&CadenceInput::default(), Duration::from_secs(5)).unwrap();
        assert_eq!(cadence.pause(0.0), Duration::from_millis(1500));
        assert_eq!(cadence.pause(0.5), Duration::from_millis(2000));
        assert!(cadence.pause(0.999_999) < Duration::from_millis(2500));
    }

    #[test]
    fn refresh_pauses_below_twenty_ms_are_refused() {
        let window = Duration::from_secs(5);
        let hammering = CadenceInput {
            min_interval_ms: Some(0.0),
            max_interval_ms: Some(0.0),
            ..Default::default()
        };
        assert_eq!(
            compute_cadence(&hammering, window).unwrap_err(),
            CadenceError::IntervalBelowFloor { value: 0.0 }
        );
        let at_floor = CadenceInput {
            min_interval_ms: Some(MIN_REFRESH_INTERVAL_MS),
            max_interval_ms: Some(MIN_REFRESH_INTERVAL_MS),
            ..Default::default()
        };
        assert_eq!(
            compute_cadence(&at_floor, window).unwrap().min_interval,
            Duration::from_millis(20)
        );
    }

    #[test]
    fn a_window_too_short_for_the_default_cadence_explains_itself() {
        // 50 ms: long enough for explicit pauses of 20 ms, too short for 0.3 w.
        let short = compute_budget(&BudgetInput {
            fleet_ceiling_units: 2.5,
            max_units_per_second: 50.0,
            nodes: None,
            ..seed_input()
        })
        .unwrap();
        let err = compute_cadence(&CadenceInput::default(), short.stale_window).unwrap_err();
        assert!(matches!(
            err,
            CadenceError::WindowTooShortForDefaults { .. }
        ));
        assert_eq!(err.option(), "budget");
        assert!(err.to_string().contains("at least 66.7 ms"), "{err}");
        let shortest = Duration::from_secs_f64(MIN_DEFAULT_WINDOW_MS / 1000.0 + 1e-6);
        assert!(compute_cadence(&CadenceInput::default(), shortest).is_ok());
    }

    #[test]
    fn the_scaled_plan_follows_the_window_of_the_moment_and_keeps_the_floor() {
        let plan = CadencePlan::from_input(&CadenceInput::default(), seed_cadence());
        assert_eq!(plan, CadencePlan::Scaled);
        let long = plan.at(Duration::from_secs(4));
        assert_eq!(
            (long.min_interval, long.max_interval, long.timeout),
            (
                Duration::from_millis(1200),
                Duration::from_millis(2000),
                Duration::from_millis(1600)
            )
        );
        let floor = plan.at(Duration::from_millis(400));
        assert_eq!(
            (floor.min_interval, floor.max_interval, floor.timeout),
            (
                Duration::from_millis(120),
                Duration::from_millis(200),
                Duration::from_millis(160)
            )
        );
        let tiny = plan.at(Duration::from_millis(10));
        assert_eq!(
            tiny.min_interval,
            Duration::from_millis(20),
            "never below the 20 ms floor"
        );
        let explicit = CadenceInput {
            min_interval_ms: Some(100.0),
            ..Default::default()
        };
        let fixed = CadencePlan::from_input(&explicit, seed_cadence());
        assert_eq!(fixed.at(Duration::from_secs(60)), seed_cadence());
    }

    #[test]
    fn a_fleet_nodes_default_refresh_is_not_abandoned_before_two_seconds() {
        let plan = CadencePlan::from_input(&CadenceInput::default(), seed_cadence()).for_fleet();
        assert_eq!(plan, CadencePlan::ScaledForFleet);
        let floor = plan.at(Duration::from_millis(400));
        assert_eq!(
            (floor.min_interval, floor.max_interval, floor.timeout),
            (
                Duration::from_millis(120),
                Duration::from_millis(200),
                Duration::from_secs(2)
            ),
            "pauses follow the window, the timeout does not"
        );
        let explicit = CadenceInput {
            timeout_ms: Some(100.0),
            ..Default::default()
        };
        let fixed = CadencePlan::from_input(&explicit, seed_cadence()).for_fleet();
        assert_eq!(fixed.at(Duration::from_millis(400)), seed_cadence());
    }

    #[test]
    fn the_call_rate_is_one_per_mean_pause_plus_the_answer_time() {
        let seed = seed_cadence(); // pauses of 1.5–2.5 s
        assert_eq!(seed.mean_pause(), Duration::from_secs(2));
        assert_eq!(seed.calls_per_second(Duration::ZERO), 0.5);
        assert_eq!(seed.calls_per_second(Duration::from_secs(2)), 0.25);
        let fleet_floor = CadencePlan::Scaled
            .for_fleet()
            .at(Duration::from_millis(400));
        assert_eq!(fleet_floor.mean_pause(), Duration::from_millis(160));
        assert_eq!(fleet_floor.calls_per_second(Duration::ZERO), 6.25);
        let hammering = CadencePlan::Scaled.at(Duration::from_millis(10));
        assert_eq!(
            hammering.calls_per_second(Duration::ZERO),
            50.0,
            "the 20 ms floor bounds the rate"
        );
    }

    #[test]
    fn a_cadence_is_busier_than_calm_when_its_mean_pause_is_under_a_second() {
        assert_eq!(shortest_calm_default_window(), Duration::from_millis(2500));
        let at = |ms| CadencePlan::Scaled.at(Duration::from_millis(ms));
        assert!(
            !at(2500).busier_than_calm(),
            "a mean pause of 1 s: one call a second"
        );
        assert!(at(2499).busier_than_calm());
        assert!(!at(5000).busier_than_calm());
        let explicit = |min_ms, max_ms| {
            let input = CadenceInput {
                min_interval_ms: Some(min_ms),
                max_interval_ms: Some(max_ms),
                timeout_ms: Some(100.0),
            };
            compute_cadence(&input, Duration::from_secs(60)).unwrap()
        };
        assert!(explicit(500.0, 1499.0).busier_than_calm());
        assert!(!explicit(500.0, 1500.0).busier_than_calm());
    }

    fn seed_cadence() -> Cadence {
        compute_cadence(&CadenceInput::default(), Duration::from_secs(5)).unwrap()
    }
}
