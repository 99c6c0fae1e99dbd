//! `Sentinel.fromEnv(env, overrides)`'s options: the environment's ([`super::env`]) with the
//! overrides merged over them key by key, the lookup `credentialEnv` and `redisEnv` use (the same
//! `env`, not the process's), and errors that name the variable of an option the environment
//! gives.

use super::env::{options_from, string_members, variable_name, variables, Variable};
use super::raw::{error, ConfigError, RawValue};

pub struct EnvOptions {
    /// Every string member of `env`: names of `credentialEnv` and `redisEnv` are looked up here.
    vars: Vec<(String, String)>,
    table: Vec<Variable>,
    /// The paths whose value is a variable's (given, and not overridden).
    from_env: Vec<String>,
    /// The environment's options with the overrides merged over them.
    options: RawValue,
}

impl EnvOptions {
    /// `env`: an object such as `process.env`; `overrides`: an options object, or `undefined`.
    pub fn read(env: &RawValue, overrides: &RawValue) -> Result<Self, ConfigError> {
        let vars = string_members(env)?;
        if !matches!(overrides, RawValue::Undefined | RawValue::Object(_)) {
            let rule = format!("must be an options object (got {})", overrides.type_name());
            return Err(error("overrides", rule));
        }
        let table = variables();
        let (from_vars, given) = options_from(&vars, &table)?;
        let from_env = given
            .into_iter()
            .filter(|path| !overridden(overrides, path))
            .collect();
        Ok(EnvOptions {
            options: merge(from_vars, overrides),
            vars,
            table,
            from_env,
        })
    }

    /// The options object to parse.
    pub fn options(&self) -> &RawValue {
        &self.options
    }

    /// An environment variable of the same `env`.
    pub fn lookup(&self, name: &str) -> Option<String> {
        self.vars
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, value)| value.clone())
    }

    /// `err` as a `fromEnv` caller reads it: the option paths in its rule that are the
    /// environment's (given by a variable, or by nobody: a variable could have) become the
    /// variables' names, and so does its own path when it is one of them. About an override, it
    /// names the option, as the constructor's error does.
    pub fn name(&self, err: ConfigError) -> ConfigError {
        let (base, index) = err
            .path
            .find('[')
            .map_or((err.path.as_str(), ""), |i| err.path.split_at(i));
        let mut rule = self.with_variable_names(&err.rule);
        if let Some(variable) = self.variable_of(base) {
            let path = format!("{}{index}", variable.name);
            return ConfigError { path, rule };
        }
        // An object nobody gave (`budget`, `authority`): say where its variables are.
        let nested = format!("{base}.");
        let missing = matches!(value_at(&self.options, base), RawValue::Undefined);
        if missing && self.table.iter().any(|v| v.path.starts_with(&nested)) {
            rule = format!("{rule}; from the environment: {}_*", variable_name(base));
        }
        ConfigError { rule, ..err }
    }

    /// The variable of `path` when the option's value is (or could have been) the environment's.
    fn variable_of(&self, path: &str) -> Option<&Variable> {
        let environments = self.from_env.iter().any(|p| p == path)
            || matches!(value_at(&self.options, path), RawValue::Undefined);
        self.table
            .iter()
            .find(|v| v.path == path)
            .filter(|_| environments)
    }

    /// Option paths in `rule` (`budget.fleet.redis`, a sentence's full stop aside) replaced by
    /// their variables, where [`Self::variable_of`] says so.
    fn with_variable_names(&self, rule: &str) -> String {
        let is_path_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
        let mut out = String::new();
        let mut rest = rule;
        while let Some(start) = rest.find(is_path_char) {
            out.push_str(&rest[..start]);
            let token = &rest[start..];
            let token = &token[..token.find(|c| !is_path_char(c)).unwrap_or(token.len())];
            let path = token.trim_end_matches('.');
            match self.variable_of(path).filter(|_| path.contains('.')) {
                Some(variable) => {
                    out.push_str(&variable.name);
                    out.push_str(&token[path.len()..]);
                }
                None => out.push_str(token),
            }
            rest = &rest[start + token.len()..];
        }
        out.push_str(rest);
        out
    }
}

/// `overrides` over `base`, key by key down to the options: objects merge, anything else replaces
/// (a list, a function, `true` over breaker options and options over `true`), and an `undefined`
/// member changes nothing.
fn merge(base: RawValue, overrides: &RawValue) -> RawValue {
    match (base, overrides) {
        (base, RawValue::Undefined) => base,
        (RawValue::Object(mut members), RawValue::Object(over)) => {
            for (key, value) in over {
                match members.iter_mut().find(|(k, _)| k == key) {
                    Some((_, slot)) => {
                        *slot = merge(std::mem::replace(slot, RawValue::Undefined), value);
                    }
                    None => members.push((key.clone(), value.clone())),
                }
            }
            RawValue::Object(members)
        }
        (_, value) => value.clone(),
    }
}

/// Whether `overrides` replaces the value at `path`: it gives the option, or a value that is not
/// an object where an object on the way would be.
fn overridden(overrides: &RawValue, path: &str) -> bool {
    let mut node = overrides;
    for key in path.split('.') {
        match node {
            RawValue::Undefined => return false,
            RawValue::Object(members) => {
                node = members
                    .iter()
                    .find(|(k, _)| k == key)
                    .map_or(&RawValue::Undefined, |(_, v)| v);
            }
            _ => return true,
        }
    }
    !matches!(node, RawValue::Undefined)
}

/// The value at `path`, `undefined` when an object on the way is missing.
fn value_at<'a>(options: &'a RawValue, path: &str) -> &'a RawValue {
    let mut node = options;
    for key in path.split('.') {
        node = match node {
            RawValue::Object(members) => members
                .iter()
                .find(|(k, _)| k == key)
                .map_or(&RawValue::Undefined, |(_, v)| v),
            _ => &RawValue::Undefined,
        };
    }
    node
}

#[cfg(test)]
#[path = "from_env_tests.rs"]
mod tests;
