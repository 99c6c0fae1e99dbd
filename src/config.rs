//! Options → a validated [`Config`], parsed once at construction.
//!
//! The binding layer turns the JavaScript options object into a [`RawValue`] tree; everything
//! here is plain Rust, so every rule is a unit test. Every error names the option path and the
//! rule it breaks, and never contains the credential (README, Limits).

use std::fmt;
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use reqwest::Url;

use crate::breaker_options::parse_refresh_breaker;
use crate::fleet_options::{parse_fleet, FleetConfig, FLEET_KEYS};
use crate::metrics::Format;
use crate::rules::breaker::BreakerSettings;
use crate::rules::lease::FleetBudget;
use crate::rules::window::{compute_budget, compute_cadence, BudgetInput, CadenceInput};
use crate::rules::{Budget, BudgetSource, CadencePlan};
use crate::secret::Secret;

/// A JavaScript value, as far as option parsing needs to see it.
#[derive(Debug, Clone, PartialEq)]
pub enum RawValue {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<RawValue>),
    Object(Vec<(String, RawValue)>),
    Function,
    /// Symbols, bigints, ...: named by their `typeof`.
    Other(&'static str),
}

impl RawValue {
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            RawValue::Undefined => "undefined",
            RawValue::Null => "null",
            RawValue::Bool(_) => "boolean",
            RawValue::Number(_) => "number",
            RawValue::String(_) => "string",
            RawValue::Array(_) => "array",
            RawValue::Object(_) => "object",
            RawValue::Function => "function",
            RawValue::Other(name) => name,
        }
    }
}

/// A configuration error: `path: rule`. Permanent: the same options always fail the same way.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub path: String,
    pub rule: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.rule)
    }
}

impl std::error::Error for ConfigError {}

pub(crate) fn error(path: &str, rule: impl Into<String>) -> ConfigError {
    ConfigError {
        path: path.to_owned(),
        rule: rule.into(),
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    pub budget: BudgetSource,
    pub cadence: CadencePlan,
    /// `budget.fleet`: the grant is leased from Redis when given.
    pub fleet: Option<FleetConfig>,
    pub authority: AuthorityConfig,
    /// `refresh.breaker`: refreshes go through a circuit breaker when given.
    pub breaker: Option<BreakerSettings>,
}

#[derive(Debug, Clone)]
pub enum AuthorityConfig {
    Http(Box<HttpAuthorityConfig>),
    /// `authority.inspect`: the binding keeps the function itself.
    Inspect,
}

#[derive(Debug, Clone)]
pub struct HttpAuthorityConfig {
    pub url: Url,
    pub header: HeaderName,
    /// `<scheme> <credential>`, marked sensitive.
    pub header_value: Secret<HeaderValue>,
    pub required_capabilities: Vec<String>,
    /// RFC 6901 JSON Pointer into the answer.
    pub capabilities_pointer: String,
    /// Extra trusted root certificates, PEM (already checked to parse).
    pub ca_pem: Option<String>,
}

/// A view of one options object that remembers its path and which keys it knows.
pub(crate) struct Section<'a> {
    /// "" for the options object itself.
    path: String,
    members: &'a [(String, RawValue)],
}

impl<'a> Section<'a> {
    pub(crate) fn new(
        path: &str,
        value: &'a RawValue,
        known: &[&str],
    ) -> Result<Self, ConfigError> {
        let RawValue::Object(members) = value else {
            let shown = if path.is_empty() { "options" } else { path };
            return Err(error(
                shown,
                format!("must be an object (got {})", value.type_name()),
            ));
        };
        if let Some((key, _)) = members
            .iter()
            .find(|(key, _)| !known.contains(&key.as_str()))
        {
            return Err(error(
                &join(path, key),
                format!("unknown option (known here: {})", known.join(", ")),
            ));
        }
        Ok(Section {
            path: path.to_owned(),
            members,
        })
    }

    pub(crate) fn get(&self, key: &str) -> &'a RawValue {
        self.members
            .iter()
            .find(|(k, _)| k == key)
            .map_or(&RawValue::Undefined, |(_, v)| v)
    }

    pub(crate) fn has(&self, key: &str) -> bool {
        !matches!(self.get(key), RawValue::Undefined)
    }

    pub(crate) fn path_of(&self, key: &str) -> String {
        join(&self.path, key)
    }

    /// An optional member of one type: `None` when absent, an error naming `expected` otherwise.
    fn typed<T>(
        &self,
        key: &str,
        expected: &str,
        extract: impl FnOnce(&'a RawValue) -> Option<T>,
    ) -> Result<Option<T>, ConfigError> {
        let value = self.get(key);
        if matches!(value, RawValue::Undefined) {
            return Ok(None);
        }
        extract(value).map(Some).ok_or_else(|| {
            let rule = format!("must be {expected} (got {})", value.type_name());
            error(&self.path_of(key), rule)
        })
    }

    pub(crate) fn number(&self, key: &str) -> Result<Option<f64>, ConfigError> {
        self.typed(key, "a number", |v| match v {
            RawValue::Number(n) => Some(*n),
            _ => None,
        })
    }

    pub(crate) fn string(&self, key: &str) -> Result<Option<&'a str>, ConfigError> {
        self.typed(key, "a string", |v| match v {
            RawValue::String(s) => Some(s.as_str()),
            _ => None,
        })
    }

    /// A string of at most `max_bytes`. The message never echoes the value (it may be secret).
    pub(crate) fn bounded_string(
        &self,
        key: &str,
        max_bytes: usize,
    ) -> Result<Option<&'a str>, ConfigError> {
        let value = self.string(key)?;
        check_length(&self.path_of(key), value.unwrap_or(""), max_bytes)?;
        Ok(value)
    }

    fn boolean(&self, key: &str) -> Result<Option<bool>, ConfigError> {
        self.typed(key, "a boolean", |v| match v {
            RawValue::Bool(b) => Some(*b),
            _ => None,
        })
    }

    pub(crate) fn section(
        &self,
        key: &str,
        known: &[&str],
    ) -> Result<Option<Section<'a>>, ConfigError> {
        match self.get(key) {
            RawValue::Undefined => Ok(None),
            value => Ok(Some(Section::new(&self.path_of(key), value, known)?)),
        }
    }

    /// At most one of two mutually exclusive options.
    fn exclusive(&self, a: &str, b: &str) -> Result<(), ConfigError> {
        if self.has(a) && self.has(b) {
            return Err(error(
                &self.path_of(b),
                format!(
                    "give either {} or {}, not both",
                    self.path_of(a),
                    self.path_of(b)
                ),
            ));
        }
        Ok(())
    }
}

/// At most `max_bytes` of UTF-8; the message gives the length, never the text.
pub(crate) fn check_length(path: &str, text: &str, max_bytes: usize) -> Result<(), ConfigError> {
    if text.len() > max_bytes {
        return Err(error(
            path,
            format!(
                "must be at most {max_bytes} bytes long (got {})",
                text.len()
            ),
        ));
    }
    Ok(())
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

const TOP_KEYS: &[&str] = &["budget", "refresh", "authority", "logger"];
const BUDGET_KEYS: &[&str] = &[
    "unverifiedUnits",
    "maxUnitsPerSecond",
    "nodes",
    "share",
    "maxStaleSeconds",
    "fleet",
];
const REFRESH_KEYS: &[&str] = &["minIntervalMs", "maxIntervalMs", "timeoutMs", "breaker"];
const AUTHORITY_KEYS: &[&str] = &[
    "url",
    "credential",
    "credentialEnv",
    "requiredCapability",
    "requiredCapabilities",
    "capabilitiesPointer",
    "header",
    "scheme",
    "allowInsecureHttp",
    "caPem",
    "inspect",
];
const INSPECT_KEYS: &[&str] = &["inspect"];

/// Upper bounds on strings and lists, in bytes or items: generous for real use, small enough
/// that no option can blow up memory, metrics or a request line.
pub mod limits {
    pub const URL_BYTES: usize = 2048;
    pub const CREDENTIAL_BYTES: usize = 4096;
    pub const ENV_NAME_BYTES: usize = 256;
    pub const CAPABILITY_BYTES: usize = 256;
    pub const CAPABILITIES: usize = 64;
    pub const POINTER_BYTES: usize = 1024;
    pub const HEADER_BYTES: usize = 64;
    pub const SCHEME_BYTES: usize = 64;
    pub const CA_PEM_BYTES: usize = 1024 * 1024;
}

/// Request headers that a credential must never ride on: connection-level and framing headers
/// (proxies rewrite or drop them, and a wrong value breaks every request) and the headers the
/// adapter sets itself.
const FORBIDDEN_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "upgrade",
    "expect",
    "accept",
    "accept-encoding",
    "user-agent",
];

/// Parses and validates the whole options object. `env` looks up environment variables
/// (`authority.credentialEnv`); tests pass a fake.
pub fn parse_options(
    options: &RawValue,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, ConfigError> {
    let top = Section::new("", options, TOP_KEYS)?;
    match top.get("logger") {
        RawValue::Undefined | RawValue::Object(_) => {}
        other => {
            let rule = format!(
                "must be an object with info, warn and error methods (got {})",
                other.type_name()
            );
            return Err(error("logger", rule));
        }
    }
    let (budget, fleet) = parse_budget(&top, env)?;
    let cadence = parse_cadence(&top, &budget)?;
    let authority = parse_authority(&top, env)?;
    let breaker = match top.section("refresh", REFRESH_KEYS)? {
        Some(refresh) => parse_refresh_breaker(&refresh)?,
        None => None,
    };
    Ok(Config {
        budget,
        cadence,
        fleet,
        authority,
        breaker,
    })
}

/// The longest `whenReady` timeout, ms: the longest Node.js timer (2³¹ − 1 ms, ~24.8 days).
pub const MAX_WHEN_READY_TIMEOUT_MS: f64 = 2_147_483_647.0;

/// `whenReady(options)`: `undefined` or `{ timeoutMs }` with 0 ≤ timeoutMs ≤ 2³¹ − 1;
/// `None` waits without a timeout.
pub fn parse_when_ready(options: &RawValue) -> Result<Option<Duration>, ConfigError> {
    if matches!(options, RawValue::Undefined) {
        return Ok(None);
    }
    let section = Section::new("whenReady", options, &["timeoutMs"])?;
    let Some(ms) = section.number("timeoutMs")? else {
        return Ok(None);
    };
    if !(ms.is_finite() && (0.0..=MAX_WHEN_READY_TIMEOUT_MS).contains(&ms)) {
        return Err(error(
            &section.path_of("timeoutMs"),
            format!(
                "must be a number of milliseconds from 0 to {MAX_WHEN_READY_TIMEOUT_MS} (got {})",
                crate::rules::JsNumber(ms)
            ),
        ));
    }
    // In range: finite, ≥ 0 and at most ~24.8 days.
    Ok(Some(Duration::from_secs_f64(ms / 1000.0)))
}

/// `metrics(options)`: nothing (the text format 0.0.4) or `{ format: 'text' | 'openmetrics' }`.
pub fn parse_metrics_options(options: &RawValue) -> Result<Format, ConfigError> {
    if matches!(options, RawValue::Undefined) {
        return Ok(Format::Text);
    }
    let section = Section::new("metrics", options, &["format"])?;
    let Some(name) = section.string("format")? else {
        return Ok(Format::Text);
    };
    Format::from_name(name).ok_or_else(|| {
        error(
            &section.path_of("format"),
            format!(
                "must be one of {}",
                Format::NAMES.map(|n| format!("'{n}'")).join(", ")
            ),
        )
    })
}

/// Only the `budget` options (for the `window` calculator): the same rules, the same errors.
/// A fleet's node budget changes at run time, so the calculator refuses `fleet`.
pub fn parse_budget_options(budget: &RawValue) -> Result<Budget, ConfigError> {
    let top = RawValue::Object(vec![("budget".to_owned(), budget.clone())]);
    match parse_budget(&Section::new("", &top, &["budget"])?, &|_| None)? {
        (BudgetSource::Static(budget), _) => Ok(budget),
        (BudgetSource::Fleet(_), _) => Err(error(
            "budget.fleet",
            "the calculator works on fixed budgets (nodes or share); a fleet node's budget is \
             its floor plus a grant that changes while it runs",
        )),
    }
}

fn parse_budget(
    top: &Section<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(BudgetSource, Option<FleetConfig>), ConfigError> {
    let budget = top.section("budget", BUDGET_KEYS)?.ok_or_else(|| {
        error(
            "budget",
            "is required (unverifiedUnits and maxUnitsPerSecond)",
        )
    })?;
    let required = |key: &str| -> Result<f64, ConfigError> {
        budget
            .number(key)?
            .ok_or_else(|| error(&budget.path_of(key), "is required"))
    };
    let input = BudgetInput {
        unverified_units: required("unverifiedUnits")?,
        max_units_per_second: required("maxUnitsPerSecond")?,
        nodes: budget.number("nodes")?,
        share: budget.number("share")?,
        max_stale_seconds: budget.number("maxStaleSeconds")?,
    };
    let Some(fleet) = budget.section("fleet", FLEET_KEYS)? else {
        let budget = compute_budget(&input).map_err(|e| error(e.option(), e.rule()))?;
        return Ok((BudgetSource::Static(budget), None));
    };
    for key in ["nodes", "share"] {
        if budget.has(key) {
            return Err(error(
                &budget.path_of(key),
                "cannot be combined with budget.fleet: the fleet leases each node's share",
            ));
        }
    }
    let checked =
        |input: &BudgetInput| compute_budget(input).map_err(|e| error(e.option(), e.rule()));
    // b and r first (their own errors), then the fleet options.
    checked(&input)?;
    let fleet = parse_fleet(
        &fleet,
        input.unverified_units,
        input.max_units_per_second,
        input.max_stale_seconds,
        env,
    )?;
    // The largest node budget is floor + pool: maxStaleSeconds must not pass its window.
    let shape = &fleet.shape;
    let largest_share = (shape.floor_units() + shape.pool_units()) / shape.unverified_units;
    checked(&BudgetInput {
        share: Some(largest_share.min(1.0)),
        ..input
    })?;
    Ok((
        BudgetSource::Fleet(FleetBudget::new(fleet.shape)),
        Some(fleet),
    ))
}

/// Explicit refresh options are checked against the smallest window the node can run with (a
/// fleet node's floor, or the equal split's without a floor); the defaults scale with the window.
fn parse_cadence(top: &Section<'_>, budget: &BudgetSource) -> Result<CadencePlan, ConfigError> {
    let input = match top.section("refresh", REFRESH_KEYS)? {
        None => CadenceInput::default(),
        Some(refresh) => CadenceInput {
            min_interval_ms: refresh.number("minIntervalMs")?,
            max_interval_ms: refresh.number("maxIntervalMs")?,
            timeout_ms: refresh.number("timeoutMs")?,
        },
    };
    let smallest_window = match budget {
        BudgetSource::Static(budget) => budget.stale_window,
        BudgetSource::Fleet(fleet) => fleet.shape.smallest_window(),
    };
    let cadence =
        compute_cadence(&input, smallest_window).map_err(|e| error(e.option(), e.rule()))?;
    Ok(CadencePlan::from_input(&input, cadence))
}

fn parse_authority(
    top: &Section<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<AuthorityConfig, ConfigError> {
    let raw = top.get("authority");
    if matches!(raw, RawValue::Undefined) {
        return Err(error(
            "authority",
            "is required: { url, credential, requiredCapability } or { inspect }",
        ));
    }
    let authority = Section::new("authority", raw, AUTHORITY_KEYS)?;
    if authority.has("inspect") {
        if let Some((key, _)) = authority
            .members
            .iter()
            .find(|(k, v)| k != "inspect" && !matches!(v, RawValue::Undefined))
        {
            return Err(error(
                &authority.path_of(key),
                "cannot be combined with authority.inspect",
            ));
        }
        Section::new("authority", raw, INSPECT_KEYS)?;
        return match authority.get("inspect") {
            RawValue::Function => Ok(AuthorityConfig::Inspect),
            other => Err(error(
                "authority.inspect",
                format!("must be a function (got {})", other.type_name()),
            )),
        };
    }
    parse_http_authority(&authority, env).map(|http| AuthorityConfig::Http(Box::new(http)))
}

fn parse_http_authority(
    authority: &Section<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<HttpAuthorityConfig, ConfigError> {
    let allow_insecure = authority.boolean("allowInsecureHttp")?.unwrap_or(false);
    let url = parse_url(
        authority.bounded_string("url", limits::URL_BYTES)?,
        allow_insecure,
    )?;
    let credential = parse_credential(authority, env)?;
    let required_capabilities = parse_capabilities(authority)?;
    let capabilities_pointer = authority
        .bounded_string("capabilitiesPointer", limits::POINTER_BYTES)?
        .unwrap_or("/capabilities");
    check_json_pointer(capabilities_pointer)?;
    let header = parse_header_name(
        authority
            .bounded_string("header", limits::HEADER_BYTES)?
            .unwrap_or("authorization"),
    )?;
    let scheme = authority
        .bounded_string("scheme", limits::SCHEME_BYTES)?
        .unwrap_or("Bearer");
    if !scheme.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(error(
            "authority.scheme",
            "must be visible ASCII characters (no whitespace, control characters or non-ASCII)",
        ));
    }
    let value = if scheme.is_empty() {
        credential.expose().clone()
    } else {
        format!("{scheme} {}", credential.expose())
    };
    // Both parts are visible ASCII (checked above and in `parse_credential`), so this cannot
    // fail; the error is kept for safety and never shows the value.
    let mut header_value = HeaderValue::from_str(&value).map_err(|_| {
        error(
            "authority.credential",
            "must be visible ASCII characters to fit in an HTTP header",
        )
    })?;
    header_value.set_sensitive(true);
    let ca_pem = authority
        .bounded_string("caPem", limits::CA_PEM_BYTES)?
        .map(str::to_owned);
    if let Some(pem) = &ca_pem {
        check_ca_pem(pem)?;
    }
    Ok(HttpAuthorityConfig {
        url,
        header,
        header_value: Secret::new(header_value),
        required_capabilities,
        capabilities_pointer: capabilities_pointer.to_owned(),
        ca_pem,
    })
}

/// A token (RFC 9110) that is not a connection-level, framing or adapter-owned header.
fn parse_header_name(name: &str) -> Result<HeaderName, ConfigError> {
    let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
        error(
            "authority.header",
            "must be a valid HTTP header name (letters, digits and !#$%&'*+-.^_`|~)",
        )
    })?;
    if FORBIDDEN_HEADERS.contains(&header.as_str()) {
        return Err(error(
            "authority.header",
            format!(
                "must not be {}: connection, framing and adapter-owned headers \
                 ({}) cannot carry the credential",
                header.as_str(),
                FORBIDDEN_HEADERS.join(", ")
            ),
        ));
    }
    Ok(header)
}

fn parse_url(url: Option<&str>, allow_insecure: bool) -> Result<Url, ConfigError> {
    let url =
        url.ok_or_else(|| error("authority.url", "is required (or give authority.inspect)"))?;
    // Never echo the URL: it may carry a key in its query string.
    let parsed = Url::parse(url)
        .map_err(|e| error("authority.url", format!("must be an absolute URL ({e})")))?;
    // A user or password in the URL would go out as a second authorization header, ahead of
    // the credential's.
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(error(
            "authority.url",
            "must not contain a user name or password (user:password@); give the credential \
             as authority.credential or authority.credentialEnv",
        ));
    }
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if allow_insecure => Ok(parsed),
        "http" => Err(error(
            "authority.url",
            "must use https (plain http only with authority.allowInsecureHttp: true)",
        )),
        other => Err(error(
            "authority.url",
            format!("must use https, not {other}:"),
        )),
    }
}

fn parse_credential(
    authority: &Section<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Secret<String>, ConfigError> {
    authority.exclusive("credential", "credentialEnv")?;
    if let Some(credential) = authority.bounded_string("credential", limits::CREDENTIAL_BYTES)? {
        return check_credential("authority.credential", credential);
    }
    let Some(name) = authority.bounded_string("credentialEnv", limits::ENV_NAME_BYTES)? else {
        return Err(error(
            "authority.credential",
            "is required (give authority.credential or authority.credentialEnv)",
        ));
    };
    // The name is never echoed: a credential passed here by mistake
    // (`credentialEnv: process.env.KEY`) would otherwise be printed.
    if !is_env_name(name) {
        return Err(error(
            "authority.credentialEnv",
            "must be the name of an environment variable (letters, digits and _, not starting \
             with a digit), not its value",
        ));
    }
    match env(name) {
        Some(value) if !value.is_empty() => {
            check_length("authority.credentialEnv", &value, limits::CREDENTIAL_BYTES)?;
            check_credential("authority.credentialEnv", &value)
        }
        Some(_) => Err(error(
            "authority.credentialEnv",
            "the environment variable it names is empty",
        )),
        None => Err(error(
            "authority.credentialEnv",
            "the environment variable it names is not set",
        )),
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*`: what a shell accepts as a variable name.
pub(crate) fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// A credential is sent as a header value: non-empty visible ASCII (`!` to `~`).
fn check_credential(path: &str, credential: &str) -> Result<Secret<String>, ConfigError> {
    if credential.is_empty() {
        return Err(error(path, "must not be empty"));
    }
    if !credential.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(error(
            path,
            "must be visible ASCII characters (! to ~: no spaces, line breaks, control \
             characters or non-ASCII letters) to fit in an HTTP header",
        ));
    }
    Ok(Secret::new(credential.to_owned()))
}

fn parse_capabilities(authority: &Section<'_>) -> Result<Vec<String>, ConfigError> {
    authority.exclusive("requiredCapability", "requiredCapabilities")?;
    let check = |path: &str, name: &str| -> Result<String, ConfigError> {
        check_length(path, name, limits::CAPABILITY_BYTES)?;
        if name.is_empty() {
            Err(error(path, "must not be an empty string"))
        } else {
            Ok(name.to_owned())
        }
    };
    if let Some(name) = authority.string("requiredCapability")? {
        return Ok(vec![check("authority.requiredCapability", name)?]);
    }
    match authority.get("requiredCapabilities") {
        RawValue::Undefined => Err(error(
            "authority.requiredCapability",
            "is required (give authority.requiredCapability or authority.requiredCapabilities)",
        )),
        RawValue::Array(items) if items.is_empty() => Err(error(
            "authority.requiredCapabilities",
            "must list at least one capability",
        )),
        RawValue::Array(items) if items.len() > limits::CAPABILITIES => Err(error(
            "authority.requiredCapabilities",
            format!(
                "must list at most {} capabilities (got {})",
                limits::CAPABILITIES,
                items.len()
            ),
        )),
        RawValue::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                RawValue::String(name) => {
                    check(&format!("authority.requiredCapabilities[{i}]"), name)
                }
                other => Err(error(
                    &format!("authority.requiredCapabilities[{i}]"),
                    format!("must be a string (got {})", other.type_name()),
                )),
            })
            .collect(),
        other => Err(error(
            "authority.requiredCapabilities",
            format!("must be an array of strings (got {})", other.type_name()),
        )),
    }
}

/// RFC 6901: empty, or `/`-separated tokens in which `~` is only followed by `0` or `1`.
fn check_json_pointer(pointer: &str) -> Result<(), ConfigError> {
    let bad_escape = pointer
        .split('~')
        .skip(1)
        .any(|rest| !rest.starts_with(['0', '1']));
    if (!pointer.is_empty() && !pointer.starts_with('/')) || bad_escape {
        return Err(error(
            "authority.capabilitiesPointer",
            "must be a JSON Pointer (RFC 6901): empty or starting with '/', with '~' only as ~0 or ~1",
        ));
    }
    Ok(())
}

fn check_ca_pem(pem: &str) -> Result<(), ConfigError> {
    match reqwest::Certificate::from_pem_bundle(pem.as_bytes()) {
        Ok(certs) if !certs.is_empty() => Ok(()),
        _ => Err(error(
            "authority.caPem",
            "must hold at least one PEM certificate (-----BEGIN CERTIFICATE-----)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(members: &[(&str, RawValue)]) -> RawValue {
        RawValue::Object(
            members
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    fn s(text: &str) -> RawValue {
        RawValue::String(text.to_owned())
    }

    fn n(value: f64) -> RawValue {
        RawValue::Number(value)
    }

    const SECRET: &str = "sk_live_unit_test_secret";

    fn http_options(authority: &[(&str, RawValue)]) -> RawValue {
        let mut members = vec![
            ("url", s("https://billing.example.com/v1/account")),
            ("credential", s(SECRET)),
            ("requiredCapability", s("meter")),
        ];
        for (key, value) in authority {
            members.retain(|(k, _)| k != key);
            if *value != RawValue::Undefined {
                members.push((key, value.clone()));
            }
        }
        obj(&[
            (
                "budget",
                obj(&[
                    ("unverifiedUnits", n(200.0)),
                    ("maxUnitsPerSecond", n(20.0)),
                    ("nodes", n(2.0)),
                ]),
            ),
            ("authority", obj(&members)),
        ])
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn parse_error(options: &RawValue) -> ConfigError {
        let err = parse_options(options, &no_env).unwrap_err();
        assert!(!err.to_string().contains(SECRET), "{err}");
        err
    }

    #[test]
    fn seed_options_parse_with_defaults() {
        let config = parse_options(&http_options(&[]), &no_env).unwrap();
        assert_eq!(config.budget.node_budget_at(Duration::ZERO), 100.0);
        assert_eq!(
            config
                .cadence
                .at(config.budget.stale_window_at(Duration::ZERO))
                .timeout,
            std::time::Duration::from_secs(2)
        );
        let AuthorityConfig::Http(http) = config.authority else {
            panic!("http expected")
        };
        assert_eq!(http.capabilities_pointer, "/capabilities");
        assert_eq!(http.header.as_str(), "authorization");
        assert_eq!(
            http.header_value.expose().to_str().unwrap(),
            format!("Bearer {SECRET}")
        );
        assert!(http.header_value.expose().is_sensitive());
    }

    #[test]
    fn bad_options_name_their_path() {
        let cases = [
            (
                http_options(&[("url", s("http://billing.example.com"))]),
                "authority.url",
            ),
            (http_options(&[("url", s("not a url"))]), "authority.url"),
            (
                http_options(&[("credential", s(""))]),
                "authority.credential",
            ),
            (
                http_options(&[("credentialEnv", s("X"))]),
                "authority.credentialEnv",
            ),
            (
                http_options(&[("requiredCapabilities", RawValue::Array(vec![]))]),
                "authority.requiredCapabilities",
            ),
            (
                http_options(&[
                    ("requiredCapability", RawValue::Undefined),
                    ("requiredCapabilities", RawValue::Array(vec![n(1.0)])),
                ]),
                "authority.requiredCapabilities[0]",
            ),
            (
                http_options(&[("capabilitiesPointer", s("capabilities"))]),
                "authority.capabilitiesPointer",
            ),
            (
                http_options(&[("capabilitiesPointer", s("/a~2"))]),
                "authority.capabilitiesPointer",
            ),
            (
                http_options(&[("header", s("bad header"))]),
                "authority.header",
            ),
            (http_options(&[("caPem", s("not pem"))]), "authority.caPem"),
            (
                http_options(&[("inspect", RawValue::Function)]),
                "authority.url",
            ),
            (http_options(&[("typo", n(1.0))]), "authority.typo"),
            (
                http_options(&[("credential", s("line\nbreak"))]),
                "authority.credential",
            ),
            (obj(&[("budget", n(1.0))]), "budget"),
            (RawValue::Null, "options"),
        ];
        for (options, path) in cases {
            assert_eq!(parse_error(&options).path, path, "{options:?}");
        }
    }

    #[test]
    fn credential_env_is_read_through_the_lookup() {
        let options = http_options(&[
            ("credential", RawValue::Undefined),
            ("credentialEnv", s("BILLING_KEY")),
        ]);
        let env = |name: &str| (name == "BILLING_KEY").then(|| SECRET.to_owned());
        assert!(parse_options(&options, &env).is_ok());
        let empty = |_: &str| Some(String::new());
        assert_eq!(
            parse_options(&options, &empty).unwrap_err().path,
            "authority.credentialEnv"
        );
    }

    #[test]
    fn inspect_alone_is_accepted() {
        let options = obj(&[
            (
                "budget",
                obj(&[
                    ("unverifiedUnits", n(100.0)),
                    ("maxUnitsPerSecond", n(10.0)),
                ]),
            ),
            ("authority", obj(&[("inspect", RawValue::Function)])),
        ]);
        assert!(matches!(
            parse_options(&options, &no_env).unwrap().authority,
            AuthorityConfig::Inspect
        ));
    }

    #[test]
    fn the_credential_never_rides_on_a_connection_or_framing_header() {
        for header in [
            "host",
            "Host",
            "content-length",
            "transfer-encoding",
            "connection",
            "te",
            "upgrade",
            "accept",
        ] {
            let err = parse_error(&http_options(&[("header", s(header))]));
            assert_eq!(err.path, "authority.header", "{header}");
            assert!(err.rule.contains("cannot carry the credential"), "{err}");
        }
        for header in ["x-api-key", "authorization", "proxy-authorization"] {
            assert!(parse_options(&http_options(&[("header", s(header))]), &no_env).is_ok());
        }
    }

    #[test]
    fn userinfo_in_the_url_is_refused_without_being_echoed() {
        let err = parse_error(&http_options(&[(
            "url",
            s("https://alice:hunter2-pw@billing.example.com/v1"),
        )]));
        assert_eq!(err.path, "authority.url");
        assert!(!err.to_string().contains("hunter2-pw"), "{err}");
        assert!(!err.to_string().contains("alice"), "{err}");
        let user_only = parse_error(&http_options(&[(
            "url",
            s("https://alice@billing.example.com/"),
        )]));
        assert_eq!(user_only.path, "authority.url");
    }

    #[test]
    fn a_credential_must_be_visible_ascii_as_its_message_says() {
        for bad in ["clé-secrète", "with space", "tab\there", "nul\0"] {
            let err = parse_error(&http_options(&[("credential", s(bad))]));
            assert_eq!(err.path, "authority.credential", "{bad:?}");
            assert!(err.rule.contains("visible ASCII"), "{err}");
            assert!(!err.to_string().contains(bad), "{err}");
        }
        let env = |_: &str| Some("naïve".to_owned());
        let options = http_options(&[
            ("credential", RawValue::Undefined),
            ("credentialEnv", s("BILLING_KEY")),
        ]);
        assert_eq!(
            parse_options(&options, &env).unwrap_err().path,
            "authority.credentialEnv"
        );
    }

    #[test]
    fn a_value_given_as_credential_env_is_never_echoed() {
        for value in ["sk-live-51H8aBc", "sk_live_51H8aBc", "a b", ""] {
            let options = http_options(&[
                ("credential", RawValue::Undefined),
                ("credentialEnv", s(value)),
            ]);
            let err = parse_options(&options, &no_env).unwrap_err();
            assert_eq!(err.path, "authority.credentialEnv", "{value:?}");
            if !value.is_empty() {
                assert!(!err.to_string().contains(value), "{err}");
            }
        }
    }

    #[test]
    fn strings_and_lists_have_a_maximum() {
        let long = "m".repeat(limits::CAPABILITY_BYTES + 1);
        let err = parse_error(&http_options(&[("requiredCapability", s(&long))]));
        assert_eq!(err.path, "authority.requiredCapability");
        assert!(err.rule.contains("at most 256 bytes"), "{err}");
        let many = RawValue::Array(vec![s("m"); limits::CAPABILITIES + 1]);
        let err = parse_error(&http_options(&[
            ("requiredCapability", RawValue::Undefined),
            ("requiredCapabilities", many),
        ]));
        assert_eq!(err.path, "authority.requiredCapabilities");
        let cases = [
            (
                "url",
                format!("https://example.com/{}", "a".repeat(limits::URL_BYTES)),
            ),
            ("credential", "k".repeat(limits::CREDENTIAL_BYTES + 1)),
            (
                "capabilitiesPointer",
                format!("/{}", "p".repeat(limits::POINTER_BYTES)),
            ),
            ("header", "h".repeat(limits::HEADER_BYTES + 1)),
            ("scheme", "S".repeat(limits::SCHEME_BYTES + 1)),
        ];
        for (key, value) in cases {
            let err = parse_error(&http_options(&[(key, s(&value))]));
            assert_eq!(err.path, format!("authority.{key}"));
            assert!(err.rule.contains("bytes long"), "{err}");
            assert!(!err.to_string().contains(&value), "echoed {key}");
        }
    }

    #[test]
    fn metrics_takes_nothing_or_a_known_format() {
        assert_eq!(
            parse_metrics_options(&RawValue::Undefined),
            Ok(Format::Text)
        );
        assert_eq!(parse_metrics_options(&obj(&[])), Ok(Format::Text));
        assert_eq!(
            parse_metrics_options(&obj(&[("format", s("openmetrics"))])),
            Ok(Format::OpenMetrics)
        );
        assert_eq!(
            parse_metrics_options(&obj(&[("format", s("text"))])),
            Ok(Format::Text)
        );
        let bad = parse_metrics_options(&obj(&[("format", s("json"))])).unwrap_err();
        assert_eq!(bad.path, "metrics.format");
        let bad = parse_metrics_options(&obj(&[("format", n(1.0))])).unwrap_err();
        assert_eq!(
            bad.to_string(),
            "metrics.format: must be a string (got number)"
        );
        assert_eq!(
            parse_metrics_options(&s("openmetrics")).unwrap_err().path,
            "metrics"
        );
        assert_eq!(
            parse_metrics_options(&RawValue::Null).unwrap_err().path,
            "metrics"
        );
        assert_eq!(
            parse_metrics_options(&obj(&[("fromat", s("text"))]))
                .unwrap_err()
                .path,
            "metrics.fromat"
        );
    }

    #[test]
    fn when_ready_takes_nothing_or_a_bounded_timeout() {
        assert_eq!(parse_when_ready(&RawValue::Undefined), Ok(None));
        assert_eq!(parse_when_ready(&obj(&[])), Ok(None));
        assert_eq!(
            parse_when_ready(&obj(&[("timeoutMs", n(1500.0))])),
            Ok(Some(Duration::from_millis(1500)))
        );
        let cases = [
            (s("x"), "whenReady"),
            (RawValue::Null, "whenReady"),
            (obj(&[("foo", n(1.0))]), "whenReady.foo"),
            (obj(&[("timeoutMs", s("5"))]), "whenReady.timeoutMs"),
            (obj(&[("timeoutMs", n(-1.0))]), "whenReady.timeoutMs"),
            (obj(&[("timeoutMs", n(f64::MAX))]), "whenReady.timeoutMs"),
            (
                obj(&[("timeoutMs", n(MAX_WHEN_READY_TIMEOUT_MS + 1.0))]),
                "whenReady.timeoutMs",
            ),
        ];
        for (options, path) in cases {
            assert_eq!(
                parse_when_ready(&options).unwrap_err().path,
                path,
                "{options:?}"
            );
        }
    }

    mod never_panics {
        use super::*;
        use proptest::prelude::*;

        /// Numbers at and around every edge the parser has: zero, signs, subnormals, the
        /// 2^31 timer limit, the 7-day window, the largest finite value, NaN and infinities.
        fn edgy_number() -> impl Strategy<Value = f64> {
            prop_oneof![
                prop::sample::select(vec![
                    0.0,
                    -0.0,
                    -1.0,
                    1e-300,
                    1e-9,
                    0.01,
                    0.3,
                    1.0,
                    2.0,
                    20.0,
                    1000.0,
                    604_800.0,
                    2_147_483_647.0,
                    2_147_483_648.0,
                    9_007_199_254_740_991.0,
                    1e19,
                    1e20,
                    f64::MAX,
                    f64::MIN_POSITIVE,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    f64::NAN,
                ]),
                any::<f64>(),
                0.0f64..1e6,
            ]
        }

        fn value() -> impl Strategy<Value = RawValue> {
            prop_oneof![
                6 => edgy_number().prop_map(RawValue::Number),
                1 => Just(RawValue::Undefined),
                1 => Just(RawValue::Null),
                1 => any::<bool>().prop_map(RawValue::Bool),
                1 => "[ -~é\\n]{0,12}".prop_map(RawValue::String),
                1 => Just(RawValue::Function),
                1 => Just(RawValue::Array(vec![])),
            ]
        }

        fn section(keys: &'static [&'static str]) -> impl Strategy<Value = RawValue> {
            prop::collection::vec((prop::sample::select(keys.to_vec()), value()), 0..6).prop_map(
                |members| {
                    RawValue::Object(
                        members
                            .into_iter()
                            .map(|(k, v)| (k.to_owned(), v))
                            .collect(),
                    )
                },
            )
        }

        proptest! {
            /// Any options either parse or give an error naming a path: never a panic, and a
            /// parsed config always has a window and cadence a `Duration` and timers can hold.
            #[test]
            fn any_options_parse_or_fail_with_a_path(
                b in edgy_number(),
                r in edgy_number(),
                budget in section(BUDGET_KEYS),
                refresh in section(REFRESH_KEYS),
                authority in prop_oneof![
                    Just(obj(&[("inspect", RawValue::Function)])),
                    section(AUTHORITY_KEYS),
                ],
            ) {
                // Mostly well-formed around the required numbers, so that many cases parse.
                let RawValue::Object(mut members) = budget else { unreachable!() };
                members.insert(0, ("unverifiedUnits".to_owned(), RawValue::Number(b)));
                members.insert(1, ("maxUnitsPerSecond".to_owned(), RawValue::Number(r)));
                let budget = RawValue::Object(members);
                let options = obj(&[("budget", budget), ("refresh", refresh), ("authority", authority)]);
                match parse_options(&options, &no_env) {
                    Ok(config) => {
                        let window = config.budget.stale_window_at(Duration::ZERO);
                        prop_assert!(window.as_secs_f64() > 0.0 && window.as_secs_f64() <= crate::rules::window::MAX_STALE_WINDOW_SECONDS);
                        let cadence = config.cadence.at(window);
                        prop_assert!(cadence.min_interval >= std::time::Duration::from_millis(20));
                        prop_assert!(cadence.max_interval + cadence.timeout < window);
                    }
                    Err(err) => prop_assert!(!err.path.is_empty(), "{err}"),
                }
            }

            #[test]
            fn any_when_ready_argument_parses_or_fails_with_a_path(arg in prop_oneof![value(), section(&["timeoutMs", "foo"])]) {
                if let Err(err) = parse_when_ready(&arg) {
                    prop_assert!(err.path.starts_with("whenReady"), "{err}");
                }
            }
        }
    }
}
