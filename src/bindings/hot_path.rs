//! The calls a service makes per request, `admit(units)`, `status()` and `isServing()`, as plain native
//! functions installed on each instance.
//!
//! Why not ordinary `#[napi]` methods: a napi-rs class method spends ~0.4 µs checking the class
//! identity of `this`. These functions carry their sentinel in the function's own data pointer
//! instead, so a call costs about as much as a native no-op (see `bench/`). The prototype keeps
//! `#[napi]` methods of the same names (for typings and `Sentinel.prototype.admit.call(...)`);
//! both read their argument with [`units_argument`] and ask `Shared`.

use std::ffi::c_void;
use std::ptr;
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::sys;

use super::errors::{self, Kind};
use super::options::type_name;
use crate::rules::ledger::{self, UnitsArgument};
use crate::shared::Shared;

/// `admit(units = 1)` (README, API): the units rule is the ledger's; anything it refuses throws
/// its message as a `TypeError` (pending on `env`) and changes nothing.
pub unsafe fn units_argument(env: sys::napi_env, units: Option<sys::napi_value>) -> Result<f64> {
    let given = units.map_or(UnitsArgument::Absent, |value| read_units(env, value));
    ledger::units(given)
        .map_err(|e| errors::throw(env, Kind::TypeError, errors::UNITS, &e.to_string()))
}

/// What JavaScript passed, for the rule to judge.
unsafe fn read_units(env: sys::napi_env, value: sys::napi_value) -> UnitsArgument {
    let mut units = 0.0;
    if sys::napi_get_value_double(env, value, &mut units) == sys::Status::napi_ok {
        return UnitsArgument::Number(units);
    }
    let mut kind = sys::ValueType::napi_undefined;
    sys::napi_typeof(env, value, &mut kind);
    match ValueType::from(kind) {
        ValueType::Undefined => UnitsArgument::Absent,
        other => UnitsArgument::Other(type_name(other)),
    }
}

/// Reads up to `argv.len()` arguments and the state carried in the function's data.
pub(super) unsafe fn call_info<'a, T>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    argv: &mut [sys::napi_value],
) -> (usize, &'a T) {
    let mut argc = argv.len();
    let mut data = ptr::null_mut();
    sys::napi_get_cb_info(
        env,
        info,
        &mut argc,
        argv.as_mut_ptr(),
        ptr::null_mut(),
        &mut data,
    );
    (argc, &*(data as *const T))
}

unsafe fn boolean(env: sys::napi_env, value: bool) -> sys::napi_value {
    let mut result = ptr::null_mut();
    sys::napi_get_boolean(env, value, &mut result);
    result
}

unsafe extern "C" fn admit_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let mut argv = [ptr::null_mut(); 1];
    let (argc, shared) = call_info::<Shared>(env, info, &mut argv);
    match units_argument(env, (argc > 0).then_some(argv[0])) {
        Ok(units) => boolean(env, shared.admit(units)),
        Err(_) => ptr::null_mut(),
    }
}

/// The cheap readiness read: the status string alone, no object built.
unsafe extern "C" fn status_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let (_, shared) = call_info::<Shared>(env, info, &mut []);
    let text = shared.readiness().status.as_str();
    let mut result = ptr::null_mut();
    sys::napi_create_string_latin1(env, text.as_ptr().cast(), text.len() as isize, &mut result);
    result
}

/// The cheapest readiness read: would a readiness probe answer 200 (`ready` or `degraded`)?
unsafe extern "C" fn is_serving_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let (_, shared) = call_info::<Shared>(env, info, &mut []);
    boolean(env, shared.readiness().status.admits())
}

unsafe extern "C" fn release<T>(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    drop(Arc::from_raw(data as *const T));
}

/// Defines `admit`, `status` and `isServing` on `this`.
pub fn install(env: &Env, this: &Object<'_>, shared: &Arc<Shared>) -> Result<()> {
    install_functions(
        env,
        this,
        shared,
        &[
            (c"admit", admit_callback),
            (c"status", status_callback),
            (c"isServing", is_serving_callback),
        ],
    )
}

pub(super) type Callback =
    unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

/// Defines each function on `this` as an own, non-enumerable, read-only property (so
/// `util.inspect` and `JSON.stringify` show nothing), carrying `state` in its data pointer. Each
/// function keeps the state alive through its own reference, released when it is collected.
pub(super) fn install_functions<T: Send + Sync + 'static>(
    env: &Env,
    this: &Object<'_>,
    state: &Arc<T>,
    functions: &[(&std::ffi::CStr, Callback)],
) -> Result<()> {
    for &(name, callback) in functions {
        let data = Arc::into_raw(state.clone()) as *mut c_void;
        let mut function = ptr::null_mut();
        unsafe {
            check_status!(sys::napi_create_function(
                env.raw(),
                name.as_ptr(),
                name.count_bytes() as isize,
                Some(callback),
                data,
                &mut function
            ))?;
            check_status!(sys::napi_add_finalizer(
                env.raw(),
                function,
                data,
                Some(release::<T>),
                ptr::null_mut(),
                ptr::null_mut()
            ))?;
            let property = sys::napi_property_descriptor {
                utf8name: name.as_ptr(),
                name: ptr::null_mut(),
                method: None,
                getter: None,
                setter: None,
                value: function,
                attributes: sys::PropertyAttributes::default,
                data: ptr::null_mut(),
            };
            check_status!(sys::napi_define_properties(
                env.raw(),
                this.raw(),
                1,
                &property
            ))?;
        }
    }
    Ok(())
}
