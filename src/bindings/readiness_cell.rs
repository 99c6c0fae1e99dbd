//! Where `readiness()`'s one crossing leaves its answer: the native call writes the status and
//! reason (as one small integer) and the evidence age into a two-element `Float64Array` that
//! js/readiness.js reads right after the call, and answers `undefined`. A value made through napi
//! costs a napi call, and a double beyond the small integers a heap allocation, per call: the
//! largest costs left once the object is built in JavaScript (bench/hot-path.mjs).
//!
//! One cell per JavaScript thread: a native function is only ever called on the thread of its
//! environment, so what it writes is read by that thread's js/readiness.js, before anything else
//! can run there. The cell's memory is Rust's, never freed: JavaScript can detach (transfer) an
//! array buffer, and the memory of one napi had allocated would then be freed with the clone
//! while every sentinel's function still writes to it. 16 bytes per environment stay behind.

use std::cell::Cell;
use std::ptr;

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;

/// What the age slot holds when the readiness has no evidence (js/readiness.js shows `null`).
pub const NO_EVIDENCE: f64 = -1.0;

/// The key (for `Symbol.for`) of each instance's readiness function: `readiness()`, on the
/// prototype, calls `this[Symbol.for(READINESS_KEY)]()` (not a public name).
pub const READINESS_KEY: &str = "spend-sentinel.readinessCode";

/// This environment's cell and key, made once.
#[derive(Clone, Copy)]
struct Slot {
    /// `[pair, age]`, as [`ReadinessCell::write`] writes them.
    data: *mut [f64; 2],
    /// The `Float64Array` over `data`, for `readinessCell()`.
    array: sys::napi_ref,
    /// `Symbol.for(READINESS_KEY)`, so that a construction does not look it up again.
    key: sys::napi_ref,
}

thread_local! {
    /// Null until the first sentinel (or js/readiness.js) of this thread's environment asks for
    /// it; null again once that environment is torn down.
    static SLOT: Cell<Option<Slot>> = const { Cell::new(None) };
}

/// This thread's cell, as each instance's readiness function holds it (looked up once, at
/// install).
#[derive(Clone, Copy)]
pub struct ReadinessCell(*mut [f64; 2]);

// SAFETY: a `ReadinessCell` is written only by a native function, called only on the JavaScript
// thread of the environment whose cell it is; it is moved between threads (inside an `Arc`
// state) but never used on another.
unsafe impl Send for ReadinessCell {}
// SAFETY: as above: never used off that thread.
unsafe impl Sync for ReadinessCell {}

impl ReadinessCell {
    /// This environment's cell, and the key its readiness functions are installed under.
    pub fn with_key(env: &Env) -> Result<(ReadinessCell, sys::napi_value)> {
        let slot = slot(env)?;
        Ok((ReadinessCell(slot.data), value_of(env, slot.key)?))
    }

    /// Leaves a readiness in the cell: `pair` (status and reason) and `age_seconds` (the
    /// evidence age, or [`NO_EVIDENCE`]).
    pub fn write(self, pair: u32, age_seconds: f64) {
        // SAFETY: `data` is a leaked allocation (never freed, never moved), written only on this
        // thread (see the `Send` impl).
        unsafe { *self.0 = [f64::from(pair), age_seconds] }
    }
}

/// `() => Float64Array`: this environment's readiness cell, the same array on every call (so two
/// copies of js/readiness.js read what either's call wrote). Internal to js/readiness.js.
#[napi(ts_return_type = "Float64Array")]
pub fn readiness_cell(env: &Env) -> Result<Unknown<'_>> {
    let array = value_of(env, slot(env)?.array)?;
    // SAFETY: `array` was just read on this call's env.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), array) })
}

/// This environment's slot, made on first use.
fn slot(env: &Env) -> Result<Slot> {
    if let Some(slot) = SLOT.get() {
        return Ok(slot);
    }
    let data: *mut [f64; 2] = Box::leak(Box::new([0.0, NO_EVIDENCE]));
    let raw = env.raw();
    let mut buffer = ptr::null_mut();
    let mut array = ptr::null_mut();
    // SAFETY: `raw` is this call's env; `data` points to 16 bytes that live forever, so the
    // buffer needs no finalizer; the out-pointers are locals written once each.
    unsafe {
        check_status!(sys::napi_create_external_arraybuffer(
            raw,
            data.cast(),
            size_of::<[f64; 2]>(),
            None,
            ptr::null_mut(),
            &mut buffer,
        ))?;
        check_status!(sys::napi_create_typedarray(
            raw,
            sys::TypedarrayType::float64_array,
            2,
            buffer,
            0,
            &mut array,
        ))?;
    }
    let symbol: Unknown = env.get_global()?.get_named_property("Symbol")?;
    // SAFETY: `Symbol` is a function, and so an object (napi reads properties of either).
    let symbol: Object = unsafe { symbol.cast()? };
    let symbol_for: Function<&str, Unknown> = symbol.get_named_property("for")?;
    let key = symbol_for.call(READINESS_KEY)?;
    let slot = Slot {
        data,
        array: reference(env, array)?,
        key: reference(env, key.raw())?,
    };
    env.add_env_cleanup_hook((), |()| SLOT.set(None))?;
    SLOT.set(Some(slot));
    Ok(slot)
}

/// A reference that lives as long as the environment (napi frees it at teardown).
fn reference(env: &Env, value: sys::napi_value) -> Result<sys::napi_ref> {
    let mut reference = ptr::null_mut();
    // SAFETY: `value` is a live value of `env`; `reference` is a local written once.
    check_status!(unsafe { sys::napi_create_reference(env.raw(), value, 1, &mut reference) })?;
    Ok(reference)
}

fn value_of(env: &Env, reference: sys::napi_ref) -> Result<sys::napi_value> {
    let mut value = ptr::null_mut();
    // SAFETY: `reference` was made on this thread's live env (a torn-down env clears the slot).
    check_status!(unsafe { sys::napi_get_reference_value(env.raw(), reference, &mut value) })?;
    Ok(value)
}
