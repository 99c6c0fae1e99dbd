//! What option parsing sees of a JavaScript value, and the one error it reports.

use std::fmt;

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
    pub fn type_name(&self) -> &'static str {
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

pub fn error(path: &str, rule: impl Into<String>) -> ConfigError {
    ConfigError {
        path: path.to_owned(),
        rule: rule.into(),
    }
}

/// Builders for options objects in tests: `obj(&[("budget", obj(&[("nodes", n(2.0))]))])`.
#[cfg(test)]
pub mod build {
    use super::RawValue;

    pub fn obj(members: &[(&str, RawValue)]) -> RawValue {
        RawValue::Object(
            members
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    pub fn s(text: &str) -> RawValue {
        RawValue::String(text.to_owned())
    }

    pub fn n(value: f64) -> RawValue {
        RawValue::Number(value)
    }
}
