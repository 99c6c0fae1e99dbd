//! One sentinel's state as the shell shares it between the JS thread (admit, readiness, drain,
//! close) and the runtime thread (refreshes, transitions). The lock is held only for the few
//! nanoseconds a rule takes; no I/O ever happens under it.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::{watch, Notify};

use crate::clock;
use crate::metrics::{Gauges, Metrics};
use crate::rules::lease::Lease;
use crate::rules::{Cadence, CadencePlan, Guard, Readiness, Reason, Status};

pub struct Shared {
    guard: Mutex<Guard>,
    pub metrics: Metrics,
    cadence: CadencePlan,
    /// Wakes the transition watcher after a change that no refresh made (admit, drain, close,
    /// a new lease).
    pub changed: Notify,
    /// Wakes the refresh loop's pause when the budget (and so the window) changed.
    pub budget_changed: Notify,
    /// The send time of the latest refresh that answered `valid` (the fleet settles with it).
    pub verified_sent_at: watch::Sender<Option<std::time::Duration>>,
    closed_tx: watch::Sender<bool>,
    /// The same fact as `Lifecycle::Closed`, readable without the lock from any thread.
    closed: Arc<AtomicBool>,
    /// The status the transition watcher last reported, so that a watcher restarted after a
    /// defect reports the change from there (index into `Status::ALL`).
    reported: AtomicU8,
}

impl Shared {
    pub fn new(guard: Guard, cadence: CadencePlan) -> Arc<Self> {
        Arc::new(Shared {
            guard: Mutex::new(guard),
            metrics: Metrics::default(),
            cadence,
            changed: Notify::new(),
            budget_changed: Notify::new(),
            verified_sent_at: watch::channel(None).0,
            closed_tx: watch::channel(false).0,
            closed: Arc::new(AtomicBool::new(false)),
            reported: AtomicU8::new(0),
        })
    }

    /// The refresh cadence for the window of the moment.
    pub fn cadence_now(&self) -> Cadence {
        let window = self.with_guard(|guard| guard.budget().cadence_window_at(clock::now()));
        self.cadence.at(window)
    }

    /// The next moment the budget changes by time alone (a lease deadline), if any.
    pub fn next_budget_change(&self) -> Option<std::time::Duration> {
        self.with_guard(|guard| guard.budget().next_change_after(clock::now()))
    }

    /// A new lease from the fleet (or none): readiness and the cadence see it at once.
    pub fn set_lease(&self, lease: Option<Lease>) {
        self.with_guard(|guard| guard.set_lease(lease));
        self.changed.notify_one();
        self.budget_changed.notify_one();
    }

    /// The status listeners were last told about.
    pub fn reported_status(&self) -> Status {
        Status::ALL[usize::from(self.reported.load(Ordering::Acquire)) % Status::ALL.len()]
    }

    pub fn set_reported_status(&self, status: Status) {
        let index = Status::ALL.iter().position(|s| *s == status).unwrap_or(0);
        self.reported.store(index as u8, Ordering::Release);
    }

    /// A refresher task stopped on a defect: fail closed and wake the watcher to report it.
    pub fn fail(&self) {
        self.with_guard(Guard::fail);
        self.changed.notify_one();
    }

    /// Runs `f` on the guard under the lock. Keep `f` to a rule call.
    pub fn with_guard<T>(&self, f: impl FnOnce(&mut Guard) -> T) -> T {
        f(&mut self.guard.lock())
    }

    pub fn readiness(&self) -> Readiness {
        self.with_guard(|guard| guard.readiness(clock::now()))
    }

    /// Whether the first refresh has finished (any outcome).
    pub fn has_refreshed(&self) -> bool {
        self.with_guard(|guard| guard.has_refreshed())
    }

    /// Admission (README, API). Counts the units (or the refusal) for the metrics, and wakes the watcher when
    /// this admission spent the budget (a status change).
    pub fn admit(&self, units: f64) -> bool {
        let (admission, spent) = self.with_guard(|guard| {
            let now = clock::now();
            let admission = guard.try_admit(units, now);
            (admission, admission.is_ok() && guard.is_budget_spent(now))
        });
        if spent {
            self.changed.notify_one();
        }
        match admission {
            Ok(status) => {
                self.metrics.admitted(units, status);
                true
            }
            Err(reason) => {
                self.metrics.refused(reason, units);
                false
            }
        }
    }

    /// The gauges of the metrics, read now.
    pub fn gauges(&self) -> Gauges {
        self.with_guard(|guard| {
            let now = clock::now();
            Gauges {
                readiness: guard.readiness(now),
                stale_window: guard.stale_window(now),
                node_budget_units: guard.node_budget_units(now),
                unverified_units: guard.unverified_units(),
            }
        })
    }

    pub fn refusal_reason(&self, units: f64) -> Option<Reason> {
        self.with_guard(|guard| guard.refusal_reason(units, clock::now()))
    }

    pub fn drain(&self) {
        self.with_guard(Guard::drain);
        self.changed.notify_one();
    }

    /// Idempotent. After it returns no refresh starts (the refresher asks the guard first).
    pub fn close(&self) {
        self.with_guard(Guard::close);
        self.closed.store(true, Ordering::Release);
        self.closed_tx.send_replace(true);
        self.changed.notify_one();
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    pub fn closed_flag(&self) -> Arc<AtomicBool> {
        self.closed.clone()
    }

    /// Resolves once `close()` has been called.
    pub async fn closed(&self) {
        let mut rx = self.closed_tx.subscribe();
        let _ = rx.wait_for(|closed| *closed).await;
    }
}
