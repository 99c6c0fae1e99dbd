//! spend-sentinel: spend-ceiling readiness and an exposure-ledger admission guard.
pub mod rules;
