//! [`Section`]: one options object read through its schema [`Group`]s. Unknown keys, types,
//! ranges, length limits and defaults come from the schema; what is left to the parser's code
//! is what relates one option to another.

use super::raw::{error, ConfigError, RawValue};
use super::schema::{join, Default, Group, Keys, Kind, Opt};
use crate::rules::JsNumber;

/// A view of one options object that remembers its path and its schema.
pub struct Section<'a> {
    /// "" for a top-level options object.
    path: String,
    members: &'a [(String, RawValue)],
    groups: Vec<&'static Group>,
}

impl<'a> Section<'a> {
    /// `value` read as `group`; refuses anything but an object, and keys the group does not have.
    pub fn new(
        path: &str,
        value: &'a RawValue,
        group: &'static Group,
    ) -> Result<Self, ConfigError> {
        Self::one_of(path, value, &[group])
    }

    /// `value` read as any of `groups` (their keys together are the known ones).
    pub fn one_of(
        path: &str,
        value: &'a RawValue,
        groups: &[&'static Group],
    ) -> Result<Self, ConfigError> {
        let RawValue::Object(members) = value else {
            let shown = if path.is_empty() { "options" } else { path };
            return Err(error(
                shown,
                format!("must be an object (got {})", value.type_name()),
            ));
        };
        let section = Section {
            path: path.to_owned(),
            members,
            groups: groups.to_vec(),
        };
        if groups.iter().all(|g| g.keys == Keys::Closed) {
            if let Some((key, _)) = members.iter().find(|(key, _)| section.spec(key).is_none()) {
                return Err(error(
                    &section.path_of(key),
                    format!(
                        "unknown option (known here: {})",
                        section.known().join(", ")
                    ),
                ));
            }
        }
        Ok(section)
    }

    fn known(&self) -> Vec<&'static str> {
        let mut keys: Vec<&'static str> = Vec::new();
        for opt in self.groups.iter().flat_map(|g| g.all()) {
            if !keys.contains(&opt.key) {
                keys.push(opt.key);
            }
        }
        keys
    }

    /// The schema entry of `key`. A key the parser reads must be in the schema; one that is not
    /// would have been refused as unknown, so without the entry the option is simply absent.
    fn spec(&self, key: &str) -> Option<&'static Opt> {
        self.groups.iter().find_map(|g| g.option(key))
    }

    pub fn get(&self, key: &str) -> &'a RawValue {
        debug_assert!(self.spec(key).is_some(), "{key} is not in the schema");
        self.members
            .iter()
            .find(|(k, _)| k == key)
            .map_or(&RawValue::Undefined, |(_, v)| v)
    }

    pub fn has(&self, key: &str) -> bool {
        !matches!(self.get(key), RawValue::Undefined)
    }

    /// The members given, in order (`undefined` ones included).
    pub fn members(&self) -> &'a [(String, RawValue)] {
        self.members
    }

    pub fn path_of(&self, key: &str) -> String {
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

    /// A number, within the schema's range when it has one.
    pub fn number(&self, key: &str) -> Result<Option<f64>, ConfigError> {
        let number = self.typed(key, "a number", |v| match v {
            RawValue::Number(n) => Some(*n),
            _ => None,
        })?;
        if let (Some(n), Some(Kind::Number(Some(range)))) =
            (number, self.spec(key).map(|s| &s.kind))
        {
            if !range.contains(n) {
                return Err(error(
                    &self.path_of(key),
                    format!("must be {} (got {})", range.must, JsNumber(n)),
                ));
            }
        }
        Ok(number)
    }

    /// [`Section::number`], or the schema's number default. For keys that have one; a required
    /// key is read with [`Section::required_number`].
    pub fn number_or_default(&self, key: &str) -> Result<f64, ConfigError> {
        let default = self.spec(key).map(|s| s.default);
        debug_assert!(
            matches!(default, Some(Default::Number(_))),
            "{key} has no number default"
        );
        match (self.number(key)?, default) {
            (Some(n), _) => Ok(n),
            (None, Some(Default::Number(n))) => Ok(n),
            (None, _) => Err(error(&self.path_of(key), "is required")),
        }
    }

    /// [`Section::number`] of a key the schema marks required: "is required" when absent.
    pub fn required_number(&self, key: &str) -> Result<f64, ConfigError> {
        debug_assert!(
            matches!(self.spec(key).map(|s| s.default), Some(Default::Required)),
            "{key} is not a required key"
        );
        self.number(key)?
            .ok_or_else(|| error(&self.path_of(key), "is required"))
    }

    /// A string, at most the schema's length. The message never echoes the value (it may be
    /// secret).
    pub fn string(&self, key: &str) -> Result<Option<&'a str>, ConfigError> {
        let value = self.typed(key, "a string", |v| match v {
            RawValue::String(s) => Some(s.as_str()),
            _ => None,
        })?;
        if let (Some(text), Some(Kind::String { max_bytes })) =
            (value, self.spec(key).map(|s| &s.kind))
        {
            check_length(&self.path_of(key), text, *max_bytes)?;
        }
        Ok(value)
    }

    /// [`Section::string`], or the schema's default.
    pub fn string_or_default(&self, key: &str) -> Result<&'a str, ConfigError> {
        match (self.string(key)?, self.spec(key).map(|s| s.default)) {
            (Some(text), _) => Ok(text),
            (None, Some(Default::Str(text))) => Ok(text),
            (None, _) => Err(error(&self.path_of(key), "is required")),
        }
    }

    /// One of the schema's names, or its default.
    pub fn choice_or_default(&self, key: &str) -> Result<&'a str, ConfigError> {
        let given = self.typed(key, "a string", |v| match v {
            RawValue::String(s) => Some(s.as_str()),
            _ => None,
        })?;
        let name = match (given, self.spec(key).map(|s| s.default)) {
            (Some(name), _) => name,
            (None, Some(Default::Str(name))) => name,
            (None, _) => return Err(error(&self.path_of(key), "is required")),
        };
        match self.spec(key).map(|s| &s.kind) {
            Some(Kind::Choice(names)) if !names.contains(&name) => Err(error(
                &self.path_of(key),
                format!(
                    "must be one of {}",
                    names
                        .iter()
                        .map(|n| format!("'{n}'"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
            _ => Ok(name),
        }
    }

    /// A boolean, or the schema's default.
    pub fn boolean_or_default(&self, key: &str) -> Result<bool, ConfigError> {
        let value = self.typed(key, "a boolean", |v| match v {
            RawValue::Bool(b) => Some(*b),
            _ => None,
        })?;
        match (value, self.spec(key).map(|s| s.default)) {
            (Some(b), _) => Ok(b),
            (None, Some(Default::Bool(b))) => Ok(b),
            (None, _) => Err(error(&self.path_of(key), "is required")),
        }
    }

    /// Whether a function was given (`false` when absent).
    pub fn function(&self, key: &str) -> Result<bool, ConfigError> {
        self.typed(key, "a function", |v| {
            matches!(v, RawValue::Function).then_some(())
        })
        .map(|given| given.is_some())
    }

    /// The nested options object of `key` (`None` when absent), read as the schema's group(s).
    pub fn section(&self, key: &str) -> Result<Option<Section<'a>>, ConfigError> {
        let value = self.get(key);
        if matches!(value, RawValue::Undefined) {
            return Ok(None);
        }
        let groups = self.spec(key).map_or(&[][..], |s| s.nested());
        Section::one_of(&self.path_of(key), value, groups).map(Some)
    }

    /// At most one of two mutually exclusive options.
    pub fn exclusive(&self, a: &str, b: &str) -> Result<(), ConfigError> {
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
pub fn check_length(path: &str, text: &str, max_bytes: usize) -> Result<(), ConfigError> {
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

/// `[A-Za-z_][A-Za-z0-9_]*`: what a shell accepts as a variable name.
pub fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}
