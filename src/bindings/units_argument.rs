//! The units argument of the native calls (`admit`, `charge`, the admission guard's call,
//! reservations): what JavaScript passed, judged by the ledger's units rule; a refused value
//! throws the rule's message as a `TypeError` and changes nothing.

use std::ptr;

use napi::bindgen_prelude::*;
use napi::sys;

use super::errors::{self, Kind};
use super::native_function::Call;
use super::options::type_name;
use crate::rules::ledger::{self, UnitsArgument};

/// `admit(units = 1)` (docs/api.md): the units rule is the ledger's; anything it refuses throws
/// its message as a `TypeError` (pending on `env`) and changes nothing.
///
/// # Safety
///
/// `env` is the env of a call in progress on this thread and `units` a value of that call.
pub(super) unsafe fn units_argument(
    env: sys::napi_env,
    units: Option<sys::napi_value>,
) -> Result<f64> {
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

/// Reads the call's argument `index` (named `argument` in the error) by the recording calls'
/// units rule and hands it to `record`; a bad one throws and records nothing. Answers `undefined`.
pub(super) fn record_measured(
    call: &Call,
    index: usize,
    argument: &'static str,
    record: impl FnOnce(f64),
) -> sys::napi_value {
    // SAFETY: `call` is a call in progress, so its env is live and its argument is its own.
    let units = unsafe {
        ruled_argument(call.env(), call.argument(index), |given| {
            ledger::measured_units(argument, given)
        })
    };
    if let Ok(units) = units {
        record(units);
    }
    std::ptr::null_mut()
}
