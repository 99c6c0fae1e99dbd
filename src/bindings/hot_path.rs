//! The calls a service makes per request, `admit(units)`, `status()`, `isServing()` and
//! `charge(units)`, as plain native functions installed on each instance.
//!
//! Why not ordinary `#[napi]` methods: a napi-rs class method spends ~0.4 µs checking the class
//! identity of `this`, more than the whole decision. These functions carry their sentinel in the
//! function's own data pointer instead (see `native_function`), so a call costs a few native
//! no-ops (`bench/hot-path.mjs`). The prototype keeps `#[napi]` methods of the same names (for
//! typings and `Sentinel.prototype.admit.call(...)`); both read their argument with
//! `units_argument` and ask `SharedSentinel`.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::sys;

use super::native_function::{install_functions, Call, Method, NativeFunction};
use super::units_argument::{record_measured, with_units};
use crate::shared_sentinel::SharedSentinel;

/// `admit(units = 1)`: `true` when the units are admitted (see `SharedSentinel::admit`).
struct Admit;

impl Method for Admit {
    type State = SharedSentinel;
    const ARGS: usize = 1;

    fn call(call: &Call, shared: &SharedSentinel) -> sys::napi_value {
        with_units(call, |units| call.boolean(shared.admit(units)))
    }
}

/// `charge(units)`: records usage spent without an admission, unconditionally. `units` is
/// required (there is no default for work already done).
struct Charge;

impl Method for Charge {
    type State = SharedSentinel;
    const ARGS: usize = 1;

    fn call(call: &Call, shared: &SharedSentinel) -> sys::napi_value {
        record_measured(call, 0, "units", |units| shared.charge(units))
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
            NativeFunction::new::<Charge>(c"charge"),
        ],
    )
}
