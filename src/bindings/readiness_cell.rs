//! Where `readiness()`'s one crossing leaves its answer: the native call writes the status and
//! reason (as one small integer) and the evidence age into a two-element `Float64Array` that
//! js/readiness.js reads right after the call, and answers `undefined`. A value made through napi
//! costs a napi call, and a double beyond the small integers a heap allocation, per call: the
//! largest costs left once the object is built in JavaScript (bench/hot-path.mjs).
//!
//! One cell per JavaScript thread: a native function is only ever called on the thread of its
//! environment, so what it writes is read by that thread's js/readiness.js, before anything else
//! can run there.

use std::cell::Cell;
use std::ptr;

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;

/// What the age slot holds when the readiness has no evidence (js/readiness.js shows `null`).
pub const NO_EVIDENCE: f64 = -1.0;

/// The cell's slots: `[pair, age]`.
const SLOTS: usize = 2;

thread_local! {
    /// This thread's cell: the array's data (what [`ReadinessCell::write`] writes) and the
    /// reference that keeps the array alive. Null until js/readiness.js asks for it; null again
    /// once its environment is torn down.
    static CELL: Cell<(*mut f64, sys::napi_ref)> =
        const { Cell::new((ptr::null_mut(), ptr::null_mut())) };
}

/// This thread's cell, as each instance's readiness function holds it (looked up once, at
/// install).
#[derive(Clone, Copy)]
pub struct ReadinessCell(*mut f64);

// SAFETY: a `ReadinessCell` is written only by a native function, called only on the JavaScript
// thread of the environment whose cell it is; it is moved between threads (inside an `Arc`
// state) but never used on another.
unsafe impl Send for ReadinessCell {}
// SAFETY: as above: never used off that thread.
unsafe impl Sync for ReadinessCell {}

impl ReadinessCell {
    /// This thread's cell, made if it was not yet.
    pub fn of(env: &Env) -> Result<ReadinessCell> {
        readiness_cell(env)?;
        Ok(ReadinessCell(CELL.get().0))
    }

    /// Leaves a readiness in the cell: `pair` (status and reason) and `age_seconds` (the
    /// evidence age, or [`NO_EVIDENCE`]).
    pub fn write(self, pair: u32, age_seconds: f64) {
        // SAFETY: the pointer is the backing store of the `SLOTS`-element array `CELL` holds a
        // reference to, which lives (and never moves) until its environment's teardown; no
        // native function of that environment is called after it.
        unsafe {
            self.0.write_unaligned(f64::from(pair));
            self.0.add(1).write_unaligned(age_seconds);
        }
    }
}

/// `() => Float64Array`: this thread's readiness cell, made on the first call and the same array
/// on every later one (so two copies of js/readiness.js read what either's call wrote). Internal
/// to js/readiness.js.
#[napi(ts_return_type = "Float64Array")]
pub fn readiness_cell(env: &Env) -> Result<Unknown<'_>> {
    let raw = env.raw();
    let (_, reference) = CELL.get();
    let mut array = ptr::null_mut();
    if reference.is_null() {
        let mut buffer = ptr::null_mut();
        let mut data = ptr::null_mut();
        // SAFETY: `raw` is this call's env; the out-pointers are locals written once each.
        unsafe {
            let bytes = SLOTS * size_of::<f64>();
            check(sys::napi_create_arraybuffer(
                raw,
                bytes,
                &mut data,
                &mut buffer,
            ))?;
            check(sys::napi_create_typedarray(
                raw,
                sys::TypedarrayType::float64_array,
                SLOTS,
                buffer,
                0,
                &mut array,
            ))?;
            let mut reference = ptr::null_mut();
            check(sys::napi_create_reference(raw, array, 1, &mut reference))?;
            CELL.set((data.cast(), reference));
        }
        env.add_env_cleanup_hook((), |()| CELL.set((ptr::null_mut(), ptr::null_mut())))?;
        ReadinessCell(CELL.get().0).write(0, NO_EVIDENCE);
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
        Err(Error::from_reason("the readiness cell could not be made"))
    }
}
