//! Delivering what the refresher sees to JavaScript: `onTransition` listeners, refresh listeners
//! (the metrics feed's), pending `whenReady` promises and the `logger` option's lines.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi::JsDeferred;
use parking_lot::Mutex;

use super::errors::{self, Kind};
use super::logger::JsLogger;
use super::types::{Readiness, TransitionEvent};
use super::warning;
use crate::js_thread::JsThread;
use crate::logging::{self, Task};
use crate::refresher::SentinelObserver;
use crate::rules::fleet::FleetEvent;
use crate::rules::{self, JsType, Status, Verdict};
use crate::runtime;
use crate::shared_sentinel::SharedSentinel;

/// JavaScript functions called with an `A`, each under the id that removes it. Added, removed and
/// called on the JS thread; the refresher only asks whether there are any (`tell_refreshed`), so
/// the lock is held for moments.
struct Listeners<A: JsValuesTupleIntoVec + 'static> {
    list: Mutex<Vec<(u64, Listener<A>)>>,
}

type Listener<A> = Arc<FunctionRef<A, Unknown<'static>>>;

impl<A: JsValuesTupleIntoVec + 'static> Listeners<A> {
    fn new() -> Self {
        Listeners {
            list: Mutex::new(Vec::new()),
        }
    }

    fn add(&self, id: u64, listener: FunctionRef<A, Unknown<'static>>) {
        self.list.lock().push((id, Arc::new(listener)));
    }

    fn remove(&self, id: u64) {
        self.list
            .lock()
            .retain(|(listener_id, _)| *listener_id != id);
    }

    fn is_empty(&self) -> bool {
        self.list.lock().is_empty()
    }

    /// Calls each listener with `arg()`; one that throws is skipped (napi clears its exception),
    /// so it can neither crash the process nor starve the listeners after it.
    fn call(&self, env: &Env, arg: impl Fn() -> A) {
        // Copy the list first: a listener may remove itself (or others) while we iterate.
        let listeners: Vec<_> = self.list.lock().iter().map(|(_, l)| l.clone()).collect();
        for listener in listeners {
            if let Ok(function) = listener.borrow_back(env) {
                let _ = function.call(arg());
            }
        }
    }
}
type Settle = Box<dyn FnOnce(Env) -> Result<Readiness> + Send>;
type Waiter = JsDeferred<Readiness, Settle>;

pub struct JsSubscribers {
    js_thread: Arc<JsThread>,
    shared: Arc<SharedSentinel>,
    next_id: AtomicU64,
    listeners: Listeners<TransitionEvent>,
    /// Called with each refresh's duration in seconds (the OpenTelemetry bridge's histogram).
    refresh_listeners: Listeners<f64>,
    waiters: Mutex<Vec<(u64, Waiter)>>,
    logger: Mutex<Option<JsLogger>>,
    /// Whether this sentinel (with no logger) has warned that `inspect` answered a bad value.
    warned_inspect_value: AtomicBool,
}

impl JsSubscribers {
    pub fn new(
        js_thread: Arc<JsThread>,
        shared: Arc<SharedSentinel>,
        logger: Option<JsLogger>,
    ) -> Arc<Self> {
        Arc::new(JsSubscribers {
            js_thread,
            shared,
            next_id: AtomicU64::new(1),
            listeners: Listeners::new(),
            refresh_listeners: Listeners::new(),
            waiters: Mutex::new(Vec::new()),
            logger: Mutex::new(logger),
            warned_inspect_value: AtomicBool::new(false),
        })
    }

    /// Drops the reference to the logger (the sentinel is being collected).
    pub fn release_logger(&self, env: &Env) {
        if let Some(logger) = self.logger.lock().take() {
            let _ = logger.release(env);
        }
    }

    fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Registers `listener`; the returned id removes it.
    pub fn add_listener(&self, listener: FunctionRef<TransitionEvent, Unknown<'static>>) -> u64 {
        let id = self.next_id();
        self.listeners.add(id, listener);
        id
    }

    pub fn remove_listener(&self, id: u64) {
        self.listeners.remove(id);
    }

    /// Registers `listener` for the duration of every refresh sent; the returned id removes it.
    pub fn add_refresh_listener(&self, listener: FunctionRef<f64, Unknown<'static>>) -> u64 {
        let id = self.next_id();
        self.refresh_listeners.add(id, listener);
        id
    }

    pub fn remove_refresh_listener(&self, id: u64) {
        self.refresh_listeners.remove(id);
    }

    /// Queues a call of every refresh listener with `took` in seconds, when there is any: on
    /// the JS thread's one queue, so it runs before the next `inspect` call does.
    fn tell_refreshed(self: &Arc<Self>, took: Duration) {
        if self.refresh_listeners.is_empty() {
            return;
        }
        let events = self.clone();
        self.js_thread.run(move |env| {
            events.refresh_listeners.call(&env, || took.as_secs_f64());
        });
    }

    /// Calls every listener on the JS thread, then hands the logger its line.
    fn dispatch(&self, env: &Env, from: Status, now: &rules::Readiness) {
        self.listeners.call(env, || TransitionEvent::new(from, now));
        if let Some(logger) = &*self.logger.lock() {
            let _ = logger.log(env, &logging::transition(from, now));
        }
    }

    /// `whenReady`: a promise settled now if the status admits, else when it first does, on
    /// `close()`, or after `timeout`.
    pub fn when_ready<'env>(
        self: &Arc<Self>,
        env: &'env Env,
        timeout: Option<Duration>,
    ) -> Result<Object<'env>> {
        let (deferred, promise) = env.create_deferred::<Readiness, Settle>()?;
        if self.shared.is_closed() {
            deferred.resolve(reject_with(
                errors::CLOSED,
                "whenReady: the sentinel is closed",
            ));
            return Ok(promise);
        }
        let id = self.next_id();
        {
            // Read under the waiters lock: `settle_waiters` re-reads under it too, so a change
            // between this read and the push cannot be missed.
            let mut waiters = self.waiters.lock();
            let readiness = self.shared.readiness();
            if readiness.status.admits() {
                deferred.resolve(resolve_with(readiness));
                return Ok(promise);
            }
            waiters.push((id, deferred));
        }
        if let Some(timeout) = timeout {
            let events = Arc::downgrade(self);
            runtime::after(timeout, move || {
                if let Some(events) = events.upgrade() {
                    events.settle_one(
                        id,
                        reject_with(
                            errors::TIMEOUT,
                            &format!("whenReady: not ready after {} ms", timeout.as_millis()),
                        ),
                    );
                }
            });
        }
        Ok(promise)
    }

    fn settle_one(&self, id: u64, settle: Settle) {
        let mut waiters = self.waiters.lock();
        if let Some(index) = waiters.iter().position(|(waiter_id, _)| *waiter_id == id) {
            waiters.swap_remove(index).1.resolve(settle);
        }
    }

    fn settle_waiters(&self) {
        let mut waiters = self.waiters.lock();
        if waiters.is_empty() {
            return;
        }
        if self.shared.is_closed() {
            for (_, waiter) in waiters.drain(..) {
                waiter.resolve(reject_with(
                    errors::CLOSED,
                    "whenReady: the sentinel was closed",
                ));
            }
            return;
        }
        let readiness = self.shared.readiness();
        if readiness.status.admits() {
            for (_, waiter) in waiters.drain(..) {
                waiter.resolve(resolve_with(readiness));
            }
        }
    }

    /// Hands `line` to the logger, if any, on the JS thread.
    fn log(self: &Arc<Self>, line: logging::Line) {
        let events = self.clone();
        self.js_thread.run(move |env| {
            if let Some(logger) = &*events.logger.lock() {
                let _ = logger.log(&env, &line);
            }
        });
    }

    /// Hands `line` to the logger, if any, now (on the JS thread, in a call from JavaScript).
    /// A call made from inside the logger itself (a logger that opens a hold) finds the lock
    /// taken: its line is dropped rather than waiting on this thread for ever.
    pub fn log_now(&self, env: &Env, line: &logging::Line) {
        if let Some(logger) = self.logger.try_lock().as_deref().and_then(Option::as_ref) {
            let _ = logger.log(env, line);
        }
    }

    /// The first time only: `process.emitWarning` that `inspect` answered a value of type `kind`.
    fn warn_inspect_value_once(&self, kind: JsType) {
        if self.warned_inspect_value.swap(true, Ordering::Relaxed) {
            return;
        }
        self.js_thread.run(move |env| {
            let message = logging::inspect_value_warning(kind);
            let _ = warning::emit(&env, &message, warning::INSPECT_VALUE);
        });
    }

    /// `close()`: pending `whenReady` promises reject at once.
    pub fn settle_on_close(&self) {
        self.settle_waiters();
    }
}

fn resolve_with(readiness: rules::Readiness) -> Settle {
    Box::new(move |_env| Ok(readiness.into()))
}

/// Rejects with a JS `Error` carrying `code` (napi-rs keeps the original object).
fn reject_with(code: &'static str, message: &str) -> Settle {
    let message = message.to_owned();
    Box::new(move |env| {
        let error = errors::create(env.raw(), Kind::Error, code, &message)?;
        // SAFETY: `env` is the env this settle runs on and `error` a value just made on it.
        let error = unsafe { Unknown::from_raw_unchecked(env.raw(), error) };
        Err(Error::from(error))
    })
}

/// The refresher's view: every status change goes to listeners and waiters.
pub struct JsObserver(pub Arc<JsSubscribers>);

impl SentinelObserver for JsObserver {
    fn transition(&self, from: Status, now: rules::Readiness) {
        let events = self.0.clone();
        self.0
            .js_thread
            .run(move |env| events.dispatch(&env, from, &now));
        self.0.settle_waiters();
    }

    /// Refresh listeners hear of every refresh sent. Without a logger, only an `inspect`
    /// answering a bad value is told (once, as a process
    /// warning): it is a mistake in the service's code that would otherwise never be seen.
    fn refreshed(&self, verdict: Verdict, took: Duration) {
        self.0.tell_refreshed(took);
        if self.0.logger.lock().is_none() {
            if let Verdict::BadValue(kind) = verdict {
                self.0.warn_inspect_value_once(kind);
            }
            return;
        }
        if let Some(line) = logging::refreshed(verdict, took) {
            self.0.log(line);
        }
    }

    fn task_failed(&self, task: Task) {
        self.0.log(logging::task_failed(task));
    }

    fn fleet_event(&self, event: &FleetEvent) {
        self.0.log(logging::fleet_event(event));
    }
}
