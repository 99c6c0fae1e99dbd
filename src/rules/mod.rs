//! The budget, evidence, readiness and admission rules (README) and the circuit breaker, as plain synchronous Rust.
//!
//! Nothing in here reads a clock, spawns a task or touches napi: every decision takes the
//! current time as an argument (`now`, a [`Duration`](std::time::Duration) since an arbitrary
//! monotonic origin), so each rule is a unit test with a fake clock.

pub mod breaker;
pub mod budget;
pub mod cadence;
pub mod evidence;
pub mod fleet;
pub mod fleet_exchange;
pub mod ledger;
pub mod pause;
pub mod readiness;
pub mod readiness_holds;
pub mod refresh_on_demand;
#[cfg(test)]
mod reservation_guarantee;
pub mod rolling;
pub mod sentinel_state;
pub mod verdict;
pub mod window_figures;

pub use budget::fixed::Budget;
pub use budget::BudgetSource;
pub use cadence::{Cadence, CadencePlan};
pub use evidence::Outcome;
pub use readiness::{Readiness, Reason, Status};
pub use sentinel_state::{Refusal, SentinelState};
pub use verdict::{JsType, RefreshCause, Verdict};

/// Shows a number as JavaScript would (`Infinity`, `NaN`), for messages read by JS users.
pub struct JsNumber(pub f64);

impl std::fmt::Display for JsNumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            v if v.is_nan() => f.write_str("NaN"),
            v if v == f64::INFINITY => f.write_str("Infinity"),
            v if v == f64::NEG_INFINITY => f.write_str("-Infinity"),
            v => write!(f, "{v}"),
        }
    }
}
