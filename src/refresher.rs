//! The refresh loop and the transition watcher: where a sentinel waits on its authority and on
//! time. (The shell's other waiting: the lease task in `fleet`, and `runtime::after`, which
//! times out `whenReady`. The bindings never wait.)
//!
//! Two tasks per sentinel on the private runtime:
//! - `refresh_loop`: one refresh at a time, bounded by `timeoutMs`, then a jittered pause, cut
//!   short when a refresh on demand is due (the ledger reached half the node budget after a
//!   `valid` answer);
//! - `watch_transitions`: re-reads readiness after every change and at the moment the evidence
//!   reaches the stale window, and reports each status change.
//!
//! Each runs under [`supervise`]: a panic (a defect) must not leave a sentinel that silently
//! stops refreshing and reporting. The sentinel fails closed (`not_ready`/`internal_error`),
//! the logger hears of it, and a dead watcher is restarted once so the change is reported.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::authority::{Authority, Check};
use crate::logging::Task;
use crate::rules::breaker::{Breaker, BreakerSettings, BreakerState};
use crate::rules::fleet::FleetEvent;
use crate::rules::pause::{Pause, PauseEnd};
use crate::rules::sentinel_state::Lifecycle;
use crate::rules::{Outcome, Readiness, RefreshCause, Status, Verdict};
use crate::runtime;
use crate::shared_sentinel::SharedSentinel;

mod draws;
pub use draws::Draws;

/// Where status changes go (the binding layer delivers them to JavaScript).
pub trait SentinelObserver: Send + Sync + 'static {
    /// The status changed from `from` to `now.status`.
    fn transition(&self, from: Status, now: Readiness);
    /// A refresh sent to the authority concluded `verdict` after `took` (for the logger).
    fn refreshed(&self, verdict: Verdict, took: Duration);
    /// A task of this sentinel panicked; the sentinel now fails closed.
    fn task_failed(&self, task: Task);
    /// The fleet changed in a way the logger hears of.
    fn fleet_event(&self, _event: &FleetEvent) {}
}

/// Starts refreshing at once: the first refresh is not delayed. With `breaker` settings every
/// refresh asks a circuit breaker first; while it refuses, the refresh is `indeterminate` and
/// the authority is not called. Pauses (and the breaker's jitter) are drawn from `draws`.
pub fn start(
    shared: Arc<SharedSentinel>,
    authority: Authority,
    observer: Arc<dyn SentinelObserver>,
    breaker: Option<BreakerSettings>,
    mut draws: Draws,
) {
    // Read the starting status here, not in the watcher task: the first refresh may complete
    // before that task first runs, and its transition must not be taken for the start.
    shared.set_reported_status(shared.readiness().status);
    spawn_watcher(shared.clone(), observer.clone(), 1);
    let breaker = breaker.map(|settings| Breaker::new(settings, draws.seed()));
    let refresh = refresh_loop(shared.clone(), authority, observer.clone(), breaker, draws);
    supervise(shared, observer, Task::Refresh, refresh, || {});
}

/// Starts the transition watcher; after a panic it is started again, `restarts` times at most
/// (a watcher that panics every time must not spin).
fn spawn_watcher(shared: Arc<SharedSentinel>, observer: Arc<dyn SentinelObserver>, restarts: u32) {
    let watcher = watch_transitions(shared.clone(), observer.clone());
    let (again_shared, again_observer) = (shared.clone(), observer.clone());
    supervise(shared, observer, Task::Transitions, watcher, move || {
        if restarts > 0 {
            spawn_watcher(again_shared, again_observer, restarts - 1);
        }
    });
}

/// Runs `task` on the runtime. If it panics, the sentinel fails closed, the logger is told,
/// and `after_panic` runs (tokio has already caught the panic; the runtime thread lives on).
pub fn supervise<F>(
    shared: Arc<SharedSentinel>,
    observer: Arc<dyn SentinelObserver>,
    task: Task,
    future: F,
    after_panic: impl FnOnce() + Send + 'static,
) where
    F: Future<Output = ()> + Send + 'static,
{
    let handle = runtime::handle();
    let running = handle.spawn(future);
    handle.spawn(async move {
        if let Err(error) = running.await {
            if error.is_panic() {
                shared.fail();
                observer.task_failed(task);
                after_panic();
            }
        }
    });
}

async fn refresh_loop(
    shared: Arc<SharedSentinel>,
    authority: impl Check,
    observer: Arc<dyn SentinelObserver>,
    mut breaker: Option<Breaker>,
    mut draws: Draws,
) {
    loop {
        let started = shared.now();
        let Some(ticket) = shared.with_state(|state| state.refresh_sent(shared.now())) else {
            return;
        };
        let permit = breaker
            .as_mut()
            .map(|b| b.acquire(shared.now()))
            .transpose();
        let outcome = match permit {
            Err(_open) => {
                let skipped = Verdict::Indeterminate(RefreshCause::BreakerOpen);
                shared.metrics.refreshed(skipped, None);
                skipped.outcome()
            }
            Ok(permit) => {
                let sent = shared.now();
                let timed_out_at = sent.saturating_add(shared.cadence_now().timeout);
                let verdict = tokio::select! {
                    biased;
                    _ = shared.until_closed() => return,
                    answer = authority.check() => answer,
                    _ = shared.clock().sleep_until(timed_out_at) => {
                        Verdict::Indeterminate(authority.timeout_cause())
                    }
                };
                let answered = shared.now();
                let took = answered.saturating_sub(sent);
                shared.metrics.refreshed(verdict, Some(took));
                let outcome = verdict.outcome();
                if let (Some(breaker), Some(permit)) = (breaker.as_mut(), permit) {
                    breaker.settle(permit, outcome.as_call_outcome(), answered);
                }
                observer.refreshed(verdict, took);
                outcome
            }
        };
        shared.with_state(|state| state.refresh_answered(ticket, outcome));
        shared.changed.notify_one();
        if outcome == Outcome::Valid {
            shared.verified.notify_one();
        }
        // Read once: a breaker opens only on a refresh's result, and none runs during a pause.
        let breaker_open = breaker
            .as_mut()
            .is_some_and(|b| b.state(shared.now()) == BreakerState::Open);
        let demand_due = || shared.demand_refresh_due(started, Some(outcome), breaker_open);
        let ended = tokio::select! {
            biased;
            _ = shared.until_closed() => return,
            ended = pause(&shared, draws.uniform(), demand_due) => ended,
        };
        if ended == PauseEnd::OnDemand {
            shared.metrics.refreshed_on_demand();
        }
    }
}

/// Sleeps through the pause before the next refresh (drawn `draw`, planned by
/// [`Pause`]), waking to re-plan whenever the window may have changed: a new lease, a lease
/// deadline, the ledger reaching half the node budget (`demand_due` is asked again then).
async fn pause(
    shared: &SharedSentinel,
    draw: f64,
    demand_due: impl Fn() -> Option<Duration>,
) -> PauseEnd {
    let mut plan = Pause::start(shared.now(), draw, &shared.cadence_now());
    loop {
        let wait = plan.wait(
            shared.end_before_lapse(plan.started()),
            demand_due(),
            shared.next_budget_change(),
        );
        tokio::select! {
            _ = shared.clock().sleep_until(wait.until) => return wait.ends,
            _ = shared.budget_changed.notified() => {}
            _ = shared.half_spent.notified() => {}
            _ = sleep_until_some(shared, wait.replan_at) => {}
        }
        if plan.replan(shared.now(), &shared.cadence_now()) {
            return PauseEnd::Elapsed;
        }
    }
}

async fn sleep_until_some(shared: &SharedSentinel, at: Option<Duration>) {
    match at {
        Some(at) => shared.clock().sleep_until(at).await,
        None => std::future::pending().await,
    }
}

async fn watch_transitions(shared: Arc<SharedSentinel>, observer: Arc<dyn SentinelObserver>) {
    let mut last = shared.reported_status();
    loop {
        let now = shared.now();
        let (readiness, lifecycle, expiry) = shared.with_state(|state| {
            (
                state.readiness(now),
                state.lifecycle(),
                state.next_expiry_after(now),
            )
        });
        if readiness.status != last {
            shared.metrics.transitioned(last, &readiness);
            observer.transition(last, readiness);
            last = readiness.status;
            shared.set_reported_status(last);
        }
        if lifecycle == Lifecycle::Closed {
            return;
        }
        match expiry {
            Some(at) => tokio::select! {
                _ = shared.changed.notified() => {}
                _ = shared.clock().sleep_until(at) => {}
            },
            None => shared.changed.notified().await,
        }
    }
}

#[cfg(test)]
mod cadence_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::budget::fixed::seed_budget;
    use crate::rules::{Reason, SentinelState};
    use parking_lot::Mutex;
    use std::sync::mpsc;

    /// Sends every event to the test thread, which waits for it with a generous bound.
    struct Recorder(Mutex<mpsc::Sender<String>>);

    impl SentinelObserver for Recorder {
        fn transition(&self, from: Status, now: Readiness) {
            let event = format!(
                "{} -> {} ({})",
                from.as_str(),
                now.status.as_str(),
                now.reason.as_str()
            );
            let _ = self.0.lock().send(event);
        }
        fn refreshed(&self, _: Verdict, _: Duration) {}
        fn task_failed(&self, task: Task) {
            let _ = self.0.lock().send(format!("{} failed", task.as_str()));
        }
    }

    fn recorder() -> (Arc<dyn SentinelObserver>, mpsc::Receiver<String>) {
        let (tx, rx) = mpsc::channel();
        (Arc::new(Recorder(Mutex::new(tx))), rx)
    }

    fn next(rx: &mpsc::Receiver<String>) -> String {
        rx.recv_timeout(Duration::from_secs(10))
            .expect("an event within 10 s")
    }

    fn verified_shared() -> Arc<SharedSentinel> {
        let shared = SharedSentinel::new(
            SentinelState::new(seed_budget()),
            crate::rules::CadencePlan::Scaled,
        );
        shared.with_state(|state| {
            let ticket = state.refresh_sent(shared.now()).unwrap();
            state.refresh_answered(ticket, Outcome::Valid);
        });
        shared.set_reported_status(Status::Ready);
        shared
    }

    #[test]
    fn a_panicking_refresh_task_fails_closed_and_is_reported() {
        let shared = verified_shared();
        let (observer, rx) = recorder();
        spawn_watcher(shared.clone(), observer.clone(), 1);
        supervise(
            shared.clone(),
            observer,
            Task::Refresh,
            async { panic!("defect") },
            || {},
        );
        let mut seen = [next(&rx), next(&rx)];
        seen.sort();
        assert_eq!(
            seen,
            ["ready -> not_ready (internal_error)", "refresh failed"]
        );
        assert!(!shared.admit(1.0));
        shared.close();
    }

    #[test]
    fn a_panicking_watcher_is_restarted_and_reports_the_failure() {
        let shared = verified_shared();
        let (observer, rx) = recorder();
        let (again_shared, again_observer) = (shared.clone(), observer.clone());
        let restart = move || spawn_watcher(again_shared, again_observer, 0);
        supervise(
            shared.clone(),
            observer,
            Task::Transitions,
            async { panic!("defect") },
            restart,
        );
        assert_eq!(next(&rx), "transitions failed");
        assert_eq!(next(&rx), "ready -> not_ready (internal_error)");
        assert_eq!(shared.readiness().reason, Reason::InternalError);
        shared.close();
    }
}
