//! Options → a validated [`Config`], parsed once at construction.
//!
//! The binding layer turns the JavaScript options object into a [`RawValue`] tree; everything
//! here is plain Rust, so every rule is a unit test. Every error names the option path and the
//! rule it breaks, and never contains the credential (SPEC §7).

use std::fmt;

use reqwest::header::{HeaderName, HeaderValue};
use reqwest::Url;

use crate::breaker_options::parse_refresh_breaker;
use crate::rules::breaker::BreakerSettings;
use crate::rules::window::{compute_budget, compute_cadence, BudgetInput, CadenceInput};
use crate::rules::{Budget, Cadence};
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
    pub budget: Budget,
    pub cadence: Cadence,
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
    let budget = parse_budget(&top)?;
    let cadence = parse_cadence(&top, &budget)?;
    let authority = parse_authority(&top, env)?;
    let breaker = match top.section("refresh", REFRESH_KEYS)? {
        Some(refresh) => parse_refresh_breaker(&refresh)?,
        None => None,
    };
    Ok(Config {
        budget,
        cadence,
        authority,
        breaker,
    })
}

/// Only the `budget` options (for the `window` calculator): the same rules, the same errors.
pub fn parse_budget_options(budget: &RawValue) -> Result<Budget, ConfigError> {
    let top = RawValue::Object(vec![("budget".to_owned(), budget.clone())]);
    parse_budget(&Section::new("", &top, &["budget"])?)
}

fn parse_budget(top: &Section<'_>) -> Result<Budget, ConfigError> {
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
    compute_budget(&input).map_err(|e| error(e.option(), e.rule()))
}

fn parse_cadence(top: &Section<'_>, budget: &Budget) -> Result<Cadence, ConfigError> {
    let input = match top.section("refresh", REFRESH_KEYS)? {
        None => CadenceInput::default(),
        Some(refresh) => CadenceInput {
            min_interval_ms: refresh.number("minIntervalMs")?,
            max_interval_ms: refresh.number("maxIntervalMs")?,
            timeout_ms: refresh.number("timeoutMs")?,
        },
    };
    compute_cadence(&input, budget.stale_window).map_err(|e| error(e.option(), e.rule()))
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
    let url = parse_url(authority.string("url")?, allow_insecure)?;
    let credential = parse_credential(authority, env)?;
    let required_capabilities = parse_capabilities(authority)?;
    let capabilities_pointer = authority
        .string("capabilitiesPointer")?
        .unwrap_or("/capabilities");
    check_json_pointer(capabilities_pointer)?;
    let header = authority.string("header")?.unwrap_or("authorization");
    let header = HeaderName::from_bytes(header.as_bytes()).map_err(|_| {
        error(
            "authority.header",
            "must be a valid HTTP header name (letters, digits and !#$%&'*+-.^_`|~)",
        )
    })?;
    let scheme = authority.string("scheme")?.unwrap_or("Bearer");
    if scheme.contains(|c: char| c.is_whitespace() || c.is_control()) {
        return Err(error(
            "authority.scheme",
            "must not contain whitespace or control characters",
        ));
    }
    let value = if scheme.is_empty() {
        credential.expose().clone()
    } else {
        format!("{scheme} {}", credential.expose())
    };
    let mut header_value = HeaderValue::from_str(&value).map_err(|_| {
        error(
            "authority.credential",
            "must be printable ASCII without line breaks to fit in an HTTP header",
        )
    })?;
    header_value.set_sensitive(true);
    let ca_pem = authority.string("caPem")?.map(str::to_owned);
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

fn parse_url(url: Option<&str>, allow_insecure: bool) -> Result<Url, ConfigError> {
    let url =
        url.ok_or_else(|| error("authority.url", "is required (or give authority.inspect)"))?;
    // Never echo the URL: it may carry a key in its query string.
    let parsed = Url::parse(url)
        .map_err(|e| error("authority.url", format!("must be an absolute URL ({e})")))?;
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
    if let Some(credential) = authority.string("credential")? {
        if credential.is_empty() {
            return Err(error("authority.credential", "must not be empty"));
        }
        return Ok(Secret::new(credential.to_owned()));
    }
    let Some(name) = authority.string("credentialEnv")? else {
        return Err(error(
            "authority.credential",
            "is required (give authority.credential or authority.credentialEnv)",
        ));
    };
    match env(name) {
        Some(value) if !value.is_empty() => Ok(Secret::new(value)),
        Some(_) => Err(error(
            "authority.credentialEnv",
            format!("environment variable {name} is empty"),
        )),
        None => Err(error(
            "authority.credentialEnv",
            format!("environment variable {name} is not set"),
        )),
    }
}

fn parse_capabilities(authority: &Section<'_>) -> Result<Vec<String>, ConfigError> {
    authority.exclusive("requiredCapability", "requiredCapabilities")?;
    let check = |path: &str, name: &str| -> Result<String, ConfigError> {
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
        assert_eq!(config.budget.node_budget_units, 100.0);
        assert_eq!(config.cadence.timeout, std::time::Duration::from_secs(2));
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
}
