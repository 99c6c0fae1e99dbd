//! Circuit breaker options → validated settings, for `new CircuitBreaker(options)` and for
//! `refresh.breaker`. Every option documents its unit, its default, and what 0 means.

use std::time::Duration;

use crate::numbers::saturating_u32;
use crate::options::catalog::{CIRCUIT_BREAKER, REFRESH_BREAKER};
use crate::options::limits::MAX_TIMER_MS;
use crate::options::{error, ConfigError, RawValue, Section};
use crate::rules::breaker::BreakerSettings;

/// Characters a breaker `name` may use: it becomes a metric label, so it must stay an
/// identifier-like word chosen by the program, not request data.
fn name_char_ok(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-')
}

#[derive(Debug, Clone, PartialEq)]
pub struct CircuitBreakerConfig {
    /// Names the breaker in errors, events and metrics. Only named breakers have metrics;
    /// the binding calls the others `"breaker"`.
    pub name: Option<String>,
    /// Bound on each call, ms; 0 (the default) means no bound.
    pub timeout_ms: f64,
    /// Calls allowed in flight at once (the bulkhead); 0 (the default) means no limit.
    pub max_concurrent: u32,
    /// `now` was given: the breaker reads the time JavaScript tells it, not the system clock.
    pub js_clock: bool,
    pub settings: BreakerSettings,
}

/// Parses `new CircuitBreaker(options)` (options may be undefined: every default).
pub fn parse_circuit_breaker(options: &RawValue) -> Result<CircuitBreakerConfig, ConfigError> {
    let empty = RawValue::Object(Vec::new());
    let options = if matches!(options, RawValue::Undefined) {
        &empty
    } else {
        options
    };
    let section = Section::new("", options, &CIRCUIT_BREAKER)?;
    let name = match section.string("name")? {
        Some("") => return Err(error("name", "must not be empty")),
        Some(name) if !name.chars().all(name_char_ok) => {
            return Err(error(
                "name",
                "must use only letters, digits and _ . : - (it becomes a metric label)",
            ))
        }
        Some(name) => Some(name.to_owned()),
        None => None,
    };
    let timeout_ms = section.number_or_default("timeoutMs")?;
    if timeout_ms > MAX_TIMER_MS {
        return Err(error(
            "timeoutMs",
            format!(
                "must be at most {MAX_TIMER_MS} ms (about 24.8 days, the longest Node.js timer) \
                 (got {timeout_ms})"
            ),
        ));
    }
    // Called by the JavaScript half (js/breaker.js); only their type is checked here.
    section.function("isFailure")?;
    section.function("fallback")?;
    let js_clock = section.function("now")?;
    // A whole number from 0 to u32::MAX (the schema's range).
    let max_concurrent = saturating_u32(section.number_or_default("maxConcurrent")?);
    Ok(CircuitBreakerConfig {
        name,
        timeout_ms,
        max_concurrent,
        js_clock,
        settings: parse_settings(&section)?,
    })
}

/// `refresh.breaker`, when given (`true` means every default).
pub(super) fn parse_refresh_breaker(
    refresh: &Section<'_>,
) -> Result<Option<BreakerSettings>, ConfigError> {
    let path = refresh.path_of("breaker");
    let every_default = RawValue::Object(Vec::new());
    let options = match refresh.get("breaker") {
        RawValue::Undefined | RawValue::Bool(false) => return Ok(None),
        RawValue::Bool(true) => &every_default,
        value => value,
    };
    parse_settings(&Section::new(&path, options, &REFRESH_BREAKER)?).map(Some)
}

/// The state machine's options; ranges and defaults are the schema's.
fn parse_settings(section: &Section<'_>) -> Result<BreakerSettings, ConfigError> {
    let open_ms = section.number_or_default("openMs")?;
    let max_open_ms = section
        .number("maxOpenMs")?
        .unwrap_or(open_ms.max(60_000.0));
    if max_open_ms < open_ms {
        return Err(error(
            &section.path_of("maxOpenMs"),
            format!("must be at least openMs = {open_ms} (got {max_open_ms})"),
        ));
    }
    // Counts are whole numbers within u32 (the schema's range).
    let count = |key: &str| section.number_or_default(key).map(saturating_u32);
    Ok(BreakerSettings {
        failure_threshold: count("failureThreshold")?,
        failure_rate_threshold: section.number_or_default("failureRateThreshold")?,
        rolling_window: duration(section.number_or_default("windowMs")?),
        minimum_calls: count("minimumCalls")?,
        open: duration(open_ms),
        max_open: duration(max_open_ms),
        trial_timeout: duration(section.number_or_default("trialTimeoutMs")?),
    })
}

fn duration(ms: f64) -> Duration {
    Duration::from_secs_f64(ms / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::build::{n as num, obj as object};

    fn rule_of(options: RawValue) -> String {
        parse_circuit_breaker(&options).unwrap_err().to_string()
    }

    #[test]
    fn defaults_when_nothing_is_given() {
        let config = parse_circuit_breaker(&RawValue::Undefined).unwrap();
        assert_eq!(config.name, None);
        assert_eq!(config.timeout_ms, 0.0);
        let s = config.settings;
        assert_eq!(
            (
                s.failure_threshold,
                s.failure_rate_threshold,
                s.minimum_calls
            ),
            (5, 0.5, 20)
        );
        assert_eq!(
            (s.rolling_window, s.open, s.max_open, s.trial_timeout),
            (
                Duration::from_secs(10),
                Duration::from_secs(5),
                Duration::from_secs(60),
                Duration::from_secs(10)
            )
        );
    }

    #[test]
    fn zero_is_allowed_where_it_means_off() {
        let config = parse_circuit_breaker(&object(&[
            ("failureThreshold", num(0.0)),
            ("failureRateThreshold", num(0.0)),
            ("minimumCalls", num(0.0)),
            ("timeoutMs", num(0.0)),
        ]))
        .unwrap();
        assert_eq!(config.settings.failure_threshold, 0);
        assert_eq!(config.settings.failure_rate_threshold, 0.0);
    }

    #[test]
    fn each_bad_option_is_named_with_its_rule() {
        assert_eq!(
            rule_of(object(&[("failureThreshold", num(1.5))])),
            "failureThreshold: must be a whole number ≥ 0 (got 1.5)"
        );
        assert_eq!(
            rule_of(object(&[("failureRateThreshold", num(1.1))])),
            "failureRateThreshold: must be between 0 and 1 (got 1.1)"
        );
        assert!(rule_of(object(&[("openMs", num(0.0))]))
            .starts_with("openMs: must be a number of milliseconds greater than 0"));
        assert!(rule_of(object(&[("windowMs", num(f64::INFINITY))])).contains("(got Infinity)"));
        assert_eq!(
            rule_of(object(&[
                ("openMs", num(9000.0)),
                ("maxOpenMs", num(8000.0))
            ])),
            "maxOpenMs: must be at least openMs = 9000 (got 8000)"
        );
        assert!(rule_of(object(&[("timeoutMs", num(-1.0))]))
            .starts_with("timeoutMs: must be a number of milliseconds ≥ 0"));
        assert_eq!(
            rule_of(object(&[("name", RawValue::String(String::new()))])),
            "name: must not be empty"
        );
        assert_eq!(
            rule_of(object(&[("isFailure", RawValue::Bool(true))])),
            "isFailure: must be a function (got boolean)"
        );
        assert_eq!(
            rule_of(object(&[("fallback", RawValue::Number(1.0))])),
            "fallback: must be a function (got number)"
        );
        assert!(rule_of(object(&[("maxConcurrent", num(-1.0))]))
            .starts_with("maxConcurrent: must be a whole number ≥ 0"));
        assert!(rule_of(object(&[("maxConcurrent", num(2.5))]))
            .starts_with("maxConcurrent: must be a whole number ≥ 0"));
        for bad in ["billing api", "tenant=\"x\"", "a\nb", "ünicode", "{x}"] {
            assert!(
                rule_of(object(&[("name", RawValue::String(bad.into()))]))
                    .starts_with("name: must use only letters, digits and _ . : -"),
                "{bad:?}"
            );
        }
        let ok = parse_circuit_breaker(&object(&[(
            "name",
            RawValue::String("billing-v2.api:eu_1".into()),
        )]))
        .unwrap();
        assert_eq!(ok.name.as_deref(), Some("billing-v2.api:eu_1"));
        assert!(rule_of(object(&[("treshold", num(1.0))])).starts_with("treshold: unknown option"));
    }

    #[test]
    fn timeout_beyond_a_node_timer_and_long_names_are_refused() {
        // Node fires a timer of more than 2^31 - 1 ms after 1 ms: every call would time out.
        assert!(rule_of(object(&[("timeoutMs", num(MAX_TIMER_MS + 1.0))]))
            .starts_with("timeoutMs: must be at most 2147483647 ms"));
        let config = parse_circuit_breaker(&object(&[("timeoutMs", num(MAX_TIMER_MS))])).unwrap();
        assert_eq!(config.timeout_ms, MAX_TIMER_MS);
        let long = RawValue::String("n".repeat(crate::options::limits::BREAKER_NAME_BYTES + 1));
        assert!(rule_of(object(&[("name", long)])).starts_with("name: must be at most 128 bytes"));
    }

    #[test]
    fn a_large_open_period_raises_the_default_cap() {
        let config = parse_circuit_breaker(&object(&[("openMs", num(120_000.0))])).unwrap();
        assert_eq!(config.settings.max_open, Duration::from_secs(120));
    }
}
