//! Options from environment variables (`Sentinel.fromEnv`). Every option a string can give has a
//! variable, `SPEND_SENTINEL_` + its path in upper snake case (`budget.fleet.maxNodes` →
//! `SPEND_SENTINEL_BUDGET_FLEET_MAX_NODES`), found by walking the catalog: names, types and which
//! values are secret come from there, never from a second list. Functions (`authority.inspect`,
//! the logger's methods) have no variable: code gives them, in `fromEnv`'s overrides.
//!
//! The values become the options object they stand for ([`RawValue`]), which the one parser reads;
//! only what a string cannot say by itself (a number, a boolean, a list) is decided here.

use super::catalog::SENTINEL;
use super::raw::{error, ConfigError, RawValue};
use super::schema::{join, Group, Kind, Opt};

pub const PREFIX: &str = "SPEND_SENTINEL_";

/// The package's variables that are not options: the install script's switch, and the one the
/// repository's tests read. Left alone, so an image built with them still starts.
pub const NOT_OPTIONS: &[&str] = &["SPEND_SENTINEL_NO_INSTALL", "SPEND_SENTINEL_BLESS"];

/// The most of a bad value an error shows (a non-secret value: secret ones are never shown).
const SHOWN_CHARS: usize = 40;

/// One environment variable and the option it sets.
#[derive(Debug)]
pub struct Variable {
    pub name: String,
    pub path: String,
    pub opt: &'static Opt,
}

/// Every variable of `new Sentinel`'s options, in the catalog's order.
pub fn variables() -> Vec<Variable> {
    variables_of(&SENTINEL)
}

/// The variables of `group`'s options and of the options nested in them. A `true`-or-options
/// switch (`refresh.breaker`) has a variable of its own (`true` only) and one per nested option.
pub fn variables_of(group: &'static Group) -> Vec<Variable> {
    let mut out = Vec::new();
    collect(group, &mut out);
    out
}

fn collect(group: &'static Group, out: &mut Vec<Variable>) {
    for opt in group.all() {
        let path = join(group.path, opt.key);
        let holds_a_value = !matches!(
            opt.kind,
            Kind::Object(_) | Kind::OneOf(_) | Kind::Function(_)
        );
        if holds_a_value && !out.iter().any(|v| v.path == path) {
            out.push(Variable {
                name: variable_name(&path),
                path,
                opt,
            });
        }
        for nested in opt.nested() {
            collect(nested, out);
        }
    }
}

/// `budget.unverifiedUnits` → `SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS`: each path segment's words
/// (a capital letter starts one) in capitals, joined by `_`.
pub fn variable_name(path: &str) -> String {
    let mut name = String::from(PREFIX);
    for (i, segment) in path.split('.').enumerate() {
        if i > 0 {
            name.push('_');
        }
        let chars: Vec<char> = segment.chars().collect();
        for (j, &c) in chars.iter().enumerate() {
            let after_a_word = j > 0
                && (!chars[j - 1].is_ascii_uppercase()
                    || chars.get(j + 1).is_some_and(char::is_ascii_lowercase));
            if c.is_ascii_uppercase() && after_a_word {
                name.push('_');
            }
            name.push(c.to_ascii_uppercase());
        }
    }
    name
}

/// A secret read from the environment loses one trailing newline (`$(cat key.txt)` keeps none,
/// but a Kubernetes Secret or a Docker secret made from a file keeps it), never anything else.
pub fn without_one_newline(text: &str) -> &str {
    text.strip_suffix('\n').unwrap_or(text)
}

/// The string members of `env` (an object such as `process.env`): `undefined` ones are unset,
/// and one of ours that is not a string is an error naming it.
pub fn string_members(env: &RawValue) -> Result<Vec<(String, String)>, ConfigError> {
    let RawValue::Object(members) = env else {
        return Err(error(
            "env",
            format!(
                "must be an object of environment variables, such as process.env (got {})",
                env.type_name()
            ),
        ));
    };
    let mut out = Vec::with_capacity(members.len());
    for (name, value) in members {
        match value {
            RawValue::String(text) => out.push((name.clone(), text.clone())),
            RawValue::Undefined => {}
            other if name.starts_with(PREFIX) => {
                let rule = format!("must be a string (got {})", other.type_name());
                return Err(error(name, rule));
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The options object the `SPEND_SENTINEL_*` variables among `vars` stand for, and the paths
/// they set. Any other `SPEND_SENTINEL_*` variable is refused: a typo must not pass silently.
pub fn options_from(
    vars: &[(String, String)],
    table: &[Variable],
) -> Result<(RawValue, Vec<String>), ConfigError> {
    let mut ours: Vec<&(String, String)> = vars
        .iter()
        .filter(|(name, _)| name.starts_with(PREFIX) && !NOT_OPTIONS.contains(&name.as_str()))
        .collect();
    ours.sort_by(|a, b| a.0.cmp(&b.0));
    if let Some((name, _)) = ours
        .iter()
        .find(|(n, _)| !table.iter().any(|v| &v.name == n))
    {
        return Err(unknown(name, table));
    }
    let mut options = RawValue::Object(Vec::new());
    let mut given = Vec::new();
    for variable in table {
        if let Some((_, text)) = ours.iter().find(|(name, _)| *name == variable.name) {
            set(&mut options, &variable.path, value_of(variable, text)?);
            given.push(variable.path.clone());
        }
    }
    Ok((options, given))
}

/// The value the option's type reads from a string.
fn value_of(variable: &Variable, text: &str) -> Result<RawValue, ConfigError> {
    let opt = variable.opt;
    let text = if opt.secret {
        without_one_newline(text)
    } else {
        text
    };
    let refused = |must: &str| {
        // A secret's value is never shown, whatever its option's type.
        let got = if opt.secret {
            String::new()
        } else {
            format!(" (got {})", shown(text))
        };
        error(&variable.name, format!("must be {must}{got}"))
    };
    Ok(match &opt.kind {
        Kind::Number(_) => match strict_number(text) {
            Some(n) if n.is_finite() => RawValue::Number(n),
            Some(_) => return Err(refused("a finite number")),
            None => return Err(refused("a number")),
        },
        Kind::Boolean => match text {
            "true" => RawValue::Bool(true),
            "false" => RawValue::Bool(false),
            _ => return Err(refused("true or false")),
        },
        Kind::SwitchOrObject(_) if text == "true" => RawValue::Bool(true),
        Kind::SwitchOrObject(_) => {
            let rule = format!(
                "true (every default; {}_* set its options; unset: none)",
                variable.name
            );
            return Err(refused(&rule));
        }
        Kind::StringList { .. } => RawValue::Array(
            text.split(',')
                .map(|item| RawValue::String(item.trim().to_owned()))
                .collect(),
        ),
        _ => RawValue::String(text.to_owned()),
    })
}

/// A decimal number as people write them in configuration — `200`, `-1`, `0.25`, `.5`, `2e5` —
/// and nothing else: no `200k`, `0x10`, `1_000`, `Infinity`, spaces or an empty string.
fn strict_number(text: &str) -> Option<f64> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e.strip_prefix(['+', '-']).unwrap_or(e))),
        None => (unsigned, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mantissa_ok = (whole.is_empty() || digits(whole))
        && (fraction.is_empty() || digits(fraction))
        && (digits(whole) || digits(fraction));
    if !mantissa_ok || exponent.is_some_and(|e| !digits(e)) {
        return None;
    }
    text.parse().ok()
}

/// A value as an error shows it: quoted, escaped, cut after [`SHOWN_CHARS`].
fn shown(text: &str) -> String {
    if text.chars().count() <= SHOWN_CHARS {
        return format!("{text:?}");
    }
    let head: String = text.chars().take(SHOWN_CHARS).collect();
    format!("{head:?}…")
}

fn unknown(name: &str, table: &[Variable]) -> ConfigError {
    let nearest = table
        .iter()
        .map(|v| (edit_distance(name, &v.name), &v.name))
        .min()
        .filter(|(distance, _)| *distance <= 3)
        .map_or(String::new(), |(_, near)| format!("; did you mean {near}?"));
    error(
        name,
        format!(
            "is not the variable of any option{nearest} (every {PREFIX}* variable must be one: \
             docs/api.md, Options from the environment)"
        ),
    )
}

/// Levenshtein distance, in bytes (variable names are ASCII).
fn edit_distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substituted = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substituted.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

/// Puts `value` at `path` (`a.b.c`), making the objects on the way; a `true` switch on the way
/// becomes an object (`true` means "every default", which the nested option then refines).
fn set(options: &mut RawValue, path: &str, value: RawValue) {
    let (parents, key) = path.rsplit_once('.').unwrap_or(("", path));
    let mut node = options;
    for segment in parents.split('.').filter(|s| !s.is_empty()) {
        node = member(node, segment);
        if !matches!(node, RawValue::Object(_)) {
            *node = RawValue::Object(Vec::new());
        }
    }
    *member(node, key) = value;
}

/// The member `key` of an object (added as `undefined` when absent).
fn member<'a>(node: &'a mut RawValue, key: &str) -> &'a mut RawValue {
    let RawValue::Object(members) = node else {
        unreachable!("set makes every parent an object")
    };
    let index = match members.iter().position(|(k, _)| k == key) {
        Some(index) => index,
        None => {
            members.push((key.to_owned(), RawValue::Undefined));
            members.len() - 1
        }
    };
    &mut members[index].1
}

#[cfg(test)]
#[path = "env_tests.rs"]
mod tests;
