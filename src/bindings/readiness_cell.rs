//! Where `readiness()`'s one crossing leaves the evidence age. The native call answers the status
//! and reason as one small integer (a value JavaScript gets without an allocation) and writes the
//! age here, into a one-element `Float64Array` js/readiness.js reads right after the call: a
//! double returned through napi is a heap allocation per call, the largest cost left once the
//! object is built in JavaScript (bench/hot-path.mjs).
//!
//! One cell per JavaScript thread: a native function is only ever called on the thread of its
//! environment, so the age it writes is read by that thread's js/readiness.js, before anything
//! else can run there.

use std::cell::Cell;
use std::ptr;

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;

/// What the cell holds when the readiness has no evidence (js/readiness.js shows `null`).
pub const NO_EVIDENCE: f64 = -1.0;

thread_local! {
    /// This thread's cell: the array's data (what [`AgeCell::write`] writes) and the reference
    /// that keeps the array alive. Null until js/readiness.js asks for it; null again once its
    /// environment is torn down.
    static CELL: Cell<(*mut f64, sys::napi_ref)> =
        const { Cell::new((ptr::null_mut(), ptr::null_mut())) };
}

/// This thread's age cell, as each instance's readiness function holds it (read once at install:
/// a thread-local read per call costs more than the rest of the write).
#[derive(Clone, Copy)]
pub struct AgeCell(*mut f64);

// SAFETY: an `AgeCell` is written only by a native function, called only on the JavaScript
// thread of the environment whose cell it is; it is moved between threads (inside an `Arc`
// state) but never used on another.
unsafe impl Send for AgeCell {}
// SAFETY: as above: never used off that thread.
unsafe impl Sync for AgeCell {}

impl AgeCell {
    /// This thread's cell, made if it was not yet.
    pub fn of(env: &Env) -> Result<AgeCell> {
        readiness_age_cell(env)?;
        Ok(AgeCell(CELL.get().0))
    }

    /// Leaves `seconds` (an age, or [`NO_EVIDENCE`]) in the cell.
    pub fn write(self, seconds: f64) {
        // SAFETY: the pointer is the 8-byte backing store of the array `CELL` holds a reference
        // to, which lives (and never moves) until its environment's teardown; no native function
        // of that environment is called after it.
        unsafe { self.0.write_unaligned(seconds) }
    }
}

/// `() => Float64Array`: this thread's age cell, made on the first call and the same array on
/// every later one (so two copies of js/readiness.js read what either's call wrote). Internal to
/// js/readiness.js.
#[napi(ts_return_type = "Float64Array")]
pub fn readiness_age_cell(env: &Env) -> Result<Unknown<'_>> {
    let raw = env.raw();
    let (_, reference) = CELL.get();
    let mut array = ptr::null_mut();
    if reference.is_null() {
        let mut buffer = ptr::null_mut();
        let mut data = ptr::null_mut();
        // SAFETY: `raw` is this call's env; the out-pointers are locals written once each.
        unsafe {
            check(sys::napi_create_arraybuffer(raw, 8, &mut data, &mut buffer))?;
            check(sys::napi_create_typedarray(
                raw,
                sys::TypedarrayType::float64_array,
                1,
                buffer,
                0,
                &mut array,
            ))?;
            let mut reference = ptr::null_mut();
            check(sys::napi_create_reference(raw, array, 1, &mut reference))?;
            CELL.set((data.cast(), reference));
        }
        env.add_env_cleanup_hook((), |()| CELL.set((ptr::null_mut(), ptr::null_mut())))?;
        AgeCell(data.cast()).write(NO_EVIDENCE);
    } else {
        // SAFETY: `reference` was made on this thread's live env (a torn-down env nulls it).
        check(unsafe { sys::napi_get_reference_value(raw, reference, &mut array) })?;
    }
    // SAFETY: `array` is a value just made or read on this call's env.
    Ok(unsafe { Unknown::from_raw_unchecked(raw, array) })
}

fn check(status: sys::napi_status) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Error::from_reason(
            "the readiness age cell could not be made",
        ))
    }
}
