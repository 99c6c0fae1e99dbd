//! The options of sentinel methods: `whenReady(options)` and `metrics(options)`. Both take
//! `undefined` alone for "nothing given" (`null` is refused, as the constructor refuses it).

use std::time::Duration;

use crate::metrics::Format;
use crate::options::catalog::{METRICS, WHEN_READY};
use crate::options::{ConfigError, RawValue, Section};

/// `whenReady(options)`: `undefined` or `{ timeoutMs }`; `None` waits without a timeout.
pub fn parse_when_ready(options: &RawValue) -> Result<Option<Duration>, ConfigError> {
    if matches!(options, RawValue::Undefined) {
        return Ok(None);
    }
    let section = Section::new("whenReady", options, &WHEN_READY)?;
    // In range (the schema's): finite, ≥ 0 and at most ~24.8 days.
    Ok(section
        .number("timeoutMs")?
        .map(|ms| Duration::from_secs_f64(ms / 1000.0)))
}

/// `metrics(options)`: nothing (the text format 0.0.4) or `{ format: 'text' | 'openmetrics' }`.
pub fn parse_metrics_options(options: &RawValue) -> Result<Format, ConfigError> {
    if matches!(options, RawValue::Undefined) {
        return Ok(Format::Text);
    }
    let section = Section::new("metrics", options, &METRICS)?;
    let name = section.choice_or_default("format")?;
    // The schema's names are `Format::NAMES`, so `from_name` knows every name `choice` returns.
    Ok(Format::from_name(name).unwrap_or(Format::Text))
}
