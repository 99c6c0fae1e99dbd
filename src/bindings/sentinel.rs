//! `new Sentinel(options)`: the JavaScript class. It parses arguments, hands off to the shell
//! (`SharedSentinel`, `refresher`) and translates results; no rule lives here.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::errors::{self, Kind};
use super::events::{JsObserver, JsSubscribers};
use super::hot_path;
use super::logger::JsLogger;
use super::options::{read_options, to_raw, CodeOptions};
use super::teardown::close_on_teardown;
use super::types::{FleetReadout, MetricFamily, ReadinessReason, ReadinessStatus, TransitionEvent};
use super::units_argument;
use crate::authority::http::HttpAuthority;
use crate::authority::js::JsAuthority;
use crate::authority::Authority;
use crate::breaker_registry;
use crate::config::{
    parse_metrics_options, parse_options, parse_when_ready, AuthorityConfig, Config,
};
use crate::fleet::{self, Fleet};
use crate::js_thread::JsThread;
use crate::logging;
use crate::metrics::render_as;
use crate::options::{error, ConfigError};
use crate::refresher::{self, Draws, SentinelObserver};
use crate::rules::SentinelState;
use crate::shared_sentinel::SharedSentinel;

/// Tells a usage-billed service whether it may take the next billable request: refreshes the
/// evidence that its credential is valid and its tier includes the meter, in the background,
/// and answers from memory.
#[napi(custom_finalize)]
pub struct Sentinel {
    shared: Arc<SharedSentinel>,
    subscribers: Arc<JsSubscribers>,
    /// The fleet budget's lease task, with `budget.fleet`.
    fleet: Option<Arc<Fleet>>,
}

#[napi]
impl Sentinel {
    /// Validates every option (a bad one throws an `Error` with `code`
    /// `ERR_SPEND_SENTINEL_CONFIG` naming the option) and starts refreshing at once.
    #[napi(
        constructor,
        ts_args_type = "options: import('./js/option-types').SentinelOptions"
    )]
    pub fn new(env: Env, this: This, options: Unknown) -> Result<Self> {
        // `Sentinel(options)` without `new` would install the methods on the global object and
        // start a loop nothing could close; `Reflect.construct(Sentinel, [o], Object)` would
        // make an object without the prototype's `close`.
        if !Sentinel::instance_of(&env, &*this)? {
            return Err(errors::throw(
                env.raw(),
                Kind::TypeError,
                errors::CONSTRUCT,
                "Sentinel: class constructor must be called with `new` (new Sentinel(options))",
            ));
        }
        let (raw, code) = read_options(&options)?;
        let config = parse_options(&raw, &|name| std::env::var(name).ok())
            .map_err(|e| config_error(&env, Kind::Error, &e))?;
        let sentinel = Sentinel::start(&env, config, &code, &|e| e)?;
        sentinel.install_hot_path(&env, &this)?;
        Ok(sentinel)
    }
}

impl Sentinel {
    /// The sentinel `config` describes, refreshing: what `new Sentinel` and `Sentinel.fromEnv`
    /// share. `code` holds the options only code gives (`logger`, `authority.inspect`) from the
    /// read `config` was parsed from; `name` rewrites the path of a configuration error found here.
    pub(super) fn start(
        env: &Env,
        config: Config,
        code: &CodeOptions,
        name: &dyn Fn(ConfigError) -> ConfigError,
    ) -> Result<Self> {
        // Read before the budget moves into the state; logged once the sentinel is made.
        let busy_cadence = config
            .default_pauses
            .then(|| logging::busy_cadence(&config.cadence, &config.budget))
            .flatten();
        let js_thread = Arc::new(JsThread::new(env)?);
        let shared = SharedSentinel::new(SentinelState::new(config.budget), config.cadence);
        let authority = match config.authority {
            AuthorityConfig::Http(http) => {
                Authority::Http(HttpAuthority::new(*http).map_err(|_| {
                    let rule = "the certificates cannot be used by the TLS client";
                    config_error(env, Kind::Error, &name(error("authority.caPem", rule)))
                })?)
            }
            AuthorityConfig::Inspect => {
                let inspect = inspect_function(code.inspect)?;
                Authority::Js(JsAuthority::new(
                    inspect,
                    js_thread.clone(),
                    shared.closed_flag_handle(),
                ))
            }
        };
        let logger = JsLogger::from_option(env, code.logger)?;
        let subscribers = JsSubscribers::new(js_thread, shared.clone(), logger);
        close_on_teardown(env, &shared)?;
        let observer: Arc<dyn SentinelObserver> = Arc::new(JsObserver(subscribers.clone()));
        let fleet = match &config.fleet {
            None => None,
            Some(fleet) => {
                let client = fleet::connection::open_client(fleet)
                    .map_err(|e| config_error(env, Kind::Error, &name(e)))?;
                Some(fleet::start(
                    shared.clone(),
                    fleet.shape,
                    &fleet.name,
                    client,
                    observer.clone(),
                ))
            }
        };
        if let Some(line) = &busy_cadence {
            subscribers.log_now(env, line);
        }
        refresher::start(
            shared.clone(),
            authority,
            observer,
            config.breaker,
            Draws::from_entropy(),
        );
        Ok(Sentinel {
            shared,
            subscribers,
            fleet,
        })
    }

    /// Installs the per-instance hot-path functions on `this` (see `hot_path`); a sentinel that
    /// cannot be completed stops at once.
    pub(super) fn install_hot_path(&self, env: &Env, this: &Object) -> Result<()> {
        hot_path::install(env, this, &self.shared).inspect_err(|_| self.shared.close())
    }
}

#[napi]
impl Sentinel {
    /// The cheap readiness read for hot paths: the status alone.
    /// (Each instance carries a faster own copy of this method.)
    #[napi]
    pub fn status(&self) -> ReadinessStatus {
        self.shared.readiness().status.into()
    }

    /// The cheapest readiness read: `true` when a readiness probe would answer 200 (status
    /// `ready` or `degraded`). (Each instance carries a faster own copy of this method.)
    #[napi]
    pub fn is_serving(&self) -> bool {
        self.shared.readiness().status.admits()
    }

    /// `true` for good once the first refresh has finished, with any outcome (a timeout or an
    /// unreachable authority included); `false` before. What `/startup` answers: the sentinel
    /// has started even while the authority is down. Not for hot paths (it takes the lock).
    #[napi]
    pub fn has_refreshed(&self) -> bool {
        self.shared.has_refreshed()
    }

    /// Call before recording `units` (default 1) of usage: `true` (and the units are counted as
    /// unverified exposure) when the node may take them, `false` otherwise (nothing changes).
    /// Throws a `TypeError` (`ERR_SPEND_SENTINEL_UNITS`) unless `units` is a finite number ≥ 0.
    /// (Each instance carries a faster own copy of this method.)
    // `Unknown`, not `Option<…>`: napi-rs reads `null` as "not given", which the units rule
    // refuses; a missing argument arrives as `undefined`, which it reads as 1.
    #[napi(ts_args_type = "units?: number")]
    pub fn admit(&self, env: Env, units: Unknown) -> Result<bool> {
        // SAFETY: `env` and `units` belong to this call, in progress on this thread.
        let units = unsafe { units_argument::units_argument(env.raw(), Some(units.raw())) }?;
        Ok(self.shared.admit(units))
    }

    /// Records `units` of usage already spent without an admission (a batch that ran), at once
    /// and unconditionally: it never refuses, counts as overage (may take the exposure past the
    /// node budget, which then refuses with `budget_exhausted` until evidence clears it), and
    /// records after `close()` too. Throws a `TypeError` (`ERR_SPEND_SENTINEL_UNITS`) unless
    /// `units` is a finite number ≥ 0 (required). (Each instance carries a faster own copy.)
    #[napi(ts_args_type = "units: number")]
    pub fn charge(&self, env: Env, units: Unknown) -> Result<()> {
        // SAFETY: as in `admit`.
        let units = unsafe {
            units_argument::ruled_argument(env.raw(), Some(units.raw()), |given| {
                crate::rules::ledger::measured_units("units", given)
            })
        }?;
        self.shared.charge(units);
        Ok(())
    }

    /// Why `admit(units)` would refuse now, or `null` when it would admit; for the body of a
    /// refusal. Unlike `readiness().reason` it looks through draining, as admission does, and
    /// says `budget_exhausted` when only these units would not fit. Reads, changes nothing.
    #[napi(ts_args_type = "units?: number")]
    pub fn refusal_reason(&self, env: Env, units: Unknown) -> Result<Option<ReadinessReason>> {
        // SAFETY: as in `admit`.
        let units = unsafe { units_argument::units_argument(env.raw(), Some(units.raw())) }?;
        Ok(self.shared.refusal_reason(units).map(Into::into))
    }

    /// Prometheus text exposition (format 0.0.4; OpenMetrics 1.0 with
    /// `{ format: 'openmetrics' }`) of this sentinel, and of every live `CircuitBreaker` created
    /// with a `name`.
    #[napi(ts_args_type = "options?: import('./js/option-types').MetricsOptions")]
    pub fn metrics(&self, env: &Env, options: Unknown) -> Result<String> {
        let format = parse_metrics_options(&to_raw(&options)?)
            .map_err(|e| config_error(env, Kind::TypeError, &e))?;
        Ok(render_as(&self.families(), format))
    }

    /// The same series as `metrics()`, as data (for the prom-client bridge).
    #[napi(ts_return_type = "MetricFamily[]")]
    pub fn metric_families(&self) -> Vec<MetricFamily> {
        self.families()
            .into_iter()
            .map(MetricFamily::from)
            .collect()
    }

    /// `null` without `budget.fleet`; else the fleet budget as this node sees it now.
    #[napi(ts_return_type = "FleetReadout | null")]
    pub fn fleet(&self) -> Option<FleetReadout> {
        let fleet = self.fleet.as_ref()?;
        Some(fleet.status(&self.shared).into())
    }

    /// This node's exposure: the units it admitted after the current evidence time (its ledger).
    /// Not b, the fleet-wide ceiling that the `budget.unverifiedUnits` option sets.
    #[napi(getter)]
    pub fn exposure_units(&self) -> f64 {
        self.shared.with_state(|state| state.exposure_units())
    }

    /// The part of `exposureUnits` that open reservations hold (`reserve`, `extend`): it leaves
    /// only when they settle. One that grows and never falls is a reservation never settled.
    #[napi(getter)]
    pub fn reserved_units(&self) -> f64 {
        self.shared.with_state(|state| state.reserved_units())
    }

    /// The same read-out as `exposureUnits`, under its older name: the units admitted on
    /// unverified evidence. (The option `budget.unverifiedUnits`, b, is not deprecated.)
    ///
    /// @deprecated Use `exposureUnits`, the name the contract gives this read-out now.
    #[napi(getter)]
    pub fn unverified_units(&self) -> f64 {
        self.exposure_units()
    }

    /// The node budget: the most this node admits on unverified evidence. b × share for a fixed
    /// budget; with `budget.fleet`, the floor + the current grant, re-read at every call (it
    /// changes as the lease is renewed or lapses).
    #[napi(getter)]
    pub fn node_budget_units(&self) -> f64 {
        self.shared
            .with_state(|state| state.node_budget_units(self.shared.now()))
    }

    /// w: how long evidence stays usable, seconds.
    #[napi(getter)]
    pub fn stale_window_seconds(&self) -> f64 {
        self.shared
            .with_state(|state| state.stale_window(self.shared.now()).as_secs_f64())
    }

    /// Resolves with the readiness as soon as the status is `ready` or `degraded`. Rejects with
    /// `ERR_SPEND_SENTINEL_TIMEOUT` after `timeoutMs` (default: no timeout; at most
    /// 2147483647), or with `ERR_SPEND_SENTINEL_CLOSED` when the sentinel closes first. While
    /// pending it keeps the process alive, like any awaited operation. A bad argument throws a
    /// `TypeError` (`ERR_SPEND_SENTINEL_CONFIG`) naming it.
    #[napi(
        ts_args_type = "options?: import('./js/option-types').WhenReadyOptions",
        ts_return_type = "Promise<Readiness>"
    )]
    pub fn when_ready<'env>(&self, env: &'env Env, options: Unknown) -> Result<Object<'env>> {
        // Not `Option<…>`: napi-rs would read `null` as "no options", which the constructor
        // refuses; both take `undefined` alone for "nothing given".
        let timeout = parse_when_ready(&to_raw(&options)?)
            .map_err(|e| config_error(env, Kind::TypeError, &e))?;
        self.subscribers.when_ready(env, timeout)
    }

    /// Holds readiness at `not_ready` / `held` (the service's own signal: a cache warming, a
    /// dependency it cannot serve without) until the returned function is called; admission is
    /// not affected. `name` (1–64 of `[A-Za-z0-9_.:-]`) appears in log lines and the
    /// `spend_sentinel_holds` metric, never in a probe body. Holds may share a name (each release
    /// ends its own); releasing twice does nothing. A bad name throws a `TypeError`
    /// (`ERR_SPEND_SENTINEL_CONFIG`).
    #[napi(ts_args_type = "name: string", ts_return_type = "() => void")]
    pub fn hold<'env>(&self, env: &'env Env, name: Unknown) -> Result<Function<'env, (), ()>> {
        super::hold::hold(env, &self.shared, &self.subscribers, &name)
    }

    /// Readiness becomes `not_ready`/`shutting_down` so the router stops sending traffic;
    /// refreshes and admission go on for requests still in flight.
    #[napi]
    pub fn drain(&self) {
        self.shared.drain();
    }

    /// Stops refreshing (no authority call starts afterwards); readiness is `shutting_down` and
    /// `admit` returns `false`. Idempotent.
    /// With `budget.fleet` the promise resolves once the call that returns the unused grant to
    /// Redis has answered, failed or timed out (1 s; 1.2 s at the very most); without a fleet, or
    /// before this node's first renewal was sent (nothing to return), at once. A renewal still in
    /// flight is abandoned: the release carries a later sequence number, so it cannot be undone.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> Result<Object<'env>> {
        self.shared.close();
        self.subscribers.settle_on_close();
        let (deferred, promise) = env.create_deferred::<(), Done>()?;
        match &self.fleet {
            None => deferred.resolve(done()),
            Some(fleet) => fleet.on_released(move || deferred.resolve(done())),
        }
        Ok(promise)
    }

    /// Calls `listener` on the JavaScript thread whenever the status changes, within 50 ms.
    /// A listener that throws is ignored. Returns a function that removes the listener.
    #[napi(
        ts_args_type = "listener: (event: TransitionEvent) => void",
        ts_return_type = "() => void"
    )]
    pub fn on_transition<'env>(
        &self,
        env: &'env Env,
        listener: Unknown,
    ) -> Result<Function<'env, (), ()>> {
        if listener.get_type()? != ValueType::Function {
            let error = ConfigError {
                path: "onTransition: listener".to_owned(),
                rule: format!(
                    "must be a function (got {})",
                    to_raw(&listener)?.type_name()
                ),
            };
            return Err(config_error(env, Kind::TypeError, &error));
        }
        // SAFETY: `listener` is a function (checked above).
        let listener: Function<TransitionEvent, Unknown<'static>> = unsafe { listener.cast()? };
        let id = self.subscribers.add_listener(listener.create_ref()?);
        let subscribers = Arc::downgrade(&self.subscribers);
        env.create_function_from_closure("removeTransitionListener", move |_| {
            if let Some(subscribers) = subscribers.upgrade() {
                subscribers.remove_listener(id);
            }
            Ok(())
        })
    }
}

impl ObjectFinalize for Sentinel {
    /// Garbage-collected without `close()`: stop refreshing all the same.
    fn finalize(self, env: Env) -> Result<()> {
        self.shared.close();
        self.subscribers.release_logger(&env);
        Ok(())
    }
}

type Done = Box<dyn FnOnce(Env) -> Result<()> + Send>;

fn done() -> Done {
    Box::new(|_| Ok(()))
}

impl Sentinel {
    /// The shared state, for the functions made for a sentinel (`admission`, `reservation`).
    pub(super) fn shared(&self) -> &Arc<SharedSentinel> {
        &self.shared
    }

    fn families(&self) -> Vec<crate::metrics::Family> {
        families_of(&self.shared, self.fleet.as_ref())
    }

    /// What the OpenTelemetry bridge reads of this sentinel (see `metrics_feed`).
    pub(super) fn feed_parts(
        &self,
    ) -> (Arc<SharedSentinel>, Option<Arc<Fleet>>, &Arc<JsSubscribers>) {
        (self.shared.clone(), self.fleet.clone(), &self.subscribers)
    }
}

/// The families of a sentinel (with its fleet's) and of every named breaker: `metrics()`.
pub(super) fn families_of(
    shared: &SharedSentinel,
    fleet: Option<&Arc<Fleet>>,
) -> Vec<crate::metrics::Family> {
    let mut families = shared.metrics.families(&shared.gauges());
    if let Some(fleet) = fleet {
        families.extend(fleet::metrics::families(&fleet.status(shared)));
    }
    families.extend(breaker_registry::families());
    families
}

/// Throws a configuration error (`ERR_SPEND_SENTINEL_CONFIG`) naming the option or argument.
pub(super) fn config_error(env: &Env, kind: Kind, error: &ConfigError) -> Error {
    errors::throw(env.raw(), kind, errors::CONFIG, &error.to_string())
}

/// `authority.inspect` as the config's read saw it: a function (`parse_options` checked it).
fn inspect_function(inspect: Option<Unknown>) -> Result<FunctionRef<(), Unknown<'static>>> {
    let inspect = inspect.ok_or_else(|| Error::from_reason("authority.inspect was not read"))?;
    // SAFETY: `inspect` is a function: the config accepted this very value as one.
    let inspect: Function<(), Unknown<'static>> = unsafe { inspect.cast()? };
    inspect.create_ref()
}
