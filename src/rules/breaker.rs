//! The circuit breaker state machine. Pure: every operation takes `now`, nothing runs on a
//! timer, and the state is computed when it is read (like gobreaker's `currentState(now)`).
//!
//! - Closed → Open when `failure_threshold` consecutive failures happen (0: rule off), or when the
//!   failure rate over the rolling window reaches `failure_rate_threshold` (0: rule off) with at
//!   least `minimum_calls` calls in it.
//! - Open → HalfOpen once the open period has passed. The period starts at `open`, doubles (with
//!   jitter) after each failed trial up to `max_open`, and is back to `open` once closed.
//! - HalfOpen grants exactly one trial permit; every other call is refused at once. The trial's
//!   success closes, its failure reopens; a trial that has not settled within `trial_timeout`
//!   counts as failed. An ignored error releases the permit for another trial.
//! - Every transition goes through [`Breaker::transition_to`] and starts a new generation; a result
//!   carrying an older generation's permit changes nothing (a slow success that began before the
//!   trip cannot close the breaker under a running trial).

use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::rolling::RollingCounts;
use crate::closed_list::closed_list;

/// Validated settings (option names, defaults and rules: `crate::options::catalog`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BreakerSettings {
    /// Consecutive failures that trip the breaker; 0 turns the rule off.
    pub failure_threshold: u32,
    /// Failure rate (0..=1) over the rolling window that trips it; 0 turns the rule off.
    pub failure_rate_threshold: f64,
    pub rolling_window: Duration,
    /// Calls the rolling window must hold before the rate rule applies (0: from the first call).
    pub minimum_calls: u32,
    /// First open period.
    pub open: Duration,
    /// Cap of the doubling open period (≥ `open`).
    pub max_open: Duration,
    /// A trial not settled within this counts as a failed trial.
    pub trial_timeout: Duration,
}

/// Each doubled open period is shortened by up to this fraction, at random, so a fleet whose
/// breakers tripped together does not retry together.
const JITTER: f64 = 0.2;

closed_list! {
    /// A breaker's state as it is read. Its index is the state code of js/breaker.js's tokens
    /// (`breakerProtocol().states`).
    pub enum BreakerState {
        Closed => "closed",
        Open => "open",
        HalfOpen => "half_open",
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    Closed,
    /// `until: None`: opened by hand, stays open until `close()` or `reset()`.
    Open {
        until: Option<Duration>,
    },
    /// `trial_since`: when the trial permit was granted, if it is out.
    HalfOpen {
        trial_since: Option<Duration>,
    },
}

impl Phase {
    fn state(self) -> BreakerState {
        match self {
            Phase::Closed => BreakerState::Closed,
            Phase::Open { .. } => BreakerState::Open,
            Phase::HalfOpen { .. } => BreakerState::HalfOpen,
        }
    }
}

/// Permission for one call, tied to the generation that granted it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Permit {
    pub generation: u64,
}

closed_list! {
    /// How a call that held a permit ended. Its index is the outcome code js/breaker.js passes to
    /// `settle` (`breakerProtocol().outcomes`).
    pub enum CallOutcome {
        Success => "success",
        Failure => "failure",
        /// A failure because the call ran out of time.
        Timeout => "timeout",
        /// An error the caller says does not count (`isFailure(err) === false`).
        Ignored => "ignored",
    }
}

closed_list! {
    /// What the breaker-calls metric files a call under (its `result` label): a failure that
    /// timed out is a timeout, not also a failure; a refused call is rejected; ignored errors
    /// are not counted.
    pub enum CallResult {
        Success => "success",
        Failure => "failure",
        Timeout => "timeout",
        Rejected => "rejected",
    }
}

impl CallResult {
    /// How many of `stats`' calls ended this way.
    pub fn count(self, stats: &BreakerStats) -> u64 {
        match self {
            CallResult::Success => stats.successes,
            CallResult::Failure => stats.failures - stats.timeouts,
            CallResult::Timeout => stats.timeouts,
            CallResult::Rejected => stats.refused,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BreakerStats {
    pub successes: u64,
    /// Failures, timeouts included.
    pub failures: u64,
    pub timeouts: u64,
    pub ignored: u64,
    pub refused: u64,
    /// Results that arrived for an older generation and changed nothing.
    pub stale: u64,
    /// Trials that did not settle within the trial timeout.
    pub trial_timeouts: u64,
    /// Times the breaker opened.
    pub opened: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition {
    pub from: BreakerState,
    pub to: BreakerState,
}

#[derive(Debug, Clone)]
pub struct Breaker {
    settings: BreakerSettings,
    phase: Phase,
    generation: u64,
    /// The open period before jitter: `open`, doubled after each failed trial up to `max_open`.
    open_period: Duration,
    consecutive_failures: u32,
    /// Call results over the last `rolling_window`.
    recent: RollingCounts,
    stats: BreakerStats,
    jitter: StdRng,
    /// Committed transitions the shell has not reported yet.
    transitions: Vec<Transition>,
}

impl Breaker {
    /// `seed` drives the jitter; tests pass a fixed one.
    pub fn new(settings: BreakerSettings, seed: u64) -> Self {
        Breaker {
            settings,
            phase: Phase::Closed,
            generation: 0,
            open_period: settings.open,
            consecutive_failures: 0,
            recent: RollingCounts::new(settings.rolling_window),
            stats: BreakerStats::default(),
            jitter: StdRng::seed_from_u64(seed),
            transitions: Vec::new(),
        }
    }

    pub fn state(&mut self, now: Duration) -> BreakerState {
        self.advance(now);
        self.phase.state()
    }

    /// A permit for one call, or the refusal with how long until asking again makes sense.
    pub fn acquire(&mut self, now: Duration) -> Result<Permit, Duration> {
        self.advance(now);
        let refused_for = match self.phase {
            Phase::Closed => None,
            Phase::HalfOpen { trial_since: None } => {
                self.phase = Phase::HalfOpen {
                    trial_since: Some(now),
                };
                None
            }
            Phase::HalfOpen {
                trial_since: Some(since),
            } => Some((since + self.settings.trial_timeout).saturating_sub(now)),
            Phase::Open { until: Some(until) } => Some(until.saturating_sub(now)),
            Phase::Open { until: None } => Some(self.settings.open),
        };
        match refused_for {
            None => Ok(Permit {
                generation: self.generation,
            }),
            Some(retry_after) => {
                self.stats.refused += 1;
                Err(retry_after)
            }
        }
    }

    /// Records how a permitted call ended. A permit from an older generation changes nothing.
    pub fn settle(&mut self, permit: Permit, outcome: CallOutcome, now: Duration) {
        self.advance(now);
        self.count(outcome);
        if permit.generation != self.generation {
            self.stats.stale += 1;
            return;
        }
        match (self.phase, outcome) {
            (_, CallOutcome::Ignored) => {
                if let Phase::HalfOpen { .. } = self.phase {
                    self.phase = Phase::HalfOpen { trial_since: None };
                }
            }
            (Phase::Closed, CallOutcome::Success) => {
                self.consecutive_failures = 0;
                self.recent.record(false, now);
            }
            (Phase::Closed, CallOutcome::Failure | CallOutcome::Timeout) => {
                self.consecutive_failures = self.consecutive_failures.saturating_add(1);
                self.recent.record(true, now);
                if self.should_trip(now) {
                    self.open_at(now, self.open_period);
                }
            }
            (Phase::HalfOpen { .. }, CallOutcome::Success) => self.close_now(),
            (Phase::HalfOpen { .. }, CallOutcome::Failure | CallOutcome::Timeout) => {
                self.reopen_after_failed_trial(now)
            }
            // Open permits do not exist: opening starts a new generation.
            (Phase::Open { .. }, _) => {}
        }
    }

    /// Opens by hand: every call is refused until `close()` or `reset()`.
    pub fn force_open(&mut self, now: Duration) {
        self.advance(now);
        if self.phase.state() != BreakerState::Open {
            self.stats.opened += 1;
        }
        self.transition_to(Phase::Open { until: None });
    }

    /// Closes by hand, with a clean slate of failures.
    pub fn close(&mut self, now: Duration) {
        self.advance(now);
        self.close_now();
    }

    /// Closed, with a clean slate and zeroed stats.
    pub fn reset(&mut self, now: Duration) {
        self.close(now);
        self.stats = BreakerStats::default();
    }

    pub fn stats(&self) -> BreakerStats {
        self.stats
    }

    /// How long until the breaker half-opens by itself, when it is open with a timer (`None`
    /// when closed, half-open, or opened by hand). Current as of the last `advance`.
    pub fn half_open_in(&self, now: Duration) -> Option<Duration> {
        match self.phase {
            Phase::Open { until: Some(until) } => Some(until.saturating_sub(now)),
            _ => None,
        }
    }

    /// The current generation: a permit granted now would carry it.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn consecutive_failures(&self) -> u32 {
        self.consecutive_failures
    }

    pub fn rolling_totals(&self, now: Duration) -> super::rolling::Totals {
        self.recent.totals(now)
    }

    /// The transitions committed since the last call, oldest first.
    pub fn take_transitions(&mut self) -> Vec<Transition> {
        std::mem::take(&mut self.transitions)
    }

    pub fn has_transitions(&self) -> bool {
        !self.transitions.is_empty()
    }

    /// Applies the transitions time alone causes, at the moments they happened.
    fn advance(&mut self, now: Duration) {
        loop {
            match self.phase {
                Phase::Open { until: Some(until) } if now >= until => {
                    self.transition_to(Phase::HalfOpen { trial_since: None });
                }
                Phase::HalfOpen {
                    trial_since: Some(since),
                } if now >= since + self.settings.trial_timeout => {
                    self.stats.trial_timeouts += 1;
                    self.reopen_after_failed_trial(since + self.settings.trial_timeout);
                }
                _ => return,
            }
        }
    }

    fn should_trip(&self, now: Duration) -> bool {
        let s = &self.settings;
        let consecutive =
            s.failure_threshold > 0 && self.consecutive_failures >= s.failure_threshold;
        let rate = s.failure_rate_threshold > 0.0 && {
            let totals = self.recent.totals(now);
            totals.calls() >= u64::from(s.minimum_calls).max(1)
                && totals.failure_rate() >= s.failure_rate_threshold
        };
        consecutive || rate
    }

    fn open_at(&mut self, at: Duration, period: Duration) {
        self.transition_to(Phase::Open {
            until: Some(at + period),
        });
        self.stats.opened += 1;
    }

    fn reopen_after_failed_trial(&mut self, at: Duration) {
        self.open_period = (self.open_period * 2).min(self.settings.max_open);
        let jittered = self
            .open_period
            .mul_f64(1.0 - JITTER * self.jitter.random::<f64>());
        self.open_at(at, jittered.max(self.settings.open));
    }

    fn close_now(&mut self) {
        self.transition_to(Phase::Closed);
        self.open_period = self.settings.open;
        self.consecutive_failures = 0;
        self.recent.clear();
    }

    /// The one way the phase changes: a new generation, and the change recorded for listeners.
    fn transition_to(&mut self, next: Phase) {
        let from = self.phase.state();
        self.phase = next;
        self.generation += 1;
        if from != next.state() {
            self.transitions.push(Transition {
                from,
                to: next.state(),
            });
        }
    }

    fn count(&mut self, outcome: CallOutcome) {
        let stats = &mut self.stats;
        match outcome {
            CallOutcome::Success => stats.successes += 1,
            CallOutcome::Failure => stats.failures += 1,
            CallOutcome::Timeout => {
                stats.failures += 1;
                stats.timeouts += 1;
            }
            CallOutcome::Ignored => stats.ignored += 1,
        }
    }
}

/// Settings for tests: trips on 3 consecutive failures, no rate rule, a 10 s rolling window,
/// open 1 s doubling to 8 s, trial permits of 500 ms.
#[cfg(test)]
pub fn test_settings() -> BreakerSettings {
    BreakerSettings {
        failure_threshold: 3,
        failure_rate_threshold: 0.0,
        rolling_window: Duration::from_millis(10_000),
        minimum_calls: 0,
        open: Duration::from_millis(1000),
        max_open: Duration::from_millis(8000),
        trial_timeout: Duration::from_millis(500),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calls_metric_files_a_timeout_once_and_leaves_ignored_errors_out() {
        let stats = BreakerStats {
            successes: 1,
            failures: 5,
            timeouts: 2,
            ignored: 11,
            refused: 7,
            ..BreakerStats::default()
        };
        let counts: Vec<_> = CallResult::ALL
            .iter()
            .map(|result| (result.as_str(), result.count(&stats)))
            .collect();
        assert_eq!(
            counts,
            [
                ("success", 1),
                ("failure", 3),
                ("timeout", 2),
                ("rejected", 7)
            ]
        );
    }
    use BreakerState::*;

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    fn settings() -> BreakerSettings {
        test_settings()
    }

    fn breaker(settings: BreakerSettings) -> Breaker {
        Breaker::new(settings, 7)
    }

    fn call(b: &mut Breaker, outcome: CallOutcome, now: Duration) {
        let permit = b.acquire(now).expect("a permit");
        b.settle(permit, outcome, now);
    }

    /// Trips a breaker with the default settings at `now` (three failures).
    fn tripped_at(now: Duration) -> Breaker {
        let mut b = breaker(settings());
        for _ in 0..3 {
            call(&mut b, CallOutcome::Failure, now);
        }
        assert_eq!(b.state(now), Open);
        b
    }

    #[test]
    fn consecutive_failures_trip_and_a_success_resets_the_count() {
        let mut b = breaker(settings());
        call(&mut b, CallOutcome::Failure, ms(0));
        call(&mut b, CallOutcome::Failure, ms(1));
        call(&mut b, CallOutcome::Success, ms(2));
        call(&mut b, CallOutcome::Failure, ms(3));
        call(&mut b, CallOutcome::Timeout, ms(4));
        assert_eq!(b.state(ms(4)), Closed);
        call(&mut b, CallOutcome::Failure, ms(5));
        assert_eq!(b.state(ms(5)), Open);
        assert_eq!(b.stats().timeouts, 1);
        assert_eq!(b.stats().failures, 5);
    }

    #[test]
    fn zero_thresholds_turn_the_rules_off() {
        let mut b = breaker(BreakerSettings {
            failure_threshold: 0,
            failure_rate_threshold: 0.0,
            ..settings()
        });
        for i in 0..1000 {
            call(&mut b, CallOutcome::Failure, ms(i));
        }
        assert_eq!(b.state(ms(1000)), Closed);
    }

    #[test]
    fn the_rate_rule_needs_minimum_calls_then_trips_at_the_threshold() {
        let mut b = breaker(BreakerSettings {
            failure_threshold: 0,
            failure_rate_threshold: 0.5,
            minimum_calls: 4,
            ..settings()
        });
        call(&mut b, CallOutcome::Failure, ms(0));
        call(&mut b, CallOutcome::Failure, ms(1));
        call(&mut b, CallOutcome::Success, ms(2));
        assert_eq!(
            b.state(ms(2)),
            Closed,
            "3 calls < minimum 4, although 2/3 failed"
        );
        call(&mut b, CallOutcome::Success, ms(3));
        call(&mut b, CallOutcome::Failure, ms(4));
        assert_eq!(b.state(ms(4)), Open, "3/5 ≥ 0.5 with 5 calls");
    }

    #[test]
    fn samples_older_than_the_rolling_window_do_not_count_after_an_idle_gap() {
        let mut b = breaker(BreakerSettings {
            failure_threshold: 0,
            failure_rate_threshold: 0.5,
            minimum_calls: 4,
            ..settings()
        });
        for i in 0..3 {
            call(&mut b, CallOutcome::Failure, ms(i));
        }
        // An hour later one failure alone must not trip on the hour-old ones.
        call(&mut b, CallOutcome::Failure, ms(3_600_000));
        assert_eq!(b.state(ms(3_600_000)), Closed);
        assert_eq!(b.rolling_totals(ms(3_600_000)).calls(), 1);
    }

    #[test]
    fn open_refuses_with_the_time_left_then_half_opens() {
        let mut b = tripped_at(ms(0));
        assert_eq!(b.acquire(ms(400)), Err(ms(600)));
        assert_eq!(b.state(ms(999)), Open);
        assert_eq!(b.state(ms(1000)), HalfOpen);
        assert_eq!(b.stats().refused, 1);
    }

    #[test]
    fn half_open_grants_exactly_one_trial_and_refuses_the_rest_at_once() {
        let mut b = tripped_at(ms(0));
        let trial = b.acquire(ms(1000)).expect("the trial permit");
        assert_eq!(
            b.acquire(ms(1001)),
            Err(ms(499)),
            "refused until the trial expires"
        );
        assert_eq!(b.acquire(ms(1200)), Err(ms(300)));
        b.settle(trial, CallOutcome::Success, ms(1300));
        assert_eq!(b.state(ms(1300)), Closed);
        assert!(b.acquire(ms(1300)).is_ok());
    }

    #[test]
    fn a_failed_trial_doubles_the_open_period_with_jitter_up_to_the_cap() {
        let mut b = tripped_at(ms(0));
        let mut opened_at = ms(0);
        let mut period = ms(1000);
        for expected_base in [2000, 4000, 8000, 8000] {
            let at = opened_at + period;
            let trial = b.acquire(at).expect("trial");
            b.settle(trial, CallOutcome::Failure, at);
            let retry = b.acquire(at).expect_err("open again");
            let base = ms(expected_base);
            assert!(
                retry <= base && retry >= base.mul_f64(1.0 - JITTER),
                "period {retry:?} for base {base:?}"
            );
            opened_at = at;
            period = retry;
        }
        // A successful trial brings the period back to `open`.
        let at = opened_at + period;
        let trial = b.acquire(at).unwrap();
        b.settle(trial, CallOutcome::Success, at);
        for i in 0..3 {
            call(&mut b, CallOutcome::Failure, at + ms(i));
        }
        assert_eq!(b.acquire(at + ms(2)), Err(ms(1000)));
    }

    #[test]
    fn a_hung_trial_expires_as_a_failed_trial_and_its_late_result_is_stale() {
        let mut b = tripped_at(ms(0));
        let hung = b.acquire(ms(1000)).unwrap();
        // Not settled by 1500: at that moment it counts as failed and the breaker reopens.
        assert_eq!(b.state(ms(1499)), HalfOpen);
        assert_eq!(b.state(ms(1500)), Open);
        assert_eq!(b.stats().trial_timeouts, 1);
        b.settle(hung, CallOutcome::Success, ms(1600));
        assert_eq!(
            b.state(ms(1600)),
            Open,
            "the late success must not close it"
        );
        assert_eq!(b.stats().stale, 1);
        // The reopening dates from the expiry (1500), for a doubled, jittered period.
        let retry = b.acquire(ms(1500)).unwrap_err();
        assert!(retry >= ms(1600) && retry <= ms(2000), "{retry:?}");
    }

    #[test]
    fn a_slow_success_from_before_the_trip_does_not_close_a_half_open_breaker() {
        let mut b = breaker(settings());
        let slow = b.acquire(ms(0)).unwrap();
        for _ in 0..3 {
            call(&mut b, CallOutcome::Failure, ms(10));
        }
        let trial = b.acquire(ms(1010)).unwrap();
        b.settle(slow, CallOutcome::Success, ms(1020));
        assert_eq!(
            b.state(ms(1020)),
            HalfOpen,
            "still waiting for the real trial"
        );
        assert_eq!(
            b.acquire(ms(1020)),
            Err(ms(490)),
            "and the trial is still the only one"
        );
        b.settle(trial, CallOutcome::Failure, ms(1030));
        assert_eq!(b.state(ms(1030)), Open);
    }

    #[test]
    fn an_ignored_error_neither_counts_nor_strands_the_trial() {
        let mut b = breaker(settings());
        call(&mut b, CallOutcome::Failure, ms(0));
        call(&mut b, CallOutcome::Failure, ms(1));
        call(&mut b, CallOutcome::Ignored, ms(2));
        assert_eq!(b.consecutive_failures(), 2);
        call(&mut b, CallOutcome::Failure, ms(3));
        assert_eq!(b.state(ms(3)), Open);
        let trial = b.acquire(ms(1003)).unwrap();
        b.settle(trial, CallOutcome::Ignored, ms(1004));
        let next_trial = b.acquire(ms(1005)).expect("the permit is free again");
        b.settle(next_trial, CallOutcome::Success, ms(1006));
        assert_eq!(b.state(ms(1006)), Closed);
        assert_eq!(b.stats().ignored, 2);
    }

    #[test]
    fn half_open_in_counts_down_the_open_period_only() {
        let mut b = breaker(settings());
        assert_eq!(b.half_open_in(ms(0)), None, "closed");
        let mut b2 = tripped_at(ms(100));
        let left = b2.half_open_in(ms(100)).expect("open with a timer");
        let retry = b2.acquire(ms(100)).unwrap_err();
        assert_eq!(left, retry, "the same figure as a refusal's retry-after");
        assert_eq!(b2.half_open_in(ms(100) + left), Some(Duration::ZERO));
        b2.state(ms(100) + left);
        assert_eq!(b2.half_open_in(ms(100) + left), None, "half-open");
        b.force_open(ms(1));
        assert_eq!(
            b.half_open_in(ms(1)),
            None,
            "opened by hand: never by itself"
        );
    }

    #[test]
    fn opened_by_hand_it_stays_open_until_closed() {
        let mut b = breaker(settings());
        b.force_open(ms(0));
        b.force_open(ms(1));
        assert_eq!(
            b.stats().opened,
            1,
            "opening an open breaker is not another opening"
        );
        assert_eq!(b.state(ms(3_600_000)), Open);
        assert!(b.acquire(ms(3_600_000)).is_err());
        b.close(ms(3_600_001));
        assert_eq!(b.state(ms(3_600_001)), Closed);
        assert!(b.acquire(ms(3_600_001)).is_ok());
    }

    #[test]
    fn close_clears_the_failures_and_reset_also_the_stats() {
        let mut b = breaker(settings());
        call(&mut b, CallOutcome::Failure, ms(0));
        call(&mut b, CallOutcome::Failure, ms(1));
        b.close(ms(2));
        call(&mut b, CallOutcome::Failure, ms(3));
        assert_eq!(
            b.state(ms(3)),
            Closed,
            "two failures before close() no longer count"
        );
        assert_eq!(b.stats().failures, 3);
        b.reset(ms(4));
        assert_eq!(b.stats(), BreakerStats::default());
    }

    #[test]
    fn transitions_are_committed_in_order_including_those_time_alone_causes() {
        let mut b = tripped_at(ms(0));
        let hung = b.acquire(ms(1000)).unwrap();
        let _ = hung;
        b.state(ms(1500));
        assert_eq!(
            b.take_transitions(),
            vec![
                Transition {
                    from: Closed,
                    to: Open
                },
                Transition {
                    from: Open,
                    to: HalfOpen
                },
                Transition {
                    from: HalfOpen,
                    to: Open
                },
            ]
        );
        assert!(!b.has_transitions());
    }
}
