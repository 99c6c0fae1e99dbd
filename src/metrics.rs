//! Prometheus metrics of one sentinel, in three rooms and a catalog:
//!
//! - `counters`: what the hot path and the refresher count, with atomics (no lock);
//! - `families`: the families assembled at scrape time from the counters and the sentinel
//!   state's gauges, and the named breakers' families;
//! - `exposition`: the text formats (0.0.4 and OpenMetrics 1.0);
//! - `catalog`: every family once (name, HELP, type, labels, OpenTelemetry mapping).
//!
//! Every label takes only the values of a closed set (statuses, reasons, outcomes): nothing a
//! user, an account or the authority says can become a label (the hold names are the service's
//! own, checked).

pub mod catalog;
mod counters;
mod exposition;
mod families;

pub use counters::Metrics;
pub use exposition::{render_as, Format};
pub use families::{breaker_families, by_label, flag, single, Family, Gauges};

#[cfg(test)]
pub use exposition::render;
