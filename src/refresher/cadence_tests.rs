//! The refresh loop's timing, on fake time: tokio's paused clock, read through the sentinel's
//! [`RuntimeClock`] (why not a hand-rolled fake: `crate::clock`). The runtime moves time forward
//! only when every task is idle, straight to the next timer, so these tests spend none of the
//! seconds the loop waits, and every instant they see is exact (timers fire on whole ms).
//!
//! The authority is scripted per call; a call answered "now" answers before the loop pauses.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::{refresh_loop, Draws, SentinelObserver, Task};
use crate::authority::Check;
use crate::clock::{Clock, RuntimeClock};
use crate::rules::breaker::{Breaker, BreakerSettings};
use crate::rules::budget::fixed::seed_budget;
use crate::rules::budget::lease::{example_shape, FleetBudget, FleetShape, Lease};
use crate::rules::evidence::Denial;
use crate::rules::{
    BudgetSource, Cadence, CadencePlan, Outcome, Readiness, Reason, RefreshCause, SentinelState,
    Status, Verdict,
};
use crate::shared_sentinel::SharedSentinel;

/// What the scripted authority does with one call.
#[derive(Debug, Clone, Copy)]
enum Answer {
    Now(Outcome),
    After(Duration, Outcome),
    Never,
}

/// The authority: call `n` (from 0) answers `answers(n)`; each call's time is sent to the test.
struct Script {
    answers: Box<dyn Fn(usize) -> Answer + Send + Sync>,
    count: AtomicUsize,
    calls: mpsc::UnboundedSender<Duration>,
    clock: RuntimeClock,
}

impl Check for Script {
    async fn check(&self) -> Verdict {
        let _ = self.calls.send(self.clock.now());
        match (self.answers)(self.count.fetch_add(1, Ordering::Relaxed)) {
            Answer::Now(outcome) => scripted(outcome),
            Answer::After(delay, outcome) => {
                tokio::time::sleep(delay).await;
                scripted(outcome)
            }
            Answer::Never => std::future::pending().await,
        }
    }
}

/// The verdict a scripted `outcome` stands for (an indeterminate one: a 5xx).
fn scripted(outcome: Outcome) -> Verdict {
    match outcome {
        Outcome::Valid => Verdict::Valid,
        Outcome::InvalidCredential => Verdict::Denied(Denial::InvalidCredential),
        Outcome::CapabilityMissing => Verdict::Denied(Denial::CapabilityMissing),
        Outcome::Indeterminate => Verdict::Indeterminate(RefreshCause::Http5xx),
    }
}

/// Hears of each refresh that was sent: its outcome and how long it took.
struct Refreshes(mpsc::UnboundedSender<(Outcome, Duration)>);

impl SentinelObserver for Refreshes {
    fn transition(&self, _: Status, _: Readiness) {}
    fn refreshed(&self, verdict: Verdict, took: Duration) {
        let _ = self.0.send((verdict.outcome(), took));
    }
    fn task_failed(&self, _: Task) {}
}

/// A refresh loop on fake time and what it did.
struct Loop {
    shared: Arc<SharedSentinel>,
    clock: RuntimeClock,
    /// When each authority call was sent.
    calls: mpsc::UnboundedReceiver<Duration>,
    refreshed: mpsc::UnboundedReceiver<(Outcome, Duration)>,
}

/// Longer than any wait here: a loop that stops calling fails the test instead of hanging it.
const BOUND: Duration = Duration::from_secs(24 * 3600);

/// The seed of every loop's draws here: each pause is the one drawn from it, exactly.
const SEED: u64 = 29;

/// The loop's draws, one per pause in the order it pauses (the loop draws from the same seed).
fn draws(n: usize) -> Vec<f64> {
    let mut draws = Draws::seeded(SEED);
    (0..n).map(|_| draws.uniform()).collect()
}

/// When a timer set for `at` fires on the paused clock: the next whole millisecond.
fn fired(at: Duration) -> Duration {
    let nanos = at.as_nanos().div_ceil(1_000_000);
    ms(u64::try_from(nanos).expect("a test's time fits"))
}

impl Loop {
    /// Starts the loop; call `n` (from 0) of the authority answers `script(n)`.
    fn start(
        state: SentinelState,
        cadence: CadencePlan,
        breaker: Option<Breaker>,
        script: impl Fn(usize) -> Answer + Send + Sync + 'static,
    ) -> Self {
        let clock = RuntimeClock::starting_now();
        let shared = SharedSentinel::with_clock(state, cadence, Arc::new(clock));
        let (call_tx, calls) = mpsc::unbounded_channel();
        let authority = Script {
            answers: Box::new(script),
            count: AtomicUsize::new(0),
            calls: call_tx,
            clock,
        };
        let (refreshed_tx, refreshed) = mpsc::unbounded_channel();
        let observer = Arc::new(Refreshes(refreshed_tx));
        let draws = Draws::seeded(SEED);
        tokio::spawn(refresh_loop(
            shared.clone(),
            authority,
            observer,
            breaker,
            draws,
        ));
        Loop {
            shared,
            clock,
            calls,
            refreshed,
        }
    }

    fn now(&self) -> Duration {
        self.clock.now()
    }

    /// When the next authority call goes out (fake time runs until then).
    async fn next_call(&mut self) -> Duration {
        tokio::time::timeout(BOUND, self.calls.recv())
            .await
            .expect("the loop calls the authority again")
            .expect("the loop runs")
    }

    /// The next call's time and the status at that instant (before its answer lands, unless it
    /// answers at once).
    async fn next_call_and_status(&mut self) -> (Duration, Status) {
        let at = self.next_call().await;
        (at, self.shared.readiness().status)
    }

    async fn next_calls(&mut self, n: usize) -> Vec<Duration> {
        let mut calls = Vec::with_capacity(n);
        for _ in 0..n {
            calls.push(self.next_call().await);
        }
        calls
    }

    /// The next sent refresh that ended: its outcome, how long it took, and when it ended.
    async fn next_refreshed(&mut self) -> (Outcome, Duration, Duration) {
        let (outcome, took) = tokio::time::timeout(BOUND, self.refreshed.recv())
            .await
            .expect("a refresh ends")
            .expect("the loop runs");
        (outcome, took, self.now())
    }

    async fn sleep_until(&self, at: Duration) {
        self.clock.sleep_until(at).await;
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        self.shared.close();
    }
}

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

fn times(calls: &[(Duration, Status)]) -> Vec<Duration> {
    calls.iter().map(|(at, _)| *at).collect()
}

fn fixed(min_ms: u64, max_ms: u64, timeout_ms: u64) -> CadencePlan {
    CadencePlan::Fixed(Cadence {
        min_interval: ms(min_ms),
        max_interval: ms(max_ms),
        timeout: ms(timeout_ms),
    })
}

/// The seed example: node budget 100, w = 5 s, so the scaled pauses are 1.5 to 2.5 s.
fn seed_state() -> SentinelState {
    SentinelState::new(seed_budget())
}

/// b = 400, r = 20, 4 nodes, reserve 0.25: a floor of 25 units, a 1.25 s window (pauses 0.375
/// to 0.625 s); with a grant of 100 the window is 6.25 s (pauses 1.875 to 3.125 s).
fn fleet_state(lease: Option<Lease>) -> SentinelState {
    let mut budget = FleetBudget::new(FleetShape {
        fleet_ceiling_units: 400.0,
        ..example_shape()
    });
    budget.set_lease(lease);
    SentinelState::new(BudgetSource::Fleet(budget))
}

fn grant_until(deadline: Duration) -> Option<Lease> {
    Some(Lease {
        grant_units: 100.0,
        deadline,
    })
}

/// Opens for 5 s, doubling to 40 s; trials are settled by the refresh timeout first.
fn breaker_settings() -> BreakerSettings {
    BreakerSettings {
        failure_threshold: 0,
        failure_rate_threshold: 0.0,
        rolling_window: Duration::from_secs(10),
        minimum_calls: 0,
        open: Duration::from_secs(5),
        max_open: Duration::from_secs(40),
        trial_timeout: Duration::from_secs(10),
    }
}

/// The fleet node's pauses on its floor's window of 1.25 s: 0.375 to 0.625 s.
fn floor_pauses() -> Cadence {
    CadencePlan::ScaledForFleet.at(ms(1250))
}

/// Its pauses with a grant of 100 (a window of 6.25 s): 1.875 to 3.125 s.
fn leased_pauses() -> Cadence {
    CadencePlan::ScaledForFleet.at(ms(6250))
}

/// The calls of a loop whose first call goes at 0 and whose pauses, each drawn anew from
/// [`SEED`] for `cadence`, start `answer_in` after their call.
fn calls_drawn(cadence: &Cadence, answer_in: Duration, n: usize) -> Vec<Duration> {
    let mut calls = vec![Duration::ZERO];
    for u in draws(n - 1) {
        let answered = calls[calls.len() - 1] + answer_in;
        calls.push(fired(answered + cadence.pause(u)));
    }
    calls
}

#[tokio::test(start_paused = true)]
async fn the_first_refresh_goes_at_once_then_each_pause_is_drawn_anew_from_the_cadence() {
    let answer_in = ms(100);
    let mut refresher = Loop::start(seed_state(), CadencePlan::Scaled, None, move |_| {
        Answer::After(answer_in, Outcome::Valid)
    });
    let seed_cadence = CadencePlan::Scaled.at(Duration::from_secs(5)); // 1.5 to 2.5 s
    assert_eq!(
        refresher.next_calls(41).await,
        calls_drawn(&seed_cadence, answer_in, 41),
        "the first at 0, then each after its answer and the pause drawn for it"
    );
}

#[tokio::test(start_paused = true)]
async fn a_refresh_that_never_answers_is_inconclusive_at_its_timeout_and_the_next_one_follows_a_pause_later(
) {
    let mut refresher = Loop::start(seed_state(), fixed(1000, 1000, 300), None, |n| {
        if n == 1 {
            Answer::Never
        } else {
            Answer::Now(Outcome::Valid)
        }
    });
    assert_eq!(refresher.next_call().await, ms(0));
    assert_eq!(
        refresher.next_refreshed().await,
        (Outcome::Valid, ms(0), ms(0))
    );
    assert_eq!(refresher.next_call().await, ms(1000));
    refresher.sleep_until(ms(1299)).await;
    assert_eq!(
        refresher.shared.readiness().status,
        Status::Ready,
        "in flight until the timeout"
    );
    assert_eq!(
        refresher.next_refreshed().await,
        (Outcome::Indeterminate, ms(300), ms(1300)),
        "inconclusive at timeoutMs after it was sent"
    );
    assert_eq!(
        refresher
            .shared
            .metrics
            .indeterminate(RefreshCause::Timeout),
        1,
        "counted under the authority's timeout cause"
    );
    let readiness = refresher.shared.readiness();
    assert_eq!(
        (readiness.status, readiness.reason),
        (Status::Degraded, Reason::RefreshIndeterminate)
    );
    assert_eq!(refresher.next_call().await, ms(1300 + 1000));
}

#[tokio::test(start_paused = true)]
async fn without_a_breaker_failures_bring_no_backoff_the_next_refresh_follows_the_usual_pause() {
    // The evidence must be renewed within the window whatever happened: the usual cadence goes
    // on, and only `refresh.breaker` (below) spaces out the calls to an authority that fails.
    let mut refresher = Loop::start(seed_state(), CadencePlan::Scaled, None, |n| {
        Answer::Now(if n == 0 {
            Outcome::Valid
        } else {
            Outcome::Indeterminate
        })
    });
    let seed_cadence = CadencePlan::Scaled.at(Duration::from_secs(5)); // 1.5 to 2.5 s
    assert_eq!(
        refresher.next_calls(21).await,
        calls_drawn(&seed_cadence, Duration::ZERO, 21),
        "each after the pause drawn for it, failed or not"
    );
}

/// A loop refreshing once a second (300 ms timeout) behind a breaker that two failures trip.
fn behind_a_breaker_tripped_by_two(
    answer: impl Fn(usize) -> Answer + Send + Sync + 'static,
) -> Loop {
    let settings = BreakerSettings {
        failure_threshold: 2,
        ..breaker_settings()
    };
    Loop::start(
        seed_state(),
        fixed(1000, 1000, 300),
        Some(Breaker::new(settings, 7)),
        answer,
    )
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_skips_the_authority_and_each_failed_trial_doubles_the_wait() {
    // One refresh a second; the first answer is valid, every later one inconclusive.
    let mut refresher = behind_a_breaker_tripped_by_two(|n| {
        Answer::Now(if n == 0 {
            Outcome::Valid
        } else {
            Outcome::Indeterminate
        })
    });
    let secs = Duration::from_secs;
    // Calls 1 and 2 fail and trip it at 2 s: open for 5 s, so the refreshes at 3 to 6 s are
    // indeterminate without a call, and the one at 7 s is the trial.
    assert_eq!(
        refresher.next_calls(4).await,
        [secs(0), secs(1), secs(2), secs(7)]
    );
    let metrics = &refresher.shared.metrics;
    assert_eq!(
        (
            metrics.refreshes(Outcome::Valid),
            metrics.refreshes(Outcome::Indeterminate)
        ),
        (1, 2 + 4 + 1),
        "the four skipped refreshes count as indeterminate, with calls 1, 2 and the trial"
    );
    assert_eq!(
        (
            metrics.indeterminate(RefreshCause::BreakerOpen),
            metrics.indeterminate(RefreshCause::Http5xx)
        ),
        (4, 2 + 1),
        "the skipped ones as breaker_open, the calls under their own cause"
    );
    // The failed trial reopens it for twice as long, shortened by up to 20% by the breaker's
    // own draws (its seed, 7, is the same generator as `Draws::seeded(7)`), then again. The
    // trial is the first refresh (one a second) at or after the breaker half-opens.
    let mut breaker_draws = Draws::seeded(7);
    let mut reopened_for = |doubled: Duration| doubled.mul_f64(1.0 - 0.2 * breaker_draws.uniform());
    let first_second_after =
        |at: Duration| secs(at.as_nanos().div_ceil(1_000_000_000).try_into().unwrap());
    let second_trial = first_second_after(secs(7) + reopened_for(secs(10)));
    assert_eq!(
        refresher.next_call().await,
        second_trial,
        "after one failed trial"
    );
    let third_trial = first_second_after(second_trial + reopened_for(secs(20)));
    assert_eq!(
        refresher.next_call().await,
        third_trial,
        "after two failed trials"
    );
}

#[tokio::test(start_paused = true)]
async fn refreshes_that_time_out_trip_the_breaker_like_failures() {
    let mut refresher = behind_a_breaker_tripped_by_two(|n| {
        if n == 0 {
            Answer::Now(Outcome::Valid)
        } else {
            Answer::Never
        }
    });
    // Call 1 times out at 1.3 s, call 2 at 2.6 s: open until 7.6 s, the refreshes at 3.6 to
    // 6.6 s skipped.
    assert_eq!(
        refresher.next_calls(4).await,
        [ms(0), ms(1000), ms(2300), ms(7600)]
    );
}

#[tokio::test(start_paused = true)]
async fn a_pause_is_cut_short_to_refresh_half_the_floors_window_before_a_lease_deadline_that_comes_closer(
) {
    let mut refresher = Loop::start(
        fleet_state(grant_until(Duration::from_secs(100))),
        CadencePlan::ScaledForFleet,
        None,
        |_| Answer::Now(Outcome::Valid),
    );
    assert_eq!(refresher.next_call().await, ms(0));
    // The pause drawn for the leased window ends at 1.875 s at the earliest; then a renewal
    // brings the deadline to 2 s, when the window falls to the floor's 1.25 s.
    refresher.sleep_until(ms(500)).await;
    refresher.shared.set_lease(grant_until(ms(2000)));
    assert_eq!(
        refresher.next_call().await,
        ms(2000 - 625),
        "sent half the floor's window before the deadline"
    );
    assert_eq!(refresher.shared.readiness().status, Status::Ready);
    refresher.sleep_until(ms(2000)).await;
    assert_eq!(
        refresher.shared.readiness().status,
        Status::Ready,
        "fresh enough for the floor's window at the lapse"
    );
}

#[tokio::test(start_paused = true)]
async fn a_pause_cut_short_for_a_lease_deadline_is_never_shorter_than_the_floors_so_a_failing_authority_is_not_called_in_a_loop(
) {
    let mut refresher = Loop::start(
        fleet_state(grant_until(ms(2000))),
        CadencePlan::ScaledForFleet,
        None,
        |n| {
            Answer::Now(if n == 0 {
                Outcome::Valid
            } else {
                Outcome::Indeterminate
            })
        },
    );
    // 1.375 s: half the floor's window before the deadline. The evidence stays that of 0 s, so
    // the refresh stays due, but each pause lasts the floor's shortest (0.375 s); after the
    // deadline the floor's usual pauses follow.
    assert_eq!(
        refresher.next_calls(4).await,
        [ms(0), ms(1375), ms(1750), ms(2125)]
    );
    // Each pause from then on is the floor's, drawn anew (calls 0 to 3 used draws 0 to 2).
    let mut expected = vec![ms(2125)];
    for u in &draws(8)[3..] {
        expected.push(fired(
            expected[expected.len() - 1] + floor_pauses().pause(*u),
        ));
    }
    assert_eq!(
        refresher.next_calls(5).await,
        expected[1..],
        "pauses on the floor"
    );
}

#[tokio::test(start_paused = true)]
async fn the_scaled_cadence_follows_the_window_of_the_moment_and_the_node_stays_ready_through_a_lapse(
) {
    // Every call answers 1 ms late, so the readiness read at each call is the one just before
    // fresh evidence lands: the oldest the evidence gets. A pause thus starts 1 ms after its call.
    let mut refresher = Loop::start(fleet_state(None), CadencePlan::ScaledForFleet, None, |_| {
        Answer::After(ms(1), Outcome::Valid)
    });
    // On the floor alone.
    let mut seen = Vec::new();
    for _ in 0..8 {
        seen.push(refresher.next_call_and_status().await);
    }
    // A grant while a pause runs: that pause is not lengthened, the later ones are drawn for
    // the window of 6.25 s, until the pause cut short before the deadline; then the floor's.
    refresher.sleep_until(refresher.now() + ms(2)).await;
    let deadline = refresher.now() + Duration::from_secs(20);
    refresher.shared.set_lease(grant_until(deadline));
    while refresher.now() < deadline + Duration::from_secs(5) {
        seen.push(refresher.next_call_and_status().await);
    }
    let calls = times(&seen);
    // Call k (from 1) follows the pause drawn k - 1, which starts as call k - 1 answers.
    let u = draws(calls.len());
    let after_pause =
        |k: usize, cadence: Cadence| fired(calls[k - 1] + ms(1) + cadence.pause(u[k - 1]));
    for (k, call) in calls.iter().enumerate().take(8).skip(1) {
        assert_eq!(
            *call,
            after_pause(k, floor_pauses()),
            "on the floor, call {k}"
        );
    }
    assert_eq!(
        calls[8],
        after_pause(8, floor_pauses()),
        "the pause running at the grant is not lengthened"
    );
    let due = deadline.saturating_sub(ms(625));
    let (mut leased, mut lapsed) = (0, 0);
    for k in 9..calls.len() {
        if calls[k] < due {
            assert_eq!(
                calls[k],
                after_pause(k, leased_pauses()),
                "leased, call {k}"
            );
            leased += 1;
        } else if calls[k - 1] >= deadline {
            assert_eq!(
                calls[k],
                after_pause(k, floor_pauses()),
                "after the lapse, call {k}"
            );
            lapsed += 1;
        }
    }
    assert!(
        leased >= 5 && lapsed >= 5,
        "{leased} leased, {lapsed} after"
    );
    let left_ready: Vec<_> = seen[1..]
        .iter()
        .filter(|(_, status)| *status != Status::Ready)
        .collect();
    assert!(left_ready.is_empty(), "left ready at {left_ready:?}");
}

// Refresh on demand: the ledger reaching half the node budget (50 of the seed's 100 units)
// after a `valid` answer starts the next refresh at once; after any other outcome, or with the
// breaker open, the usual pause applies; each starts 100 ms after the previous one at the soonest.

/// Call 0 answers `valid`, every later call `after`, each at once.
fn valid_then(after: Outcome) -> impl Fn(usize) -> Answer + Send + Sync + 'static {
    move |n| Answer::Now(if n == 0 { Outcome::Valid } else { after })
}

#[tokio::test(start_paused = true)]
async fn reaching_half_the_node_budget_after_a_valid_answer_starts_the_next_refresh_at_once() {
    let mut refresher = Loop::start(seed_state(), fixed(1000, 1000, 300), None, |_| {
        Answer::Now(Outcome::Valid)
    });
    assert_eq!(refresher.next_call().await, ms(0));
    refresher.sleep_until(ms(100)).await;
    assert!(refresher.shared.admit(49.0));
    refresher.sleep_until(ms(200)).await;
    assert!(refresher.shared.admit(1.0), "the ledger reaches 50 of 100");
    assert_eq!(refresher.next_call().await, ms(200), "at once, not at 1 s");
    assert_eq!(refresher.shared.metrics.demand_refreshes(), 1);
    assert_eq!(refresher.shared.with_state(|s| s.exposure_units()), 0.0);
    assert_eq!(
        refresher.next_call().await,
        ms(1200),
        "then the usual pause"
    );
}

#[tokio::test(start_paused = true)]
async fn units_admitted_during_a_valid_refresh_that_leave_half_the_budget_start_the_next_at_its_answer(
) {
    // Answered in 150 ms: the next starts at the answer; in 50 ms: 100 ms after the start.
    for (latency, second, next) in [(150, 1150, 1300), (50, 1050, 1150)] {
        let mut refresher = Loop::start(seed_state(), fixed(1000, 1000, 300), None, move |_| {
            Answer::After(ms(latency), Outcome::Valid)
        });
        assert_eq!(refresher.next_call().await, ms(0));
        assert_eq!(refresher.next_call().await, ms(second));
        refresher.sleep_until(ms(second + 10)).await;
        assert!(
            refresher.shared.admit(60.0),
            "in flight: not cleared by its answer"
        );
        assert_eq!(
            refresher.next_call().await,
            ms(next),
            "as soon as it answers, and 100 ms after the previous start ({latency} ms)"
        );
        assert_eq!(refresher.shared.metrics.demand_refreshes(), 1);
    }
}

#[tokio::test(start_paused = true)]
async fn no_refresh_on_demand_after_an_indeterminate_or_a_denial() {
    for after in [Outcome::Indeterminate, Outcome::InvalidCredential] {
        let mut refresher = Loop::start(
            seed_state(),
            fixed(1000, 1000, 300),
            None,
            valid_then(after),
        );
        assert_eq!(refresher.next_calls(2).await, [ms(0), ms(1000)]);
        past_half_then_no_demand(&mut refresher, ms(1100), ms(2000)).await;
    }
}

/// Takes the ledger past half the node budget at `at` (with a charge: it is recorded whatever
/// readiness says, where a denial refuses admissions), then checks that the next call comes at
/// `next`, none of them on demand.
async fn past_half_then_no_demand(refresher: &mut Loop, at: Duration, next: Duration) {
    refresher.sleep_until(at).await;
    refresher.shared.charge(80.0);
    assert_eq!(refresher.next_call().await, next, "not on demand");
    assert_eq!(refresher.shared.metrics.demand_refreshes(), 0);
}

#[tokio::test(start_paused = true)]
async fn no_refresh_on_demand_while_the_breaker_is_open() {
    let mut refresher = behind_a_breaker_tripped_by_two(valid_then(Outcome::Indeterminate));
    assert_eq!(refresher.next_calls(3).await, [ms(0), ms(1000), ms(2000)]);
    // The next call is the breaker's trial at 7 s.
    past_half_then_no_demand(&mut refresher, ms(2100), ms(7000)).await;
}

#[tokio::test(start_paused = true)]
async fn refreshes_on_demand_start_100_ms_apart_never_in_a_burst() {
    // Traffic that never stops: 50 units admitted while each refresh is in flight stay after
    // its valid answer (it was sent before them), so the next refresh is always wanted at once;
    // each starts 100 ms after the previous one started, not 1 ms after its answer.
    let mut refresher = Loop::start(seed_state(), fixed(1000, 1000, 300), None, |_| {
        Answer::After(ms(1), Outcome::Valid)
    });
    assert_eq!(refresher.next_call().await, ms(0));
    refresher.sleep_until(ms(500)).await;
    assert!(refresher.shared.try_admit(50.0).is_ok());
    let mut calls = Vec::new();
    for _ in 0..20 {
        calls.push(refresher.next_call().await);
        assert!(refresher.shared.try_admit(50.0).is_ok(), "in flight");
    }
    let expected: Vec<_> = (0..20).map(|i| ms(500 + 100 * i)).collect();
    assert_eq!(calls, expected, "the first at once, then every 100 ms");
    assert_eq!(refresher.shared.metrics.demand_refreshes(), 20);
}

#[tokio::test(start_paused = true)]
async fn units_an_open_reservation_holds_start_no_refresh_on_demand() {
    // 60 of 100 held: past half the budget, but no answer could clear them, so the loop keeps
    // its pause instead of asking the authority ten times a second for nothing.
    let mut refresher = Loop::start(seed_state(), fixed(1000, 1000, 300), None, |_| {
        Answer::After(ms(1), Outcome::Valid)
    });
    assert_eq!(refresher.next_call().await, ms(0));
    refresher.sleep_until(ms(500)).await;
    assert!(refresher.shared.try_hold(60.0).is_ok());
    assert_eq!(
        refresher.next_call().await,
        ms(1001),
        "after the usual pause"
    );
    assert_eq!(refresher.shared.metrics.demand_refreshes(), 0);
}

/// Hears of each status change the watcher reports, and when (on the loop's fake clock).
struct Changes {
    reported: mpsc::UnboundedSender<(Duration, Status, Readiness)>,
    clock: RuntimeClock,
}

impl SentinelObserver for Changes {
    fn transition(&self, from: Status, now: Readiness) {
        let _ = self.reported.send((self.clock.now(), from, now));
    }
    fn refreshed(&self, _: Verdict, _: Duration) {}
    fn task_failed(&self, _: Task) {}
}

/// `(when, from, to, reason, evidence age)` of the next change the watcher reports.
async fn next_change(
    changes: &mut mpsc::UnboundedReceiver<(Duration, Status, Readiness)>,
) -> (Duration, Status, Status, Reason, Option<Duration>) {
    let (at, from, now) = tokio::time::timeout(BOUND, changes.recv())
        .await
        .expect("the watcher reports another change")
        .expect("the watcher runs");
    (at, from, now.status, now.reason, now.evidence_age)
}

#[tokio::test(start_paused = true)]
async fn the_change_to_not_ready_is_reported_the_moment_the_window_runs_out_with_no_refresh_near_it(
) {
    // w = 5 s. Call 0 (at 0) is valid; every later call never answers and ends at its 2 s
    // timeout: call 1 (at 1 s) at 3 s, call 2 (at 4 s) at 6 s. From 3 s to 6 s nothing happens
    // but time, so only the watcher's own timer can report the window running out at 5 s.
    let refresher = Loop::start(seed_state(), fixed(1000, 1000, 2000), None, |n| {
        if n == 0 {
            Answer::Now(Outcome::Valid)
        } else {
            Answer::Never
        }
    });
    let shared = refresher.shared.clone();
    // As `start` does: the starting status is read before any refresh can complete.
    shared.set_reported_status(shared.readiness().status);
    let (reported, mut changes) = mpsc::unbounded_channel();
    let observer = Arc::new(Changes {
        reported,
        clock: refresher.clock,
    });
    tokio::spawn(super::watch_transitions(shared, observer));
    let secs = Duration::from_secs;
    assert_eq!(
        next_change(&mut changes).await,
        (
            ms(0),
            Status::NotReady,
            Status::Ready,
            Reason::Verified,
            Some(ms(0))
        )
    );
    assert_eq!(
        next_change(&mut changes).await,
        (
            secs(3),
            Status::Ready,
            Status::Degraded,
            Reason::RefreshIndeterminate,
            Some(secs(3))
        ),
        "degraded when call 1 times out"
    );
    assert_eq!(
        next_change(&mut changes).await,
        (
            secs(5),
            Status::Degraded,
            Status::NotReady,
            Reason::EvidenceTooOld,
            Some(secs(5))
        ),
        "not_ready at the very moment the evidence is w old, with its age then"
    );
}
