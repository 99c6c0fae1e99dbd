//! The calls a service makes per request, `admit(units)`, `status()`, `isServing()` and
//! `charge(units)`, as plain native functions installed on each instance; and `readiness()`'s
//! one crossing, a function leaving the status and reason (one small integer) and the evidence age
//! in the thread's `readiness_cell`, which js/readiness.js makes into the object (built natively,
//! property by property, it cost ~49 native no-ops).
//!
//! Why not ordinary `#[napi]` methods: a napi-rs class method spends ~0.4 µs checking the class
//! identity of `this`, more than the whole decision. These functions carry their sentinel in the
//! function's own data pointer instead (see `native_function`), so a call costs a few native
//! no-ops (`bench/hot-path.mjs`). The prototype keeps `#[napi]` methods of the same names (for
//! typings and `Sentinel.prototype.admit.call(...)`); both read their argument with
//! `units_argument` and ask `SharedSentinel`.

use std::ptr;
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::sys;

use napi_derive::napi;

use super::native_function::{install_functions, install_keyed, Call, Method, NativeFunction};
use super::readiness_cell::{self, ReadinessCell};
use super::types::{millisecond_seconds, ReadinessReason, ReadinessStatus, ReadinessVocabulary};
use super::units_argument::{record_measured, with_units};
use crate::rules::{Readiness, Reason, Status};
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

/// `readiness()`'s one crossing: the readiness of this moment as its [`readiness_pair`] and
/// [`readiness_age_seconds`], left in the thread's readiness cell.
struct ReadinessCode;

/// What each instance's readiness function holds: its sentinel and where the answer goes.
struct ReadinessOut {
    shared: Arc<SharedSentinel>,
    cell: ReadinessCell,
}

impl Method for ReadinessCode {
    type State = ReadinessOut;
    const ARGS: usize = 0;

    /// Makes no value: the answer is in the cell, and `undefined` is returned.
    fn call(_call: &Call, out: &ReadinessOut) -> sys::napi_value {
        let readiness = out.shared.readiness();
        out.cell.write(
            readiness_pair(&readiness),
            readiness_age_seconds(&readiness),
        );
        ptr::null_mut()
    }
}

/// Status and reason as one small integer, `reason.index() × STATUSES + status.index()`: the
/// index js/readiness.js looks the pair up by, in the table it builds from
/// [`readiness_vocabulary`].
#[allow(clippy::cast_possible_truncation, reason = "three statuses fit a u32")]
const STATUSES: u32 = Status::COUNT as u32;

fn readiness_pair(readiness: &Readiness) -> u32 {
    u32::from(readiness.reason.code()) * STATUSES + u32::from(readiness.status.code())
}

/// The evidence age as `readiness()` shows it, in seconds to the millisecond, or
/// [`readiness_cell::NO_EVIDENCE`].
fn readiness_age_seconds(readiness: &Readiness) -> f64 {
    readiness
        .evidence_age
        .map_or(readiness_cell::NO_EVIDENCE, millisecond_seconds)
}

/// The lists a readiness pair (`readiness_pair` in src/bindings/hot_path.rs) and the admission
/// codes index: js/readiness.js and
/// js/admission.js read them once, so no status or reason string is restated in JavaScript.
/// Internal.
#[napi]
pub fn readiness_vocabulary() -> ReadinessVocabulary {
    ReadinessVocabulary {
        statuses: Status::ALL
            .iter()
            .copied()
            .map(ReadinessStatus::from)
            .collect(),
        http_statuses: Status::ALL
            .iter()
            .map(|status| status.http_status())
            .collect(),
        reasons: Reason::ALL
            .iter()
            .copied()
            .map(ReadinessReason::from)
            .collect(),
        code_key: readiness_cell::READINESS_KEY.to_owned(),
    }
}

/// Defines `admit`, `status`, `isServing` and `charge` on `this`, and the readiness function
/// under `Symbol.for(READINESS_KEY)` (see `readiness_cell`).
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
    )?;
    let (cell, key) = ReadinessCell::with_key(env)?;
    let out = Arc::new(ReadinessOut {
        shared: shared.clone(),
        cell,
    });
    let function = NativeFunction::new::<ReadinessCode>(c"readinessCode");
    install_keyed(env, this, key, &out, &function)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// What js/readiness.js does with the cell's pair and age: (status, reason, age in seconds).
    fn decode(pair: u32, age: f64) -> (Status, Reason, Option<f64>) {
        let (reason, status) = (pair / STATUSES, pair % STATUSES);
        (
            Status::ALL[usize::try_from(status).unwrap()],
            Reason::ALL[usize::try_from(reason).unwrap()],
            (age >= 0.0).then_some(age),
        )
    }

    #[test]
    fn a_readiness_gives_back_its_status_reason_and_age_to_the_millisecond() {
        let ages = [
            None,
            Some(Duration::ZERO),
            Some(Duration::from_micros(1_929_039)),
            Some(Duration::from_secs(7 * 24 * 3600)),
            Some(Duration::from_secs(100 * 365 * 24 * 3600)),
        ];
        for reason in Reason::ALL {
            for status in Status::ALL {
                for evidence_age in ages {
                    let readiness = Readiness {
                        status,
                        reason,
                        evidence_age,
                    };
                    let age = evidence_age.map(millisecond_seconds);
                    assert_eq!(
                        decode(
                            readiness_pair(&readiness),
                            readiness_age_seconds(&readiness)
                        ),
                        (status, reason, age),
                        "{readiness:?}"
                    );
                }
            }
        }
    }
}
