//! The napi layer: parse arguments, call the shell or the rules, translate results and errors.

mod admission;
mod breaker;
mod compute_budget;
mod errors;
mod events;
mod from_env;
mod hold;
mod hot_path;
mod logger;
mod metrics_feed;
mod native_function;
mod options;
mod readiness_cell;
mod reservation;
mod sentinel;
mod teardown;
mod types;
mod units_argument;
mod warning;

pub use admission::admission_code_function;
pub use breaker::{breaker_protocol, BreakerCore, BreakerProtocol};
pub use compute_budget::{compute_budget, window_figures, BudgetAnswer};
pub use hot_path::readiness_vocabulary;
pub use metrics_feed::{metric_catalog, metrics_feed, MetricsFeed};
pub use readiness_cell::readiness_cell;
pub use reservation::reservation_functions;
pub use sentinel::Sentinel;

use napi_derive::napi;

/// A zero-argument native function that does nothing: the baseline of `bench/`.
#[napi]
pub fn native_noop() {}
