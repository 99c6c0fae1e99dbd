//! One sentinel's state as the shell shares it between the JS thread (admit, readiness, drain,
//! close) and the runtime thread (refreshes, transitions). The lock is held only for the few
//! nanoseconds a rule takes; no I/O ever happens under it.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::{watch, Notify};

use crate::clock::{Clock, SystemClock};
use crate::metrics::{Gauges, Metrics};
use crate::rules::budget::lease::Lease;
use crate::rules::pause::end_before_lapse;
use crate::rules::readiness_holds::{HoldId, HoldName, Released};
use crate::rules::refresh_on_demand::{demand_due, DemandInputs};
use crate::rules::sentinel_state::{Admitted, Recorded};
use crate::rules::{
    Cadence, CadencePlan, Outcome, Readiness, Reason, Refusal, SentinelState, Status,
};

pub struct SharedSentinel {
    state: Mutex<SentinelState>,
    /// Every reading of the time for this sentinel, and every wait on it, goes through this.
    clock: Arc<dyn Clock>,
    pub metrics: Metrics,
    cadence: CadencePlan,
    /// Wakes the transition watcher after a change that no refresh made (admit, drain, close,
    /// a new lease).
    pub changed: Notify,
    /// Wakes the refresh loop's pause when the budget (and so the window) changed.
    pub budget_changed: Notify,
    /// Wakes the refresh loop's pause when the ledger reached half the node budget (a refresh
    /// on demand may be due). Told at the crossing only, not on every admission.
    pub half_spent: Notify,
    /// Wakes the fleet's lease task after a refresh answered `valid` (it settles and ends holds
    /// with the evidence time, which the state holds).
    pub verified: Notify,
    closed_tx: watch::Sender<bool>,
    /// The same fact as `Lifecycle::Closed`, readable without the lock from any thread.
    closed: Arc<AtomicBool>,
    /// The status the transition watcher last reported, so that a watcher restarted after a
    /// defect reports the change from there (a `Status`'s code).
    reported: AtomicU8,
}

impl SharedSentinel {
    /// A sentinel on the system clock.
    pub fn new(state: SentinelState, cadence: CadencePlan) -> Arc<Self> {
        Self::with_clock(state, cadence, Arc::new(SystemClock))
    }

    /// A sentinel on `clock` (tests hand it fake time).
    pub fn with_clock(
        state: SentinelState,
        cadence: CadencePlan,
        clock: Arc<dyn Clock>,
    ) -> Arc<Self> {
        Arc::new(SharedSentinel {
            state: Mutex::new(state),
            clock,
            metrics: Metrics::default(),
            cadence,
            changed: Notify::new(),
            budget_changed: Notify::new(),
            half_spent: Notify::new(),
            verified: Notify::new(),
            closed_tx: watch::channel(false).0,
            closed: Arc::new(AtomicBool::new(false)),
            reported: AtomicU8::new(0),
        })
    }

    /// The clock this sentinel reads and waits on.
    pub fn clock(&self) -> &dyn Clock {
        &*self.clock
    }

    /// This sentinel's clock, read now.
    pub fn now(&self) -> Duration {
        self.clock.now()
    }

    /// The refresh cadence for the window of the moment.
    pub fn cadence_now(&self) -> Cadence {
        let window = self.with_state(|state| state.budget().cadence_basis_at(self.now()));
        self.cadence.at(window)
    }

    /// The next moment the budget changes by time alone (a lease deadline), if any.
    pub fn next_budget_change(&self) -> Option<Duration> {
        self.with_state(|state| state.budget().next_change_after(self.now()))
    }

    /// When a pause that started at `started` must end before a lease lapses, read now (the
    /// rule: `pause::end_before_lapse`); `None` outside a fleet.
    pub fn end_before_lapse(&self, started: Duration) -> Option<Duration> {
        let now = self.now();
        self.with_state(|state| {
            let fleet = state.budget().fleet()?;
            end_before_lapse(fleet, &self.cadence, now, state.verified_at(), started)
        })
    }

    /// A new lease from the fleet (or none): readiness and the cadence see it at once.
    pub fn set_lease(&self, lease: Option<Lease>) {
        self.with_fleet_budget(|state, _| state.set_lease(lease));
    }

    /// Runs `f` on the state under the lock with the time of now (one step of an exchange with
    /// the fleet, `rules::fleet_exchange`), then wakes the transition watcher and the refresh
    /// loop's pause when it changed the fleet budget (a lease, a floor): readiness and the
    /// cadence see it at once.
    pub fn with_fleet_budget<T>(&self, f: impl FnOnce(&mut SentinelState, Duration) -> T) -> T {
        let now = self.now();
        let (out, changed) = self.with_state(|state| {
            let before = state.budget().fleet().copied();
            let out = f(state, now);
            (out, state.budget().fleet().copied() != before)
        });
        if changed {
            self.budget_did_change();
        }
        out
    }

    /// When the next refresh should start on demand, if it should (see `demand_due`), with the
    /// ledger and node budget of now; the previous refresh started at `previous_start`.
    pub fn demand_refresh_due(
        &self,
        previous_start: Duration,
        last_outcome: Option<Outcome>,
        breaker_open: bool,
    ) -> Option<Duration> {
        let now = self.now();
        let inputs = self.with_state(|state| DemandInputs {
            recorded_units: state.recorded_units(),
            held_units: state.reserved_units(),
            node_budget_units: state.node_budget_units(now),
            last_outcome,
            breaker_open,
            previous_start,
        });
        demand_due(&inputs, now)
    }

    fn budget_did_change(&self) {
        self.changed.notify_one();
        self.budget_changed.notify_one();
    }

    /// The status listeners were last told about.
    pub fn reported_status(&self) -> Status {
        // Only `set_reported_status` stores here: always a status's code.
        Status::ALL[usize::from(self.reported.load(Ordering::Acquire))]
    }

    pub fn set_reported_status(&self, status: Status) {
        self.reported.store(status.code(), Ordering::Release);
    }

    /// A refresher task stopped on a defect: fail closed and wake the watcher to report it.
    pub fn fail(&self) {
        self.with_state(SentinelState::fail);
        self.changed.notify_one();
    }

    /// Runs `f` on the state under the lock. Keep `f` to a rule call.
    pub fn with_state<T>(&self, f: impl FnOnce(&mut SentinelState) -> T) -> T {
        f(&mut self.state.lock())
    }

    pub fn readiness(&self) -> Readiness {
        self.with_state(|state| state.readiness(self.now()))
    }

    /// Whether the first refresh has finished (any outcome).
    pub fn has_refreshed(&self) -> bool {
        self.with_state(|state| state.has_refreshed())
    }

    /// `admit(units)`: whether [`SharedSentinel::try_admit`] admitted the units.
    pub fn admit(&self, units: f64) -> bool {
        self.try_admit(units).is_ok()
    }

    /// Admission (README, Admission; docs/api.md): `Ok` when the units are admitted, else the
    /// refusal with its reason, decided under one lock. Counts the units (or the refusal) for the
    /// metrics, and wakes the watcher when this admission spent the budget (a status change).
    pub fn try_admit(&self, units: f64) -> Result<(), Refusal> {
        self.admit_with(units, SentinelState::try_admit)
    }

    /// A reservation's admission (`reserve`, `extend`): as [`SharedSentinel::try_admit`], but
    /// the units are held until the reservation settles.
    pub fn try_hold(&self, units: f64) -> Result<(), Refusal> {
        self.admit_with(units, SentinelState::try_hold)
    }

    /// A reservation holding `held` units, having recorded `recorded`, settled at `actual` units
    /// in all (see `SentinelState::settle`).
    pub fn settle(&self, held: f64, recorded: f64, actual: f64) {
        self.record_with(|state, now| (state.settle(held, recorded, actual, now), ()));
    }

    /// A reservation holding `held` units reports `units` already produced (see
    /// `SentinelState::record`); answers the units it still holds.
    pub fn record(&self, held: f64, units: f64) -> f64 {
        self.record_with(|state, now| state.record(held, units, now))
    }

    /// `charge(units)`: usage spent without an admission (see `SentinelState::charge`).
    pub fn charge(&self, units: f64) {
        self.record_with(|state, now| (state.charge(units, now), ()));
    }

    /// Runs `record` under the lock, then counts its settlement and wakes whoever its change
    /// concerns; answers what `record` answered beside it.
    fn record_with<T>(
        &self,
        record: impl FnOnce(&mut SentinelState, Duration) -> (Recorded, T),
    ) -> T {
        let (recorded, out) = self.with_state(|state| record(state, self.now()));
        self.metrics.settled(recorded.settlement);
        if recorded.spent_changed {
            self.changed.notify_one();
        }
        if recorded.reached_half {
            self.half_spent.notify_one();
        }
        out
    }

    fn admit_with(
        &self,
        units: f64,
        rule: fn(&mut SentinelState, f64, Duration) -> Result<Admitted, Refusal>,
    ) -> Result<(), Refusal> {
        let admission = self.with_state(|state| rule(state, units, self.now()));
        match admission {
            Ok(admitted) => {
                if admitted.spent_budget {
                    self.changed.notify_one();
                }
                if admitted.reached_half {
                    self.half_spent.notify_one();
                }
                self.metrics.admitted(units, admitted.status);
                Ok(())
            }
            Err(refusal) => {
                self.metrics.refused(refusal.reason, units);
                Err(refusal)
            }
        }
    }

    /// The gauges of the metrics, read now.
    pub fn gauges(&self) -> Gauges {
        self.with_state(|state| {
            let now = self.now();
            Gauges {
                readiness: state.readiness(now),
                stale_window: state.stale_window(now),
                node_budget_units: state.node_budget_units(now),
                exposure_units: state.exposure_units(),
                reserved_units: state.reserved_units(),
                holds: state
                    .readiness_holds()
                    .by_name()
                    .map(|(name, open)| (name.to_string(), open))
                    .collect(),
            }
        })
    }

    pub fn refusal_reason(&self, units: f64) -> Option<Reason> {
        self.with_state(|state| state.refusal_reason(units, self.now()))
    }

    /// `sentinel.hold(name)`: `not_ready` / `held` until released; the watcher reports the
    /// change. Answers the hold and how many are open under its name.
    pub fn hold_readiness(&self, name: HoldName) -> (HoldId, usize) {
        let opened = self.with_state(|state| {
            let id = state.hold_readiness(name, self.now());
            (id, state.readiness_holds().open_named(name))
        });
        self.changed.notify_one();
        opened
    }

    /// Ends the hold `id`; `None` (and nothing changes) when it had already ended.
    pub fn release_readiness_hold(&self, id: HoldId) -> Option<Released> {
        let released = self.with_state(|state| state.release_readiness_hold(id, self.now()))?;
        self.changed.notify_one();
        Some(released)
    }

    pub fn drain(&self) {
        self.with_state(SentinelState::drain);
        self.changed.notify_one();
    }

    /// Idempotent. After it returns no refresh starts (the refresher asks the state first).
    pub fn close(&self) {
        self.with_state(SentinelState::close);
        self.closed.store(true, Ordering::Release);
        self.closed_tx.send_replace(true);
        self.changed.notify_one();
    }

    /// Whether `close()` has been called (no lock; any thread).
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// The flag behind `is_closed`, for a part that outlives a borrow of this (the JS authority
    /// checks it before calling into JavaScript).
    pub fn closed_flag_handle(&self) -> Arc<AtomicBool> {
        self.closed.clone()
    }

    /// Resolves once `close()` has been called.
    pub async fn until_closed(&self) {
        let mut rx = self.closed_tx.subscribe();
        let _ = rx.wait_for(|closed| *closed).await;
    }
}
