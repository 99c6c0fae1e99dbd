//! Circuit breaker options → validated settings, for `new CircuitBreaker(options)` and for
//! `refresh.breaker`. Every option documents its unit, its default, and what 0 means.

use std::time::Duration;

use crate::config::{error, ConfigError, RawValue, Section};
use crate::rules::breaker::BreakerSettings;

/// Options of the state machine, shared by both uses.
const SETTINGS_KEYS: &[&str] = &[
    "failureThreshold",
    "failureRateThreshold",
    "windowMs",
    "minimumCalls",
    "openMs",
    "maxOpenMs",
    "trialTimeoutMs",
];

/// `new CircuitBreaker(options)` also takes what the JavaScript wrapper handles.
const WRAPPER_KEYS: &[&str] = &[
    "name",
    "timeoutMs",
    "isFailure",
    "fallback",
    "maxConcurrent",
];

/// Durations longer than a year are refused: they are mistakes (seconds given as ms × 1000).
const MAX_MS: f64 = 365.0 * 24.0 * 3600.0 * 1000.0;

/// `timeoutMs` runs on a Node.js timer, which fires after 1 ms for any delay above 2³¹ − 1 ms.
pub const MAX_TIMER_MS: f64 = 2_147_483_647.0;

/// The longest breaker `name`, bytes: it becomes a metric label.
pub const MAX_NAME_BYTES: usize = 128;

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
    let keys: Vec<&str> = SETTINGS_KEYS.iter().chain(WRAPPER_KEYS).copied().collect();
    let section = Section::new("", options, &keys)?;
    let name = match section.bounded_string("name", MAX_NAME_BYTES)? {
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
    let timeout_ms = milliseconds(&section, "timeoutMs", 0.0, 0.0)?;
    if timeout_ms > MAX_TIMER_MS {
        return Err(error(
            "timeoutMs",
            format!(
                "must be at most {MAX_TIMER_MS} ms (about 24.8 days, the longest Node.js timer) \
                 (got {timeout_ms})"
            ),
        ));
    }
    for key in ["isFailure", "fallback"] {
        match section.get(key) {
            RawValue::Undefined | RawValue::Function => {}
            other => {
                return Err(error(
                    key,
                    format!("must be a function (got {})", other.type_name()),
                ))
            }
        }
    }
    let max_concurrent = match section.number("maxConcurrent")? {
        None => 0,
        Some(n) if n.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&n) => n as u32,
        Some(n) => {
            return Err(error(
                "maxConcurrent",
                format!(
                    "must be a whole number ≥ 0 (0: no limit) (got {})",
                    crate::rules::JsNumber(n)
                ),
            ))
        }
    };
    Ok(CircuitBreakerConfig {
        name,
        timeout_ms,
        max_concurrent,
        settings: parse_settings(&section)?,
    })
}

/// `refresh.breaker`, when given (`true` means every default).
pub(crate) fn parse_refresh_breaker(
    refresh: &Section<'_>,
) -> Result<Option<BreakerSettings>, ConfigError> {
    let path = refresh.path_of("breaker");
    match refresh.get("breaker") {
        RawValue::Undefined | RawValue::Bool(false) => Ok(None),
        RawValue::Bool(true) => parse_settings(&Section::new(
            &path,
            &RawValue::Object(Vec::new()),
            SETTINGS_KEYS,
        )?)
        .map(Some),
        value => parse_settings(&Section::new(&path, value, SETTINGS_KEYS)?).map(Some),
    }
}

fn parse_settings(section: &Section<'_>) -> Result<BreakerSettings, ConfigError> {
    let open_ms = milliseconds(section, "openMs", 5000.0, f64::MIN_POSITIVE)?;
    let max_open_ms = milliseconds(section, "maxOpenMs", open_ms.max(60_000.0), 0.0)?;
    if max_open_ms < open_ms {
        return Err(error(
            &section.path_of("maxOpenMs"),
            format!("must be at least openMs = {open_ms} (got {max_open_ms})"),
        ));
    }
    Ok(BreakerSettings {
        failure_threshold: whole(section, "failureThreshold", 5)?,
        failure_rate_threshold: rate(section, "failureRateThreshold", 0.5)?,
        window: duration(milliseconds(
            section,
            "windowMs",
            10_000.0,
            f64::MIN_POSITIVE,
        )?),
        minimum_calls: whole(section, "minimumCalls", 20)?,
        open: duration(open_ms),
        max_open: duration(max_open_ms),
        trial_timeout: duration(milliseconds(
            section,
            "trialTimeoutMs",
            10_000.0,
            f64::MIN_POSITIVE,
        )?),
    })
}

fn duration(ms: f64) -> Duration {
    Duration::from_secs_f64(ms / 1000.0)
}

/// A number of milliseconds in [`min`, one year]; `min` = `f64::MIN_POSITIVE` means "> 0".
fn milliseconds(
    section: &Section<'_>,
    key: &str,
    default: f64,
    min: f64,
) -> Result<f64, ConfigError> {
    let Some(ms) = section.number(key)? else {
        return Ok(default);
    };
    let lower = if min == f64::MIN_POSITIVE {
        "greater than 0".to_owned()
    } else {
        format!("≥ {min}")
    };
    if !ms.is_finite() || ms < min || ms > MAX_MS {
        return Err(error(
            &section.path_of(key),
            format!(
                "must be a number of milliseconds {lower} and at most one year (got {})",
                crate::rules::JsNumber(ms)
            ),
        ));
    }
    Ok(ms)
}

/// A whole number ≥ 0 (0 turns the rule off, where the option says so).
fn whole(section: &Section<'_>, key: &str, default: u32) -> Result<u32, ConfigError> {
    match section.number(key)? {
        None => Ok(default),
        Some(n) if n.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&n) => Ok(n as u32),
        Some(n) => Err(error(
            &section.path_of(key),
            format!(
                "must be a whole number ≥ 0 (got {})",
                crate::rules::JsNumber(n)
            ),
        )),
    }
}

/// A rate in [0, 1] (0 turns the rule off).
fn rate(section: &Section<'_>, key: &str, default: f64) -> Result<f64, ConfigError> {
    match section.number(key)? {
        None => Ok(default),
        Some(r) if (0.0..=1.0).contains(&r) => Ok(r),
        Some(r) => Err(error(
            &section.path_of(key),
            format!(
                "must be between 0 and 1 (got {})",
                crate::rules::JsNumber(r)
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(members: &[(&str, RawValue)]) -> RawValue {
        RawValue::Object(
            members
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    fn num(n: f64) -> RawValue {
        RawValue::Number(n)
    }

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
            (s.window, s.open, s.max_open, s.trial_timeout),
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
        let long = RawValue::String("n".repeat(MAX_NAME_BYTES + 1));
        assert!(rule_of(object(&[("name", long)])).starts_with("name: must be at most 128 bytes"));
    }

    #[test]
    fn a_large_open_period_raises_the_default_cap() {
        let config = parse_circuit_breaker(&object(&[("openMs", num(120_000.0))])).unwrap();
        assert_eq!(config.settings.max_open, Duration::from_secs(120));
    }
}
