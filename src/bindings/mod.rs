//! The napi layer: parse arguments, call the shell or the rules, translate results and errors.

mod breaker;
mod errors;
mod events;
mod hot_path;
mod logger;
mod native_function;
mod options;
mod sentinel;
mod teardown;
mod types;
mod window;

pub use breaker::BreakerCore;
pub use sentinel::Sentinel;
pub use window::{compute_budget, BudgetAnswer};

use napi_derive::napi;

/// A zero-argument native function that does nothing: the baseline of `bench/`.
#[napi]
pub fn native_noop() {}
