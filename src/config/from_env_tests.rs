//! `parse_env_options`: the environment's options parse as the constructor's would, names are
//! looked up in the same env, a secret loses one trailing newline, and errors name variables
//! without showing a secret.

use super::*;
use crate::options::build::{n, obj, s};
use crate::options::env::variable_name;
use crate::rules::JsNumber;

const SECRET: &str = "sk_live_from_env_secret";
const REDIS_PASSWORD: &str = "hunter2-redis-pw";

fn env(pairs: &[(&str, &str)]) -> RawValue {
    RawValue::Object(pairs.iter().map(|(k, v)| ((*k).to_owned(), s(v))).collect())
}

/// The variables that give `options`, as an operator would write them.
fn as_variables(options: &RawValue, path: &str, out: &mut Vec<(String, String)>) {
    let text = match options {
        RawValue::Object(members) => {
            for (key, value) in members {
                let path = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                as_variables(value, &path, out);
            }
            return;
        }
        RawValue::Number(value) => JsNumber(*value).to_string(),
        RawValue::Bool(value) => value.to_string(),
        RawValue::String(text) => text.clone(),
        RawValue::Array(items) => items
            .iter()
            .map(|item| match item {
                RawValue::String(text) => text.as_str(),
                other => panic!("{other:?}"),
            })
            .collect::<Vec<_>>()
            .join(","),
        other => panic!("{path}: {other:?}"),
    };
    out.push((variable_name(path), text));
}

fn http() -> Vec<(&'static str, &'static str)> {
    vec![
        ("SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS", "200"),
        ("SPEND_SENTINEL_BUDGET_MAX_UNITS_PER_SECOND", "20"),
        ("SPEND_SENTINEL_BUDGET_NODES", "2"),
        (
            "SPEND_SENTINEL_AUTHORITY_URL",
            "https://billing.example.com/v1",
        ),
        ("SPEND_SENTINEL_AUTHORITY_CREDENTIAL_ENV", "BILLING_KEY"),
        ("SPEND_SENTINEL_AUTHORITY_REQUIRED_CAPABILITY", "meter"),
    ]
}

/// The HTTP adapter's variables with a fleet of 4 nodes instead of `nodes`, and `more`.
fn fleet<'a>(more: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut pairs = http();
    pairs.retain(|(k, _)| *k != "SPEND_SENTINEL_BUDGET_NODES");
    pairs.extend([
        ("BILLING_KEY", SECRET),
        ("SPEND_SENTINEL_BUDGET_FLEET_NAME", "metering"),
        ("SPEND_SENTINEL_BUDGET_FLEET_MAX_NODES", "4"),
    ]);
    pairs.extend_from_slice(more);
    pairs
}

fn with<'a>(base: Vec<(&'a str, &'a str)>, more: &[(&'a str, &'a str)]) -> RawValue {
    let mut pairs = base;
    for (name, value) in more {
        pairs.retain(|(n, _)| n != name);
        pairs.push((name, value));
    }
    env(&pairs)
}

fn env_error(vars: &RawValue) -> String {
    let err = parse_env_options(vars, &RawValue::Undefined).err().unwrap();
    err.to_string()
}

#[test]
fn the_environment_gives_what_the_options_object_would() {
    let budget = |extra: Vec<(&str, RawValue)>| {
        let mut members = vec![
            ("unverifiedUnits", n(300.0)),
            ("maxUnitsPerSecond", n(20.0)),
        ];
        members.extend(extra);
        obj(&members)
    };
    let authority = obj(&[
        ("url", s("http://127.0.0.1:9/v1")),
        ("allowInsecureHttp", RawValue::Bool(true)),
        ("credential", s(SECRET)),
        (
            "requiredCapabilities",
            RawValue::Array(vec![s("a"), s("b.c")]),
        ),
        ("header", s("x-api-key")),
        ("scheme", s("")),
        ("capabilitiesPointer", s("/tier/meters")),
    ]);
    let fleet = obj(&[
        ("redis", s("redis://:pw@127.0.0.1:6379/2")),
        ("name", s("metering")),
        ("maxNodes", n(25.0)),
        ("reserve", n(0.5)),
        ("leaseSeconds", n(12.5)),
    ]);
    let breaker = obj(&[("failureThreshold", n(3.0)), ("openMs", n(750.0))]);
    let cases = [
        obj(&[
            (
                "budget",
                budget(vec![("share", n(0.5)), ("maxStaleSeconds", n(4.0))]),
            ),
            (
                "refresh",
                obj(&[
                    ("minIntervalMs", n(500.0)),
                    ("maxIntervalMs", n(1000.0)),
                    ("timeoutMs", n(800.0)),
                ]),
            ),
            ("authority", authority.clone()),
        ]),
        obj(&[
            ("budget", budget(vec![("fleet", fleet)])),
            ("refresh", obj(&[("breaker", breaker)])),
            ("authority", authority),
        ]),
    ];
    for options in cases {
        let mut vars = Vec::new();
        as_variables(&options, "", &mut vars);
        let vars = RawValue::Object(vars.into_iter().map(|(k, v)| (k, s(&v))).collect());
        let (from_env, _) = parse_env_options(&vars, &RawValue::Undefined).unwrap();
        let given = parse_options(&options, &|_| None).unwrap();
        assert_eq!(format!("{from_env:?}"), format!("{given:?}"), "{vars:?}");
    }
}

#[test]
fn credential_env_is_looked_up_in_the_same_env() {
    let vars = with(http(), &[("BILLING_KEY", SECRET)]);
    let (config, _) = parse_env_options(&vars, &RawValue::Undefined).unwrap();
    assert_eq!(
        config.budget.node_budget_at(std::time::Duration::ZERO),
        100.0
    );
    let AuthorityConfig::Http(http_config) = config.authority else {
        panic!()
    };
    let header = http_config
        .header_value
        .expose()
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(header, format!("Bearer {SECRET}"));
    // Not set in this env: it does not matter what the process's environment holds.
    let err = env_error(&env(&http()));
    assert_eq!(
        err,
        "SPEND_SENTINEL_AUTHORITY_CREDENTIAL_ENV: the environment variable it names is not set"
    );
}

#[test]
fn a_secret_from_the_environment_loses_one_trailing_newline() {
    let with_newline = format!("{SECRET}\n");
    let header_of = |vars: &RawValue| {
        let (config, _) = parse_env_options(vars, &RawValue::Undefined).unwrap();
        let AuthorityConfig::Http(http) = config.authority else {
            panic!()
        };
        http.header_value.expose().to_str().unwrap().to_owned()
    };
    let named = with(http(), &[("BILLING_KEY", &with_newline)]);
    assert_eq!(header_of(&named), format!("Bearer {SECRET}"));
    let mut direct: Vec<(&str, &str)> = http();
    direct.retain(|(k, _)| *k != "SPEND_SENTINEL_AUTHORITY_CREDENTIAL_ENV");
    direct.push(("SPEND_SENTINEL_AUTHORITY_CREDENTIAL", &with_newline));
    assert_eq!(header_of(&env(&direct)), format!("Bearer {SECRET}"));
    // One, not two: the second is part of the value, which is refused without being shown.
    let two = format!("{SECRET}\n\n");
    let err = env_error(&with(http(), &[("BILLING_KEY", &two)]));
    assert!(
        err.starts_with("SPEND_SENTINEL_AUTHORITY_CREDENTIAL_ENV: must be visible ASCII"),
        "{err}"
    );
    assert!(!err.contains(SECRET), "{err}");
    // The constructor reads `credentialEnv` and `redisEnv` the same way.
    let options = obj(&[
        (
            "budget",
            obj(&[
                ("unverifiedUnits", n(200.0)),
                ("maxUnitsPerSecond", n(20.0)),
            ]),
        ),
        (
            "authority",
            obj(&[
                ("url", s("https://a.example/")),
                ("credentialEnv", s("K")),
                ("requiredCapability", s("m")),
            ]),
        ),
    ]);
    let lookup = |_: &str| Some(with_newline.clone());
    assert!(parse_options(&options, &lookup).is_ok());
}

#[test]
fn a_value_the_parser_refuses_names_its_variable() {
    let cases = [
        (
            "SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS",
            "-1",
            "SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS: ",
        ),
        (
            "SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS",
            "200k",
            "SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS: must be a number (got \"200k\")",
        ),
        (
            "SPEND_SENTINEL_BUDGET_FLEET_MAX_NODES",
            "25",
            "SPEND_SENTINEL_BUDGET_NODES: cannot be combined with budget.fleet",
        ),
    ];
    for (name, value, message) in cases {
        let err = env_error(&with(http(), &[(name, value), ("BILLING_KEY", SECRET)]));
        assert!(err.starts_with(message), "{err}");
        assert!(!err.contains(SECRET), "{err}");
    }
}

#[test]
fn a_bad_secret_is_refused_by_its_variable_and_never_shown() {
    let fleet = |redis| fleet(&[("SPEND_SENTINEL_BUDGET_FLEET_REDIS", redis)]);
    let cases = [
        (
            with(http(), &[("BILLING_KEY", "sk live with spaces")]),
            "SPEND_SENTINEL_AUTHORITY_CREDENTIAL_ENV",
            "sk live with spaces",
        ),
        (
            env(&fleet("http://:hunter2-redis-pw@127.0.0.1:6379")),
            "SPEND_SENTINEL_BUDGET_FLEET_REDIS",
            REDIS_PASSWORD,
        ),
        (
            with(
                fleet("rediss://:hunter2-redis-pw@127.0.0.1:6380"),
                &[
                    (
                        "SPEND_SENTINEL_BUDGET_FLEET_TLS_CERT",
                        "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n",
                    ),
                    (
                        "SPEND_SENTINEL_BUDGET_FLEET_TLS_KEY",
                        "-----BEGIN PRIVATE KEY-----\nhunter2-key\n",
                    ),
                ],
            ),
            "SPEND_SENTINEL_BUDGET_FLEET_TLS_",
            "hunter2",
        ),
    ];
    for (vars, variable, secret) in cases {
        let err = env_error(&vars);
        assert!(err.starts_with(variable), "{err}");
        assert!(!err.contains(secret), "{err}");
    }
}

#[test]
fn the_fleet_from_the_environment_reads_its_redis_url_by_name() {
    let mut pairs = fleet(&[
        ("REDIS_URL", "redis://:hunter2-redis-pw@127.0.0.1:6379\n"),
        ("SPEND_SENTINEL_BUDGET_FLEET_REDIS_ENV", "REDIS_URL"),
    ]);
    let (config, _) = parse_env_options(&env(&pairs), &RawValue::Undefined).unwrap();
    let fleet = config.fleet.unwrap();
    assert_eq!(fleet.shape.max_nodes, 4);
    assert_eq!(
        fleet.redis_url.expose(),
        "redis://:hunter2-redis-pw@127.0.0.1:6379"
    );
    pairs.retain(|(k, _)| *k != "REDIS_URL");
    let err = env_error(&env(&pairs));
    assert_eq!(
        err,
        "SPEND_SENTINEL_BUDGET_FLEET_REDIS_ENV: the environment variable it names is not set or empty"
    );
}
