//! The native half of reservations (docs/api.md, Reservations): the three functions
//! js/reservation.js calls for `reserve`, `extend`, `record` and `settle` (`charge(units)`, which
//! needs no reservation, is on each instance: `hot_path`).
//!
//! A reservation is a small JavaScript object (js/reservation.js) that remembers the units it
//! holds; the ledger keeps only their sum. So there is no native handle per reservation, nothing
//! to finalize, and `reserve` / `record` / `settle` are one native call each, carried like `admit` by
//! functions whose data pointer is the sentinel (see `native_function`).

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;

use super::admission::admission_code;
use super::native_function::{create_function, Call, Method, NativeFunction};
use super::sentinel::Sentinel;
use super::units_argument::{record_measured, with_units};
use crate::shared_sentinel::SharedSentinel;

/// `hold(units = 1)`: admits `units` as `admit` would, held until the reservation settles;
/// answers the units held (after the units rule, so ≥ 0), or, when refused, minus the refusal's
/// admission code (see `admission::admission_code`: the reason and the stale window of that very
/// decision), so the settling guard answers a refusal without asking again.
struct Hold;

impl Method for Hold {
    type State = SharedSentinel;
    const ARGS: usize = 1;

    fn call(call: &Call, shared: &SharedSentinel) -> sys::napi_value {
        with_units(call, |units| {
            let held = shared.try_hold(units);
            call.number(held.map_or_else(
                |refusal| -f64::from(admission_code(Err(refusal))),
                |()| units,
            ))
        })
    }
}

/// `record(heldUnits, units)`: a reservation that holds `heldUnits` (the count js/reservation.js
/// keeps, never a user's value) reports `units` already produced; answers the units it still
/// holds. `units` is required: a bad one throws and changes nothing.
struct Record;

impl Method for Record {
    type State = SharedSentinel;
    const ARGS: usize = 2;

    fn call(call: &Call, shared: &SharedSentinel) -> sys::napi_value {
        let mut held = None;
        record_measured(call, 1, "units", |units| {
            held = Some(shared.record(held_units(call), units));
        });
        held.map_or(std::ptr::null_mut(), |held| call.number(held))
    }
}

/// `settle(heldUnits, recordedUnits, actualUnits)`: ends a reservation that holds `heldUnits`
/// and recorded `recordedUnits` so far (both counts js/reservation.js keeps); `actualUnits` is
/// its whole usage, required: a bad one throws and changes nothing.
struct Settle;

impl Method for Settle {
    type State = SharedSentinel;
    const ARGS: usize = 3;

    fn call(call: &Call, shared: &SharedSentinel) -> sys::napi_value {
        record_measured(call, 2, "actualUnits", |actual| {
            // Never absent in practice; 0 recorded counts the whole actual as new (safe side).
            let recorded = call.number_argument(1).unwrap_or(0.0);
            shared.settle(held_units(call), recorded, actual);
        })
    }
}

/// The reservation's held units, argument 0: never absent in practice; 0 would leave the held
/// units in the ledger (the safe side).
fn held_units(call: &Call) -> f64 {
    call.number_argument(0).unwrap_or(0.0)
}

/// `{ hold, record, settle }` for `sentinel`: the native calls of its reservations (js/reservation.js),
/// made once per sentinel. Internal, like `admissionCodeFunction`.
#[napi(
    ts_return_type = "{ hold(units?: number): number; record(heldUnits: number, units: number): number; settle(heldUnits: number, recordedUnits: number, actualUnits: number): void }"
)]
pub fn reservation_functions<'env>(env: &'env Env, sentinel: &Sentinel) -> Result<Object<'env>> {
    let mut functions = Object::new(env)?;
    for (name, function) in [
        ("hold", NativeFunction::new::<Hold>(c"hold")),
        ("record", NativeFunction::new::<Record>(c"record")),
        ("settle", NativeFunction::new::<Settle>(c"settle")),
    ] {
        let value = create_function(env, sentinel.shared(), &function)?;
        // SAFETY: `value` is a function just made on this call's env.
        functions.set_named_property(name, unsafe {
            Unknown::from_raw_unchecked(env.raw(), value)
        })?;
    }
    Ok(functions)
}
