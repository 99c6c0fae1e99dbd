//! The calls a service makes per request, `admit(units)`, `status()` and `isServing()`, as plain
//! native functions installed on each instance.
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

use super::errors::{self, Kind};
use super::native_function::{install_functions, Call, Method, NativeFunction};
use super::options::type_name;
use crate::rules::ledger::{self, UnitsArgument};
use crate::shared_sentinel::SharedSentinel;

/// `admit(units = 1)` (docs/api.md): the units rule is the ledger's; anything it refuses throws
/// its message as a `TypeError` (pending on `env`) and changes nothing.
///
/// # Safety
///
/// `env` is the env of a call in progress on this thread and `units` a value of that call.
pub unsafe fn units_argument(env: sys::napi_env, units: Option<sys::napi_value>) -> Result<f64> {
    // SAFETY: the caller's contract, passed on.
    let given = units.map_or(UnitsArgument::Absent, |value| unsafe {
        read_units(env, value)
    });
    ledger::units(given)
        .map_err(|e| errors::throw(env, Kind::TypeError, errors::UNITS, &e.to_string()))
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
        // SAFETY: `call` is a call in progress, so its env is live and its argument is its own.
        match unsafe { units_argument(call.env(), call.argument(0)) } {
            Ok(units) => call.boolean(shared.admit(units)),
            Err(_) => ptr::null_mut(),
        }
    }
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

/// Defines `admit`, `status` and `isServing` on `this`.
pub fn install(env: &Env, this: &Object<'_>, shared: &Arc<SharedSentinel>) -> Result<()> {
    install_functions(
        env,
        this,
        shared,
        &[
            NativeFunction::new::<Admit>(c"admit"),
            NativeFunction::new::<StatusOf>(c"status"),
            NativeFunction::new::<IsServing>(c"isServing"),
        ],
    )
}
