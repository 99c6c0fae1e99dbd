//! `BreakerCore`: the native half of the JavaScript `CircuitBreaker` (js/breaker.js). The state
//! machine is `rules::breaker`, shared through `breaker_registry`; this file translates.
//!
//! The two per-call functions, `acquire()` and `settle(token × 4 + outcome)`, are installed on
//! each instance as plain native functions (see `native_function`) and answer with a single
//! number, so a call through the breaker builds no JavaScript object. That number is a
//! **token**: `generation × 8 + flags` (≥ 0), where `flags` is the state code (0 closed, 1 open,
//! 2 half_open), plus 4 when transitions wait in `takeTransitions()`. A granted `acquire()`
//! answers the token of its permit; a refused one answers `-(retryAfterMs × 8 + flags) - 1`
//! (< 0). `settle` and the other operations answer the token after the change. While the state
//! is closed, the JavaScript half reuses the last token without asking (closed changes only
//! through these calls).

use std::ptr;
use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;

use super::errors::{self, Kind};
use super::native_function::{install_functions, Call, Method, NativeFunction};
use super::options::to_raw;
use crate::breaker_registry::{self, After, SharedBreaker};
use crate::clock::ToldClock;
use crate::config::parse_circuit_breaker;
use crate::numbers::{saturating_u32, saturating_u64, u64_as_f64};
use crate::options::RawValue;
use crate::rules::breaker::{Breaker, BreakerState, CallOutcome, CallResult, Permit};
use crate::rules::JsNumber;

/// The numbers `acquire`/`settle` speak. Defined here only: js/breaker.js reads them once at load
/// through `breakerProtocol()`, so the two halves cannot drift apart.
const FLAG_TRANSITIONS: u32 = 4;
/// `flags & STATE_MASK` is the state code, a `BreakerState`'s index.
const STATE_MASK: u32 = 3;
const TOKEN_SCALE: f64 = 8.0;
/// `settle`'s argument is `token × OUTCOME_SCALE + outcome`, the outcome a `CallOutcome`'s index.
#[allow(clippy::cast_precision_loss, reason = "four outcomes")]
const OUTCOME_SCALE: f64 = CallOutcome::COUNT as f64;

// Every state code fits under the mask, below `FLAG_TRANSITIONS`.
const _: () = assert!(BreakerState::COUNT <= STATE_MASK as usize + 1);

/// The token and outcome encoding, as js/breaker.js needs it (read once, at load).
#[napi(object)]
pub struct BreakerProtocol {
    /// A token is `generation × tokenScale + flags`.
    pub token_scale: f64,
    /// `flags & stateMask` is the state code: an index into `states`.
    pub state_mask: u32,
    /// Set in `flags` when transitions wait in `takeTransitions()`.
    pub flag_transitions: u32,
    pub states: Vec<String>,
    /// `settle`'s argument is `token × outcomeScale + outcome`.
    pub outcome_scale: f64,
    /// Outcome codes: an outcome's index here.
    pub outcomes: Vec<String>,
}

/// Internal: the encoding of js/breaker.js's calls into `BreakerCore`.
#[napi]
pub fn breaker_protocol() -> BreakerProtocol {
    BreakerProtocol {
        token_scale: TOKEN_SCALE,
        state_mask: STATE_MASK,
        flag_transitions: FLAG_TRANSITIONS,
        states: BreakerState::NAMES.map(str::to_owned).to_vec(),
        outcome_scale: OUTCOME_SCALE,
        outcomes: CallOutcome::NAMES.map(str::to_owned).to_vec(),
    }
}

/// What the operations answer besides their own result.
#[derive(Clone, Copy)]
struct Token {
    generation: u64,
    flags: u64,
}

impl From<After> for Token {
    fn from(after: After) -> Self {
        let pending = if after.transitions_pending {
            u64::from(FLAG_TRANSITIONS)
        } else {
            0
        };
        Token {
            generation: after.generation,
            flags: u64::from(after.state.code()) + pending,
        }
    }
}

impl Token {
    fn encoded(self) -> f64 {
        u64_as_f64(self.generation) * TOKEN_SCALE + u64_as_f64(self.flags)
    }
}

/// Runs `f` on the breaker now and answers its result with the token after it.
fn with_token<T>(
    breaker: &SharedBreaker,
    f: impl FnOnce(&mut Breaker, std::time::Duration) -> T,
) -> (T, Token) {
    let (result, after) = breaker.with(f);
    (result, after.into())
}

/// The native state of one `CircuitBreaker`; use `CircuitBreaker` from JavaScript instead.
#[napi]
pub struct BreakerCore {
    breaker: Arc<SharedBreaker>,
    /// With the `now` option: the clock js/breaker.js tells the time before each operation.
    told: Option<Arc<ToldClock>>,
    name: String,
    timeout_ms: f64,
    max_concurrent: u32,
}

#[napi]
impl BreakerCore {
    /// Validates the options (errors name the option, code `ERR_SPEND_SENTINEL_CONFIG`).
    #[napi(constructor, ts_args_type = "options?: object")]
    pub fn new(env: Env, this: This, options: Option<Unknown>) -> Result<Self> {
        let raw = match options {
            Some(options) => to_raw(&options)?,
            None => crate::options::RawValue::Undefined,
        };
        let config = parse_circuit_breaker(&raw).map_err(|e| {
            let message = format!("CircuitBreaker: {e}");
            errors::throw(env.raw(), Kind::Error, errors::CONFIG, &message)
        })?;
        let state = Breaker::new(config.settings, rand::random());
        let told = config.js_clock.then(|| Arc::new(ToldClock::default()));
        let breaker = Arc::new(match &told {
            Some(clock) => SharedBreaker::with_clock(state, clock.clone()),
            None => SharedBreaker::new(state),
        });
        if let Some(name) = &config.name {
            breaker_registry::register(name, &breaker);
        }
        install_functions(
            &env,
            &this,
            &breaker,
            &[
                NativeFunction::new::<Acquire>(c"acquire"),
                NativeFunction::new::<Settle>(c"settle"),
            ],
        )?;
        Ok(BreakerCore {
            breaker,
            told,
            name: config.name.unwrap_or_else(|| "breaker".to_owned()),
            timeout_ms: config.timeout_ms,
            max_concurrent: config.max_concurrent,
        })
    }

    #[napi(getter)]
    pub fn name(&self) -> String {
        self.name.clone()
    }

    /// Bound on each call, ms (0: none).
    #[napi(getter)]
    pub fn timeout_ms(&self) -> f64 {
        self.timeout_ms
    }

    /// Calls allowed in flight at once (0: no limit).
    #[napi(getter)]
    pub fn max_concurrent(&self) -> u32 {
        self.max_concurrent
    }

    /// With the `now` option, js/breaker.js tells what it read before each operation: `nowMs`,
    /// milliseconds from the option's own origin.
    #[napi(ts_args_type = "nowMs: number")]
    pub fn tell(&self, env: Env, now_ms: Unknown) -> Result<()> {
        let Some(clock) = &self.told else {
            return Ok(());
        };
        let reading = to_raw(&now_ms)?;
        let at = match reading {
            RawValue::Number(ms) => Duration::try_from_secs_f64(ms / 1000.0).ok(),
            _ => None,
        };
        if let Some(at) = at {
            clock.tell(at);
            return Ok(());
        }
        let got = match reading {
            RawValue::Number(ms) => JsNumber(ms).to_string(),
            other => other.type_name().to_owned(),
        };
        let message = format!(
            "circuit \"{}\": now: must return a finite number of milliseconds ≥ 0 (got {got})",
            self.name
        );
        Err(errors::throw(
            env.raw(),
            Kind::TypeError,
            errors::CONFIG,
            &message,
        ))
    }

    /// The token (see the module docs) after applying what time alone changes.
    #[napi]
    pub fn token(&self) -> f64 {
        with_token(&self.breaker, |_, _| ()).1.encoded()
    }

    #[napi]
    pub fn force_open(&self) -> f64 {
        with_token(&self.breaker, Breaker::force_open).1.encoded()
    }

    #[napi]
    pub fn close(&self) -> f64 {
        with_token(&self.breaker, Breaker::close).1.encoded()
    }

    #[napi]
    pub fn reset(&self) -> f64 {
        with_token(&self.breaker, Breaker::reset).1.encoded()
    }

    /// Committed transitions since the last call, as `[from, to, from, to, ...]` state codes.
    #[napi]
    pub fn take_transitions(&self) -> Vec<u32> {
        let transitions = self.breaker.take_transitions();
        transitions
            .iter()
            .flat_map(|t| [t.from, t.to].map(|s| u32::from(s.code())))
            .collect()
    }

    /// Ms until the breaker half-opens by itself; -1 when it will not (closed, half-open, or
    /// opened by hand).
    #[napi]
    pub fn half_open_in_ms(&self) -> f64 {
        let left = self.breaker.with(|b, now| b.half_open_in(now)).0;
        left.map_or(-1.0, |d| (d.as_secs_f64() * 1000.0).ceil())
    }

    /// The counts under the same names as the metric's `result` label (`failures` without
    /// timeouts, `rejected` for refusals), plus the rest. `bulkheadRejected` is added by
    /// js/breaker.js.
    #[napi(ts_return_type = "CircuitBreakerStats")]
    pub fn stats(&self) -> BreakerStatsObject {
        let (stats, consecutive, totals, half_open_in) = self
            .breaker
            .with(|b, now| {
                (
                    b.stats(),
                    b.consecutive_failures(),
                    b.rolling_totals(now),
                    b.half_open_in(now),
                )
            })
            .0;
        BreakerStatsObject {
            successes: u64_as_f64(CallResult::Success.count(&stats)),
            failures: u64_as_f64(CallResult::Failure.count(&stats)),
            timeouts: u64_as_f64(CallResult::Timeout.count(&stats)),
            ignored: u64_as_f64(stats.ignored),
            rejected: u64_as_f64(CallResult::Rejected.count(&stats)),
            stale: u64_as_f64(stats.stale),
            trial_timeouts: u64_as_f64(stats.trial_timeouts),
            opened: u64_as_f64(stats.opened),
            consecutive_failures: consecutive,
            window_calls: u64_as_f64(totals.calls()),
            window_failures: u64_as_f64(totals.failures),
            retry_after_ms: half_open_in.map(|d| (d.as_secs_f64() * 1000.0).ceil()),
        }
    }
}

/// Counts since the breaker was made (or `reset()`), and the rolling window now.
#[napi(object, js_name = "CircuitBreakerStats")]
pub struct BreakerStatsObject {
    pub successes: f64,
    /// Failures, timeouts excluded (metric `result="failure"`).
    pub failures: f64,
    /// Calls that ran out of `timeoutMs` (metric `result="timeout"`); they count as failures
    /// for the breaker's rules.
    pub timeouts: f64,
    /// Errors `isFailure` said do not count.
    pub ignored: f64,
    /// Calls refused while open or while the half-open trial was out (metric `result="rejected"`).
    pub rejected: f64,
    /// Results of calls admitted by an older generation, which changed nothing.
    pub stale: f64,
    /// Half-open trials that did not settle within `trialTimeoutMs`.
    pub trial_timeouts: f64,
    /// Times the breaker opened.
    pub opened: f64,
    pub consecutive_failures: u32,
    pub window_calls: f64,
    pub window_failures: f64,
    /// Ms until the breaker half-opens by itself; absent unless it is open with a timer.
    pub retry_after_ms: Option<f64>,
}

struct Acquire;

impl Method for Acquire {
    type State = SharedBreaker;
    const ARGS: usize = 0;

    fn call(call: &Call, breaker: &SharedBreaker) -> sys::napi_value {
        let (answer, token) = with_token(breaker, |b, now| b.acquire(now));
        let encoded = match answer {
            Ok(_permit) => token.encoded(),
            Err(retry_after) => {
                let retry_ms = retry_after.as_secs_f64() * 1000.0;
                -(retry_ms.ceil() * TOKEN_SCALE + u64_as_f64(token.flags)) - 1.0
            }
        };
        call.number(encoded)
    }
}

struct Settle;

impl Method for Settle {
    type State = SharedBreaker;
    const ARGS: usize = 1;

    fn call(call: &Call, breaker: &SharedBreaker) -> sys::napi_value {
        let argument = call.number_argument(0).unwrap_or(-1.0);
        if argument.is_nan() || argument < 0.0 {
            errors::throw(
                call.env(),
                Kind::TypeError,
                errors::CONFIG,
                "settle(token × 4 + outcome): token must come from acquire(), outcome be 0..3",
            );
            return ptr::null_mut();
        }
        let outcome = CallOutcome::ALL[saturating_u32(argument % OUTCOME_SCALE) as usize];
        let permit = Permit {
            generation: saturating_u64(argument / (OUTCOME_SCALE * TOKEN_SCALE)),
        };
        let ((), token) = with_token(breaker, |b, now| b.settle(permit, outcome, now));
        call.number(token.encoded())
    }
}
