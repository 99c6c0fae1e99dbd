//! spend-sentinel: spend-ceiling readiness and an exposure-ledger admission guard for
//! usage-billed Node.js services.
//!
//! Functional core, imperative shell: `rules` decides (pure, clock passed in); `refresher` owns
//! the waiting and the I/O through `authority`; `bindings` only translates to JavaScript.

pub mod authority;
mod bindings;
pub mod clock;
pub mod config;
pub mod fleet;
mod js_thread;
pub mod metrics;
pub mod options;
pub mod refresher;
pub mod rules;
pub mod runtime;
pub mod secret;
pub mod shared;

pub use bindings::{native_noop, BreakerCore, Sentinel};
