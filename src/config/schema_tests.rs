//! The parsers follow the option schema: for every option of every group, a value the schema
//! refuses (wrong type, out of range, too long, unknown key) is refused at that option's path,
//! and an absent option means the schema's default. Options are built from the schema itself,
//! so a new entry is tested without a new test.

use super::*;
use crate::options::build::{n, obj, s};
use crate::options::catalog::{
    ALL, CIRCUIT_BREAKER, FLEET, FLEET_TLS, HTTP_AUTHORITY, INSPECT_AUTHORITY, LOGGER, METRICS,
    REFRESH_BREAKER, WHEN_READY,
};
use crate::options::schema::{join, Default, Group, Keys, Kind, Opt};
use crate::rules::JsNumber;

/// Which parser reads a group.
#[derive(Clone, Copy)]
enum Parser {
    Sentinel,
    CircuitBreaker,
    WhenReady,
    Metrics,
}

fn is(a: &Group, b: &Group) -> bool {
    std::ptr::eq(a, b)
}

/// Valid options in which `group` is present (empty unless required members say otherwise),
/// and the parser that reads them.
fn context(group: &'static Group) -> (Parser, RawValue) {
    let (parser, options, _) = context_at(group);
    (parser, options)
}

/// [`context`], and where its options are in option paths: the arguments of `whenReady` and
/// `metrics` are named after the method.
fn context_at(group: &'static Group) -> (Parser, RawValue, &'static str) {
    let budget = || {
        vec![
            ("unverifiedUnits", n(200.0)),
            ("maxUnitsPerSecond", n(20.0)),
            ("nodes", n(2.0)),
        ]
    };
    let http = obj(&[
        ("url", s("https://billing.example.com/v1/account")),
        ("credential", s("sk_test_key")),
        ("requiredCapability", s("meter")),
    ]);
    let sentinel = |budget: Vec<(&str, RawValue)>, refresh: Option<RawValue>, authority| {
        let mut top = vec![("budget", obj(&budget)), ("authority", authority)];
        top.extend(refresh.map(|r| ("refresh", r)));
        (Parser::Sentinel, obj(&top), "")
    };
    if is(group, &INSPECT_AUTHORITY) {
        return sentinel(budget(), None, obj(&[("inspect", RawValue::Function)]));
    }
    if is(group, &FLEET) || is(group, &FLEET_TLS) {
        let mut budget = budget();
        budget.retain(|(k, _)| *k != "nodes");
        let mut members = vec![
            ("redis", s("redis://127.0.0.1:6379")),
            ("name", s("metering")),
            ("maxNodes", n(4.0)),
        ];
        if is(group, &FLEET_TLS) {
            members[0] = ("redis", s("rediss://127.0.0.1:6380"));
            members.push(("tls", obj(&[])));
        }
        let fleet = obj(&members);
        budget.push(("fleet", fleet));
        return sentinel(budget, None, http);
    }
    if is(group, &REFRESH_BREAKER) {
        return sentinel(budget(), Some(obj(&[("breaker", obj(&[]))])), http);
    }
    if is(group, &CIRCUIT_BREAKER) {
        return (Parser::CircuitBreaker, obj(&[]), "");
    }
    if is(group, &WHEN_READY) {
        return (Parser::WhenReady, obj(&[]), "whenReady");
    }
    if is(group, &METRICS) {
        return (Parser::Metrics, obj(&[]), "metrics");
    }
    // The Sentinel's own groups: every one of them is in these options already or may be added.
    sentinel(budget(), Some(obj(&[])), http)
}

/// `Ok(a description of what was parsed)` or the error.
fn parse(parser: Parser, options: &RawValue) -> Result<String, ConfigError> {
    match parser {
        Parser::Sentinel => parse_options(options, &|_| None).map(|c| format!("{c:?}")),
        Parser::CircuitBreaker => parse_circuit_breaker(options).map(|c| format!("{c:?}")),
        Parser::WhenReady => parse_when_ready(options).map(|c| format!("{c:?}")),
        Parser::Metrics => parse_metrics_options(options).map(|c| format!("{c:?}")),
    }
}

/// Members that may not be given together with the key (its alternative, in the base options).
const ALTERNATIVES: &[(&str, &str)] = &[
    ("credentialEnv", "credential"),
    ("requiredCapabilities", "requiredCapability"),
    ("redisEnv", "redis"),
    ("share", "nodes"),
];

/// The options of `group`'s parser with `value` at the option `path` (`undefined` removes it),
/// and the parser.
fn group_with(group: &'static Group, path: &str, value: RawValue) -> (Parser, RawValue) {
    let (parser, base, root) = context_at(group);
    let inner = path
        .strip_prefix(root)
        .map_or(path, |rest| rest.trim_start_matches('.'));
    (parser, with(&base, inner, value))
}

/// What `group`'s parser makes of its options with `value` at the option `path`.
fn try_with(group: &'static Group, path: &str, value: RawValue) -> Result<String, ConfigError> {
    let (parser, options) = group_with(group, path, value);
    parse(parser, &options)
}

/// `options` with `value` at `path` (`undefined` removes it), and the key's alternative removed.
fn with(options: &RawValue, path: &str, value: RawValue) -> RawValue {
    fn set(object: &RawValue, keys: &[&str], value: RawValue) -> RawValue {
        let RawValue::Object(members) = object else {
            panic!("{keys:?}: not an object in the base options")
        };
        let mut members = members.clone();
        let key = keys[0];
        if keys.len() == 1 {
            let alternative = ALTERNATIVES.iter().find(|(k, _)| *k == key);
            members.retain(|(k, _)| k != key && alternative.is_none_or(|(_, alt)| k != alt));
            if value != RawValue::Undefined {
                members.push((key.to_owned(), value));
            }
        } else {
            let index = members.iter().position(|(k, _)| k == key);
            let inner = index.map_or(RawValue::Object(Vec::new()), |i| members[i].1.clone());
            let updated = set(&inner, &keys[1..], value);
            match index {
                Some(i) => members[i].1 = updated,
                None => members.push((key.to_owned(), updated)),
            }
        }
        RawValue::Object(members)
    }
    set(options, &path.split('.').collect::<Vec<_>>(), value)
}

/// Every option the parsers read (the logger's methods are the binding's), with its path.
fn parsed_options() -> Vec<(&'static Group, &'static Opt, String)> {
    ALL.iter()
        .filter(|g| g.keys == Keys::Closed)
        .flat_map(|g| g.all().map(move |o| (*g, o, g.path_of(o))))
        .collect()
}

#[test]
fn every_group_can_be_parsed_and_its_base_options_are_valid() {
    for group in ALL {
        let (parser, base) = context(group);
        assert!(
            parse(parser, &base).is_ok(),
            "{}: {base:?}",
            group.interface
        );
    }
}

#[test]
fn a_wrong_type_is_refused_at_the_options_path() {
    for (group, opt, path) in parsed_options() {
        let wrong = match opt.kind {
            Kind::Number(_) => s("1"),
            Kind::Boolean => s("yes"),
            Kind::StringList { .. } => s("meter"),
            _ => n(1.0),
        };
        let err = try_with(group, &path, wrong).unwrap_err();
        assert_eq!(err.path, path, "{err}");
        assert!(err.rule.starts_with("must be"), "{err}");
        assert!(
            err.rule
                .ends_with(&format!("(got {})", wrong_type_name(&opt.kind))),
            "{err}"
        );
    }
}

fn wrong_type_name(kind: &Kind) -> &'static str {
    match kind {
        Kind::Number(_) | Kind::Boolean | Kind::StringList { .. } => "string",
        _ => "number",
    }
}

#[test]
fn unknown_keys_are_refused_and_the_known_ones_are_the_schemas() {
    for group in ALL.iter().filter(|g| g.keys == Keys::Closed) {
        let path = join(group.path, "notAnOption");
        let err = try_with(group, &path, n(1.0)).unwrap_err();
        // An object that may be one of several groups knows the keys of all of them.
        let siblings: Vec<&Group> = ALL
            .iter()
            .flat_map(|g| g.all())
            .map(|o| o.nested())
            .find(|nested| nested.iter().any(|g| is(g, group)))
            .map_or(vec![*group], |nested| nested.to_vec());
        let known: Vec<&str> = siblings
            .iter()
            .flat_map(|g| g.all())
            .map(|o| o.key)
            .collect();
        assert_eq!(err.path, path);
        assert_eq!(
            err.rule,
            format!("unknown option (known here: {})", known.join(", "))
        );
    }
    // The logger is any object with the three methods (a pino logger has many more).
    let pino = obj(&[("level", s("info")), ("child", RawValue::Function)]);
    assert!(try_with(&LOGGER, "logger", pino).is_ok());
}

#[test]
fn ranges_are_the_schemas() {
    for (group, opt, path) in parsed_options() {
        let Kind::Number(Some(range)) = opt.kind else {
            continue;
        };
        let refusal = |value: f64| format!("must be {} (got {})", range.must, JsNumber(value));
        // Just outside each bound (f64::MAX + 0.001 is f64::MAX: infinity is its outside).
        let below = if range.min_open {
            range.min
        } else {
            range.min - 0.001
        };
        let above = if range.max_open {
            range.max
        } else {
            range.max + 0.001
        };
        let mut refused = vec![below, f64::NAN, f64::NEG_INFINITY, f64::INFINITY];
        if above > range.max || range.max_open {
            refused.push(above);
        }
        if range.whole {
            refused.extend([range.min - 1.0, range.min + 0.5]);
        }
        for value in refused {
            let err = try_with(group, &path, n(value)).unwrap_err();
            assert_eq!(
                (err.path.as_str(), err.rule),
                (path.as_str(), refusal(value))
            );
        }
        let closed_bounds = [
            (!range.min_open).then_some(range.min),
            (!range.max_open).then_some(range.max),
        ];
        for value in closed_bounds.into_iter().flatten() {
            // Accepted by the range; another rule (maxOpenMs ≥ openMs, …) may still refuse it.
            if let Err(err) = try_with(group, &path, n(value)) {
                assert_ne!(err.rule, refusal(value), "{path} = {value}");
            }
        }
    }
}

#[test]
fn length_limits_are_the_schemas() {
    for (group, opt, path) in parsed_options() {
        let too_long = |max: usize| format!("must be at most {max} bytes long (got {})", max + 1);
        match opt.kind {
            Kind::String { max_bytes } => {
                let long = s(&"a".repeat(max_bytes + 1));
                let err = try_with(group, &path, long).unwrap_err();
                assert_eq!(
                    (err.path.as_str(), err.rule),
                    (path.as_str(), too_long(max_bytes))
                );
                let longest = s(&"a".repeat(max_bytes));
                if let Err(err) = try_with(group, &path, longest) {
                    assert!(!err.rule.contains("bytes long"), "{err}");
                }
            }
            Kind::StringList {
                max_items,
                item_bytes,
            } => {
                let many = RawValue::Array(vec![s("meter"); max_items + 1]);
                let err = try_with(group, &path, many).unwrap_err();
                assert_eq!(err.path, path);
                assert!(err.rule.contains(&format!("at most {max_items} ")), "{err}");
                let most = RawValue::Array(vec![s("meter"); max_items]);
                assert!(try_with(group, &path, most).is_ok());
                let long_item = RawValue::Array(vec![s(&"a".repeat(item_bytes + 1))]);
                let err = try_with(group, &path, long_item).unwrap_err();
                assert_eq!(
                    (err.path, err.rule),
                    (format!("{path}[0]"), too_long(item_bytes))
                );
            }
            _ => {}
        }
    }
}

#[test]
fn an_absent_option_means_the_schemas_default() {
    let mut checked = 0;
    for (group, opt, path) in parsed_options() {
        let value = match opt.default {
            Default::Number(v) => n(v),
            Default::Str(text) => s(text),
            Default::Bool(b) => RawValue::Bool(b),
            Default::Required | Default::Text(_) => continue,
        };
        let absent = try_with(group, &path, RawValue::Undefined);
        let given = try_with(group, &path, value);
        assert_eq!(absent, given, "{path}");
        assert!(absent.is_ok(), "{path}: {absent:?}");
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} defaults checked");
}

#[test]
fn a_required_option_is_required() {
    for (group, opt, path) in parsed_options() {
        if !opt.required() || is(group, &INSPECT_AUTHORITY) {
            // `inspect` is required of that variant only: without it, `authority` is HTTP.
            continue;
        }
        let err = try_with(group, &path, RawValue::Undefined).unwrap_err();
        assert_eq!(err.path, path, "{err}");
        assert!(err.rule.starts_with("is required"), "{err}");
    }
    let err = try_with(&HTTP_AUTHORITY, "authority", obj(&[])).unwrap_err();
    assert_eq!(err.path, "authority.url");
}
