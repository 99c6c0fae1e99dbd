//! The admission guard's one native call per request (js/admission.js): admits like
//! `admit(units)` and answers, in one crossing, 0 or the refusal's code; the reservations'
//! `hold` answers a refusal with the same code.

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;

use super::native_function::{create_function, Call, Method, NativeFunction};
use super::sentinel::Sentinel;
use super::units_argument::with_units;
use crate::numbers::saturating_u32;
use crate::rules::{Reason, Refusal};
use crate::shared_sentinel::SharedSentinel;

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
/// back through `readinessVocabulary().reasons` (`hot_path::readiness_vocabulary`), whose
/// length + 1 is `REASON_SLOTS`: the reason
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

/// `(units?: number) => number`: the admission guard's call for `sentinel`, answering 0 when
/// admitted, else a refusal's code (`admission_code` in src/bindings/admission.rs). Made once per
/// guard (its class check is paid here, not per request). Internal to js/admission.js.
#[napi(ts_return_type = "(units?: number) => number")]
pub fn admission_code_function<'env>(env: &'env Env, sentinel: &Sentinel) -> Result<Unknown<'env>> {
    let function = NativeFunction::new::<AdmitOrRefusal>(c"admitOrRefusal");
    let value = create_function(env, sentinel.shared(), &function)?;
    // SAFETY: `value` is a function just made on this call's env.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), value) })
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
