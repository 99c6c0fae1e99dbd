//! Plain native functions that carry a shared state (`Arc<T>`) in their own data pointer: what
//! the per-call methods (`hot_path`, `breaker`) use instead of `#[napi]` methods, whose check of
//! `this` costs more than the call itself.
//!
//! Reading that pointer back as `&T` is sound only for the `T` it was made from. The compiler
//! checks that pairing: a callback is a [`Method`] naming its `State`, a [`NativeFunction<T>`]
//! can only be made from a `Method<State = T>`, and [`install_functions`] stores an `Arc<T>` for
//! functions of that same `T`. A mismatched pairing does not compile, so no test looks for one.

use std::ffi::{c_void, CStr};
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ptr;
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::sys;

/// The most arguments a [`Method`] may read.
const MAX_ARGS: usize = 3;

/// The body of a native function: safe code that reads its call and its state.
pub(super) trait Method {
    type State: Send + Sync + 'static;
    /// Arguments read (at most [`MAX_ARGS`]); more are ignored, fewer are `None`.
    const ARGS: usize;
    /// The answer, or null for `undefined` (or when an exception is pending).
    fn call(call: &Call, state: &Self::State) -> sys::napi_value;
}

/// One call of a native function. Made only by [`trampoline`], so its env is the env of a call in
/// progress on this thread and its arguments are that call's: the methods below rely on it.
pub(super) struct Call {
    env: sys::napi_env,
    argc: usize,
    argv: [sys::napi_value; MAX_ARGS],
}

impl Call {
    /// For the helpers that take a raw env (`errors::throw`, `units_argument`).
    pub fn env(&self) -> sys::napi_env {
        self.env
    }

    /// The argument at `index`, `None` when the caller passed fewer.
    pub fn argument(&self, index: usize) -> Option<sys::napi_value> {
        (index < self.argc).then(|| self.argv[index])
    }

    /// The argument at `index` as a number; `None` when absent or not a number.
    pub fn number_argument(&self, index: usize) -> Option<f64> {
        let value = self.argument(index)?;
        let mut number = 0.0;
        // SAFETY: `value` is an argument of this call on `env` (see the type's docs); `number`
        // is a valid out-pointer.
        let status = unsafe { sys::napi_get_value_double(self.env, value, &mut number) };
        (status == sys::Status::napi_ok).then_some(number)
    }

    pub fn boolean(&self, value: bool) -> sys::napi_value {
        let mut result = ptr::null_mut();
        // SAFETY: `env` belongs to this call (see the type's docs); `result` is a valid
        // out-pointer.
        let status = unsafe { sys::napi_get_boolean(self.env, value, &mut result) };
        answer(status, result)
    }

    pub fn number(&self, value: f64) -> sys::napi_value {
        let mut result = ptr::null_mut();
        // SAFETY: as in `boolean`.
        let status = unsafe { sys::napi_create_double(self.env, value, &mut result) };
        answer(status, result)
    }

    /// A whole number: JavaScript gets a small integer, cheaper to make and read than a double.
    pub fn uint32(&self, value: u32) -> sys::napi_value {
        let mut result = ptr::null_mut();
        // SAFETY: as in `boolean`.
        let status = unsafe { sys::napi_create_uint32(self.env, value, &mut result) };
        answer(status, result)
    }

    /// `text` must be ASCII (Latin-1 is the cheapest string napi makes).
    pub fn latin1(&self, text: &str) -> sys::napi_value {
        debug_assert!(text.is_ascii());
        let mut result = ptr::null_mut();
        // SAFETY: as in `boolean`; the pointer and length describe `text`, alive for the call.
        let status = unsafe {
            sys::napi_create_string_latin1(
                self.env,
                text.as_ptr().cast(),
                text.len().cast_signed(),
                &mut result,
            )
        };
        answer(status, result)
    }
}

/// A value napi failed to make is answered as null (`undefined` in JavaScript); it fails only
/// with an exception already pending, which then reaches the caller instead.
fn answer(status: sys::napi_status, value: sys::napi_value) -> sys::napi_value {
    if status == sys::Status::napi_ok {
        value
    } else {
        ptr::null_mut()
    }
}

/// The native callback of every function of method `M`.
///
/// # Safety
///
/// Only Node-API may call it, for a call of a function made by [`install_functions`] from a
/// `NativeFunction<M::State>`: `env` and `info` are that call's, and the function's data is a
/// reference to an `Arc<M::State>` that the function owns.
unsafe extern "C" fn trampoline<M: Method>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    const { assert!(M::ARGS <= MAX_ARGS) };
    let mut argc = M::ARGS;
    let mut argv = [ptr::null_mut(); MAX_ARGS];
    let mut data = ptr::null_mut();
    // SAFETY: `env` and `info` are this call's (the contract above); `argv` has room for
    // `argc` ≤ MAX_ARGS values; napi accepts a null `this` out-pointer.
    let status = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            &mut data,
        )
    };
    if status != sys::Status::napi_ok || data.is_null() {
        // Not reachable with a live call; answering `undefined` beats reading garbage.
        return ptr::null_mut();
    }
    // SAFETY: `data` is the `Arc<M::State>` reference `install_functions` gave this function
    // (a `NativeFunction<T>` only holds trampolines of methods whose `State` is `T`). It is
    // released by the function's finalizer, which cannot run while the function is called.
    let state = unsafe { &*data.cast::<M::State>() };
    let call = Call {
        env,
        argc: argc.min(M::ARGS),
        argv,
    };
    M::call(&call, state)
}

/// A function to install on an object, reading a state of type `T`.
pub(super) struct NativeFunction<T> {
    name: &'static CStr,
    callback: unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value,
    state: PhantomData<fn(&T)>,
}

impl<T: Send + Sync + 'static> NativeFunction<T> {
    /// The only way to make one: `M` must read the very `T` that will be stored.
    pub const fn new<M: Method<State = T>>(name: &'static CStr) -> Self {
        NativeFunction {
            name,
            callback: trampoline::<M>,
            state: PhantomData,
        }
    }
}

/// Defines each function on `this` as an own, non-enumerable, read-only property (so
/// `util.inspect` and `JSON.stringify` show nothing), carrying `state` in its data pointer. Each
/// function keeps the state alive through its own reference, released when it is collected.
pub(super) fn install_functions<T: Send + Sync + 'static>(
    env: &Env,
    this: &Object<'_>,
    state: &Arc<T>,
    functions: &[NativeFunction<T>],
) -> Result<()> {
    functions
        .iter()
        .try_for_each(|function| install(env, this, state, function))
}

fn install<T: Send + Sync + 'static>(
    env: &Env,
    this: &Object<'_>,
    state: &Arc<T>,
    function: &NativeFunction<T>,
) -> Result<()> {
    define(
        env,
        this,
        function.name.as_ptr(),
        ptr::null_mut(),
        state,
        function,
    )
}

/// As [`install_functions`], one function under the property key `key` (a symbol: a property
/// only code holding that symbol reaches), not under its name.
pub(super) fn install_keyed<T: Send + Sync + 'static>(
    env: &Env,
    this: &Object<'_>,
    key: sys::napi_value,
    state: &Arc<T>,
    function: &NativeFunction<T>,
) -> Result<()> {
    define(env, this, ptr::null(), key, state, function)
}

/// Defines `function` on `this` under `utf8name` (a C string) or, when that is null, `key`.
fn define<T: Send + Sync + 'static>(
    env: &Env,
    this: &Object<'_>,
    utf8name: *const std::ffi::c_char,
    key: sys::napi_value,
    state: &Arc<T>,
    function: &NativeFunction<T>,
) -> Result<()> {
    let value = create_function(env, state, function)?;
    let property = sys::napi_property_descriptor {
        utf8name,
        name: key,
        method: None,
        getter: None,
        setter: None,
        value,
        attributes: sys::PropertyAttributes::default,
        data: ptr::null_mut(),
    };
    // SAFETY: `this`, `value` and `key` (when used) are live values of `env`; `utf8name` is null
    // or a C string alive for the call; one descriptor is passed.
    check_status!(unsafe { sys::napi_define_properties(env.raw(), this.raw(), 1, &property) })
}

/// Makes `function` as a JavaScript function value carrying `state`, owned by the function (for
/// a caller that hands the function out rather than installing it on an object).
pub(super) fn create_function<T: Send + Sync + 'static>(
    env: &Env,
    state: &Arc<T>,
    function: &NativeFunction<T>,
) -> Result<sys::napi_value> {
    let reference = StateRef::new(state);
    let name = function.name;
    let mut value = ptr::null_mut();
    // SAFETY: `env` is live (an `Env` of this call); `name` is a C string of the given length;
    // `value` is a valid out-pointer. The callback reads `data` as the `T` of `reference`.
    check_status!(unsafe {
        sys::napi_create_function(
            env.raw(),
            name.as_ptr(),
            name.count_bytes().cast_signed(),
            Some(function.callback),
            reference.data(),
            &mut value,
        )
    })?;
    // SAFETY: `value` is the function just made on `env`; `release::<T>` matches `data`.
    check_status!(unsafe {
        sys::napi_add_finalizer(
            env.raw(),
            value,
            reference.data(),
            Some(release::<T>),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    })?;
    // From here the finalizer owns the reference, whatever becomes of the function.
    reference.hand_to_finalizer();
    Ok(value)
}

/// One strong reference to the state, as the raw data pointer of a function. Dropped before
/// [`hand_to_finalizer`](Self::hand_to_finalizer) (napi refused the function or its finalizer),
/// it gives the reference back, so a failed install leaks nothing.
struct StateRef<T> {
    data: *const T,
}

impl<T> StateRef<T> {
    fn new(state: &Arc<T>) -> Self {
        StateRef {
            data: Arc::into_raw(state.clone()),
        }
    }

    fn data(&self) -> *mut c_void {
        self.data.cast_mut().cast()
    }

    /// The function's finalizer ([`release`]) now gives the reference back.
    fn hand_to_finalizer(self) {
        let _ = ManuallyDrop::new(self);
    }
}

impl<T> Drop for StateRef<T> {
    fn drop(&mut self) {
        // SAFETY: `data` came from `Arc::into_raw` in `new` and no finalizer took it over. A
        // function made with it (if any) was never defined on an object, so it can never run
        // and read the pointer.
        drop(unsafe { Arc::from_raw(self.data) });
    }
}

/// Gives back a function's reference to its state when the function is collected.
///
/// # Safety
///
/// Only Node-API may call it, once, as the finalizer `install` registered: `data` is then the
/// `Arc<T>` reference the function owned, and the function can no longer run.
unsafe extern "C" fn release<T>(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: the contract above; the reference came from `Arc::into_raw` in `StateRef::new`.
    drop(unsafe { Arc::from_raw(data.cast::<T>().cast_const()) });
}
