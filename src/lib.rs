//! spend-sentinel: spend-ceiling readiness and an exposure-ledger admission guard for
//! usage-billed Node.js services.
//!
//! Functional core, imperative shell: `rules` decides (pure, clock passed in); `refresher`,
//! `fleet` and `runtime` own the waiting and the I/O (through `authority`, and Redis for the
//! fleet); `bindings` only translates to JavaScript.

// Lints (unsafe hygiene, lossy casts, float comparisons) are set in Cargo.toml's [lints].
// Tests compare floats exactly on purpose: they check values computed from exact inputs.
#![cfg_attr(test, allow(clippy::float_cmp))]

// Crate-private: nothing links this crate as a library (Node loads the cdylib; the rlib is only
// for `cargo test`), so only what the `#[napi]` items reach is alive, and rustc says what is not.
mod authority;
mod bindings;
mod breaker_registry;
mod clock;
mod closed_list;
mod config;
mod fleet;
mod js_thread;
mod logging;
mod metrics;
mod numbers;
mod options;
mod refresher;
mod rules;
mod runtime;
mod secret;
mod shared_sentinel;

#[cfg(test)]
mod module_graph_tests;

// Exported like every `#[napi]` item, which also keeps each one in use in test builds (where
// napi-rs registers nothing).
pub use bindings::{
    admission_code_function, breaker_protocol, compute_budget, metric_catalog, metrics_feed,
    native_noop, readiness_cell, readiness_vocabulary, reservation_functions, window_figures,
    BreakerCore, BreakerProtocol, BudgetAnswer, MetricsFeed, Sentinel,
};
