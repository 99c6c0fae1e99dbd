//! The calls a service makes per request, `admit(units)`, `status()` and `isServing()`, as plain
//! native functions installed on each instance; and the admission guard's one call per request
//! (`admissionCodeFunction`, internal to js/admission.js).
//!
//! Why not ordinary `#[napi]` methods: a napi-rs class method spends ~0.4 µs checking the class
//! identity of `this`, more than the whole decision. These functions carry their sentinel in the
//! function's own data pointer instead (see `native_function`), so a call costs a few native
//! no-ops (`bench/hot-path.mjs`). The prototype keeps `#[napi]` methods of the same names (for
//! typings and `Sentinel.prototype.admit.call(...)`); both read their argument with
//! [`units_argument`] and ask `SharedSentinel`.

use std::ptr;
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::sys;

use napi_derive::napi;

use super::errors::{self, Kind};
use super::native_function::{create_function, install_functions, Call, Method, NativeFunction};
use super::options::type_name;
use super::sentinel::Sentinel;
use super::types::ReadinessReason;
use crate::numbers::saturating_u32;
use crate::rules::ledger::{self, UnitsArgument};
use crate::rules::{Reason, Refusal};
use crate::shared_sentinel::SharedSentinel;

/// `admit(units = 1)` (docs/api.md): the units rule is the ledger's; anything it refuses throws
/// its message as a `TypeError` (pending on `env`) and changes nothing.
///
/// # Safety
///
/// `env` is the env of a call in progress on this thread and `units` a value of that call.
pub unsafe fn units_argument(env: sys::napi_env, units: Option<sys::napi_value>) -> Result<f64> {
    // SAFETY: the caller's contract, passed on.
    unsafe { ruled_argument(env, units, ledger::units) }
}

/// A units argument judged by `rule` (the admitting calls' [`ledger::units`], or a recording
/// call's [`ledger::measured_units`]); refused, it throws the rule's message as a `TypeError`
/// with `ERR_SPEND_SENTINEL_UNITS`.
///
/// # Safety
///
/// As [`units_argument`].
pub(super) unsafe fn ruled_argument(
    env: sys::napi_env,
    value: Option<sys::napi_value>,
    rule: impl FnOnce(UnitsArgument) -> std::result::Result<f64, ledger::UnitsError>,
) -> Result<f64> {
    // SAFETY: the caller's contract, passed on.
    let given = value.map_or(UnitsArgument::Absent, |value| unsafe {
        read_units(env, value)
    });
    rule(given).map_err(|e| errors::throw(env, Kind::TypeError, errors::UNITS, &e.to_string()))
}

/// What JavaScript passed, for the rule to judge.
///
/// # Safety
///
/// As [`units_argument`].
unsafe fn read_units(env: sys::napi_env, value: sys::napi_value) -> UnitsArgument {
    let mut units = 0.0;
    // SAFETY: `env` and `value` are live for this call (the caller's contract); `units` is a
    // local the call writes once.
    if unsafe { sys::napi_get_value_double(env, value, &mut units) } == sys::Status::napi_ok {
        return UnitsArgument::Number(units);
    }
    let mut kind = sys::ValueType::napi_undefined;
    // SAFETY: as above; `kind` is a local the call writes once.
    if unsafe { sys::napi_typeof(env, value, &mut kind) } != sys::Status::napi_ok {
        // Unknown is refused: a failed read must never count as the default of 1 unit.
        return UnitsArgument::Other("an unreadable value");
    }
    match ValueType::from(kind) {
        ValueType::Undefined => UnitsArgument::Absent,
        other => UnitsArgument::Other(type_name(other)),
    }
}

/// `admit(units = 1)`: `true` when the units are admitted (see `SharedSentinel::admit`).
struct Admit;

impl Method for Admit {
    type State = SharedSentinel;
    const ARGS: usize = 1;

    fn call(call: &Call, shared: &SharedSentinel) -> sys::napi_value {
        with_units(call, |units| call.boolean(shared.admit(units)))
    }
}

/// `answer(units)` for the call's `units` argument read by [`units_argument`]; when the rule
/// refuses it, `undefined` with its `TypeError` pending (nothing admitted).
pub(super) fn with_units(
    call: &Call,
    answer: impl FnOnce(f64) -> sys::napi_value,
) -> sys::napi_value {
    // SAFETY: `call` is a call in progress, so its env is live and its argument is its own.
    match unsafe { units_argument(call.env(), call.argument(0)) } {
        Ok(units) => answer(units),
        Err(_) => ptr::null_mut(),
    }
}

/// The admission guard's call (js/admission.js): admits like `admit(units)` and answers, in one
/// crossing, 0 when admitted or the refusal's [`admission_code`].
struct AdmitOrRefusal;

impl Method for AdmitOrRefusal {
    type State = SharedSentinel;
    const ARGS: usize = 1;

    fn call(call: &Call, shared: &SharedSentinel) -> sys::napi_value {
        with_units(call, |units| {
            call.uint32(admission_code(shared.try_admit(units)))
        })
    }
}

/// A refusal's code has [`REASON_SLOTS`] values per second of window.
#[allow(clippy::cast_possible_truncation, reason = "eleven reasons fit a u32")]
const REASON_SLOTS: u32 = Reason::COUNT as u32 + 1;

/// 0 when admitted; a refusal is `1 + reason.index() + REASON_SLOTS × ⌈w⌉`, with w the stale
/// window in seconds (≤ 7 days, so the code stays a small integer). js/admission.js reads it
/// back through [`admission_refusal_reasons`], whose length + 1 is `REASON_SLOTS`: the reason
/// is `reasons[code % slots - 1]`, ⌈w⌉ is `⌊code / slots⌋` (for the default `Retry-After`,
/// ⌈w / 2⌉ = ⌈⌈w⌉ / 2⌉).
pub(super) fn admission_code(admission: std::result::Result<(), Refusal>) -> u32 {
    match admission {
        Ok(()) => 0,
        Err(Refusal {
            reason,
            stale_window,
        }) => {
            let window_seconds = saturating_u32(stale_window.as_secs_f64().ceil());
            let reason_code = u32::from(reason.code()) + 1;
            window_seconds
                .saturating_mul(REASON_SLOTS)
                .saturating_add(reason_code)
        }
    }
}

/// The reasons of the admission codes: a refusal's code modulo `reasons.length + 1` is
/// `1 + i` for `reasons[i]`. Read once by js/admission.js; internal, as `admissionCodeFunction`.
#[napi]
pub fn admission_refusal_reasons() -> Vec<ReadinessReason> {
    Reason::ALL
        .iter()
        .copied()
        .map(ReadinessReason::from)
        .collect()
}

/// `(units?: number) => number`: the admission guard's call for `sentinel`, answering 0 when
/// admitted, else a refusal's code (`admission_code` in src/bindings/hot_path.rs). Made once per
/// guard (its class check is paid here, not per request). Internal to js/admission.js.
#[napi(ts_return_type = "(units?: number) => number")]
pub fn admission_code_function<'env>(env: &'env Env, sentinel: &Sentinel) -> Result<Unknown<'env>> {
    let function = NativeFunction::new::<AdmitOrRefusal>(c"admitOrRefusal");
    let value = create_function(env, sentinel.shared(), &function)?;
    // SAFETY: `value` is a function just made on this call's env.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), value) })
}

/// The cheap readiness read: the status string alone, no object built.
struct StatusOf;

impl Method for StatusOf {
    type State = SharedSentinel;
    const ARGS: usize = 0;

    fn call(call: &Call, shared: &SharedSentinel) -> sys::napi_value {
        call.latin1(shared.readiness().status.as_str())
    }
}

/// The cheapest readiness read: would a readiness probe answer 200 (`ready` or `degraded`)?
struct IsServing;

impl Method for IsServing {
    type State = SharedSentinel;
    const ARGS: usize = 0;

    fn call(call: &Call, shared: &SharedSentinel) -> sys::napi_value {
        call.boolean(shared.readiness().status.admits())
    }
}

/// Defines `admit`, `status`, `isServing` and `charge` on `this`.
pub fn install(env: &Env, this: &Object<'_>, shared: &Arc<SharedSentinel>) -> Result<()> {
    install_functions(
        env,
        this,
        shared,
        &[
            NativeFunction::new::<Admit>(c"admit"),
            NativeFunction::new::<StatusOf>(c"status"),
            NativeFunction::new::<IsServing>(c"isServing"),
            NativeFunction::new::<super::reservation::Charge>(c"charge"),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// What js/admission.js does with a code.
    fn decode(code: u32) -> Option<(&'static str, u32)> {
        (code != 0).then(|| {
            let index = usize::try_from(code % REASON_SLOTS - 1).unwrap();
            let reason = Reason::ALL[index];
            (reason.as_str(), code / REASON_SLOTS)
        })
    }

    #[test]
    fn admission_codes_say_admitted_or_the_reason_and_the_window() {
        assert_eq!(decode(admission_code(Ok(()))), None);
        for reason in Reason::ALL {
            for (window, seconds) in [
                (Duration::ZERO, 0),
                (Duration::from_millis(500), 1),
                (Duration::from_secs(5), 5),
                (Duration::from_secs_f64(4.2), 5),
                (Duration::from_secs(7 * 24 * 3600), 604_800),
            ] {
                let code = admission_code(Err(Refusal {
                    reason,
                    stale_window: window,
                }));
                assert_eq!(decode(code), Some((reason.as_str(), seconds)), "{code}");
                assert!(code < 1 << 30, "a small integer");
            }
        }
    }
}
