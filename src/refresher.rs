//! The refresh loop and the transition watcher: the only code that waits, sleeps or does I/O.
//!
//! Two tasks per sentinel on the private runtime:
//! - `refresh_loop`: one refresh at a time, bounded by `timeoutMs`, then a jittered pause;
//! - `watch_transitions`: re-reads readiness after every change and at the moment the evidence
//!   reaches the stale window, and reports each status change.

use std::sync::Arc;
use std::time::Duration;

use crate::authority::Authority;
use crate::clock;
use crate::rules::breaker::{Breaker, BreakerSettings};
use crate::rules::guard::Lifecycle;
use crate::rules::{Outcome, Readiness, Status};
use crate::runtime;
use crate::shared::Shared;

/// Where status changes go (the binding layer delivers them to JavaScript).
pub trait Events: Send + Sync + 'static {
    /// The status changed from `from` to `now.status`.
    fn transition(&self, from: Status, now: Readiness);
    /// A refresh sent to the authority answered `outcome` after `took` (for the logger).
    fn refreshed(&self, outcome: Outcome, took: Duration);
}

/// Starts refreshing at once: the first refresh is not delayed. With `breaker` settings every
/// refresh asks a circuit breaker first; while it refuses, the refresh is `indeterminate` and
/// the authority is not called.
pub fn start(
    shared: Arc<Shared>,
    authority: Authority,
    events: Arc<dyn Events>,
    breaker: Option<BreakerSettings>,
) {
    // Read the starting status here, not in the watcher task: the first refresh may complete
    // before that task first runs, and its transition must not be taken for the start.
    let initial = shared.readiness().status;
    let handle = runtime::handle();
    handle.spawn(watch_transitions(shared.clone(), events.clone(), initial));
    let breaker = breaker.map(|settings| Breaker::new(settings, rand::random()));
    handle.spawn(refresh_loop(shared, authority, events, breaker));
}

async fn refresh_loop(
    shared: Arc<Shared>,
    authority: Authority,
    events: Arc<dyn Events>,
    mut breaker: Option<Breaker>,
) {
    loop {
        let Some(ticket) = shared.with_guard(|guard| guard.refresh_sent(clock::now())) else {
            return;
        };
        let permit = breaker
            .as_mut()
            .map(|b| b.acquire(clock::now()))
            .transpose();
        let outcome = match permit {
            Err(_open) => {
                shared.metrics.refreshed(Outcome::Indeterminate, None);
                Outcome::Indeterminate
            }
            Ok(permit) => {
                let sent = clock::now();
                let outcome = tokio::select! {
                    biased;
                    _ = shared.closed() => return,
                    answer = tokio::time::timeout(shared.cadence.timeout, authority.check()) => {
                        answer.unwrap_or(Outcome::Indeterminate)
                    }
                };
                let answered = clock::now();
                shared.metrics.refreshed(outcome, Some(answered - sent));
                if let (Some(breaker), Some(permit)) = (breaker.as_mut(), permit) {
                    breaker.settle(permit, outcome.as_call_outcome(), answered);
                }
                events.refreshed(outcome, answered - sent);
                outcome
            }
        };
        shared.with_guard(|guard| guard.refresh_answered(ticket, outcome));
        shared.changed.notify_one();
        let pause = shared.cadence.pause(rand::random::<f64>());
        tokio::select! {
            biased;
            _ = shared.closed() => return,
            _ = tokio::time::sleep(pause) => {}
        }
    }
}

async fn watch_transitions(shared: Arc<Shared>, events: Arc<dyn Events>, initial: Status) {
    let mut last = initial;
    loop {
        let now = clock::now();
        let (readiness, lifecycle, expiry) = shared.with_guard(|guard| {
            (
                guard.readiness(now),
                guard.lifecycle(),
                guard.next_expiry_after(now),
            )
        });
        if readiness.status != last {
            shared.metrics.transitioned(last, &readiness);
            events.transition(last, readiness);
            last = readiness.status;
        }
        if lifecycle == Lifecycle::Closed {
            return;
        }
        match expiry {
            Some(at) => tokio::select! {
                _ = shared.changed.notified() => {}
                _ = tokio::time::sleep_until(clock::deadline(at)) => {}
            },
            None => shared.changed.notified().await,
        }
    }
}
