use super::*;
use crate::options::raw::build::{n, obj, s};

fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The options object `pairs` stand for.
fn read(pairs: &[(&str, &str)]) -> Result<RawValue, ConfigError> {
    options_from(&vars(pairs), &variables()).map(|(options, _)| options)
}

fn read_error(pairs: &[(&str, &str)]) -> String {
    read(pairs).unwrap_err().to_string()
}

fn variable(path: &str) -> Variable {
    variables()
        .into_iter()
        .find(|v| v.path == path)
        .unwrap_or_else(|| panic!("no variable for {path}"))
}

#[test]
fn a_variable_is_the_option_path_in_upper_snake_case() {
    for (path, name) in [
        (
            "budget.unverifiedUnits",
            "SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS",
        ),
        (
            "budget.fleet.maxNodes",
            "SPEND_SENTINEL_BUDGET_FLEET_MAX_NODES",
        ),
        (
            "authority.credentialEnv",
            "SPEND_SENTINEL_AUTHORITY_CREDENTIAL_ENV",
        ),
        ("authority.caPem", "SPEND_SENTINEL_AUTHORITY_CA_PEM"),
        (
            "budget.fleet.tls.key",
            "SPEND_SENTINEL_BUDGET_FLEET_TLS_KEY",
        ),
        (
            "refresh.breaker.failureRateThreshold",
            "SPEND_SENTINEL_REFRESH_BREAKER_FAILURE_RATE_THRESHOLD",
        ),
    ] {
        assert_eq!(variable(path).name, name);
    }
    // Capitals in a row are one word until the last starts the next.
    assert_eq!(
        variable_name("a.parseHTTPHeader"),
        "SPEND_SENTINEL_A_PARSE_HTTP_HEADER"
    );
}

#[test]
fn every_option_a_string_can_give_has_a_variable_of_its_own() {
    let table = variables();
    for (i, v) in table.iter().enumerate() {
        let valid = v.name.strip_prefix(PREFIX).is_some_and(|rest| {
            !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
        });
        assert!(valid, "{}", v.name);
        assert_eq!(v.name, variable_name(&v.path));
        for other in &table[i + 1..] {
            assert_ne!(v.name, other.name, "{} and {}", v.path, other.path);
        }
        assert!(!NOT_OPTIONS.contains(&v.name.as_str()), "{}", v.name);
    }
    // Code gives functions and the objects around options; a switch has a variable, and so do
    // its options.
    let paths: Vec<&str> = table.iter().map(|v| v.path.as_str()).collect();
    for code_only in [
        "authority.inspect",
        "logger",
        "logger.info",
        "budget",
        "budget.fleet",
    ] {
        assert!(!paths.contains(&code_only), "{code_only}");
    }
    for given in ["refresh.breaker", "refresh.breaker.openMs", "authority.url"] {
        assert!(paths.contains(&given), "{given}");
    }
}

#[test]
fn every_variable_round_trips_to_its_option() {
    for v in variables() {
        let (text, expected) = match v.opt.kind {
            Kind::Number(_) => ("12.5", n(12.5)),
            Kind::Boolean | Kind::SwitchOrObject(_) => ("true", RawValue::Bool(true)),
            Kind::StringList { .. } => ("a,b", RawValue::Array(vec![s("a"), s("b")])),
            _ => ("text", s("text")),
        };
        let options = read(&[(&v.name, text)]).unwrap();
        let mut node = &options;
        for key in v.path.split('.') {
            let RawValue::Object(members) = node else {
                panic!("{}: {options:?}", v.path)
            };
            node = &members.iter().find(|(k, _)| k == key).unwrap().1;
        }
        assert_eq!(node, &expected, "{}", v.name);
    }
}

#[test]
fn the_variables_together_make_one_options_object() {
    let options = read(&[
        ("SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS", "200"),
        ("SPEND_SENTINEL_BUDGET_MAX_UNITS_PER_SECOND", "20"),
        ("SPEND_SENTINEL_BUDGET_FLEET_MAX_NODES", "25"),
        ("SPEND_SENTINEL_AUTHORITY_URL", "https://billing.example/v1"),
        ("PATH", "/usr/bin"),
    ])
    .unwrap();
    let expected = obj(&[
        (
            "budget",
            obj(&[
                ("unverifiedUnits", n(200.0)),
                ("maxUnitsPerSecond", n(20.0)),
                ("fleet", obj(&[("maxNodes", n(25.0))])),
            ]),
        ),
        (
            "authority",
            obj(&[("url", s("https://billing.example/v1"))]),
        ),
    ]);
    assert_eq!(options, expected);
}

#[test]
fn numbers_are_read_strictly_and_a_bad_one_names_its_variable() {
    let units = "SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS";
    for (text, value) in [
        ("200", 200.0),
        ("-1", -1.0),
        ("+3", 3.0),
        ("0.25", 0.25),
        (".5", 0.5),
        ("5.", 5.0),
        ("2e5", 2e5),
        ("2E-3", 2e-3),
    ] {
        let options = read(&[(units, text)]).unwrap();
        assert_eq!(
            options,
            obj(&[("budget", obj(&[("unverifiedUnits", n(value))]))])
        );
    }
    assert_eq!(
        read_error(&[(units, "200k")]),
        format!("{units}: must be a number (got \"200k\")")
    );
    for bad in [
        "", " 200", "200 ", "0x10", "1_000", "1,5", "Infinity", "NaN", "inf", ".", "-", "e5", "1e",
        "1e+", "--1", "1.2.3",
    ] {
        let err = read_error(&[(units, bad)]);
        assert!(
            err.starts_with(&format!("{units}: must be a number (got ")),
            "{bad:?}: {err}"
        );
    }
    assert_eq!(
        read_error(&[(units, "1e400")]),
        format!("{units}: must be a finite number (got \"1e400\")")
    );
}

#[test]
fn booleans_are_true_or_false_and_the_breaker_switch_only_true() {
    let insecure = "SPEND_SENTINEL_AUTHORITY_ALLOW_INSECURE_HTTP";
    for (text, value) in [("true", true), ("false", false)] {
        let options = read(&[(insecure, text)]).unwrap();
        let expected = obj(&[(
            "authority",
            obj(&[("allowInsecureHttp", RawValue::Bool(value))]),
        )]);
        assert_eq!(options, expected);
    }
    for bad in ["TRUE", "1", "yes", ""] {
        let err = read_error(&[(insecure, bad)]);
        assert!(
            err.starts_with(&format!("{insecure}: must be true or false")),
            "{err}"
        );
    }
    let breaker = "SPEND_SENTINEL_REFRESH_BREAKER";
    let on = obj(&[("refresh", obj(&[("breaker", RawValue::Bool(true))]))]);
    assert_eq!(read(&[(breaker, "true")]).unwrap(), on);
    let err = read_error(&[(breaker, "false")]);
    assert!(
        err.starts_with(&format!("{breaker}: must be true")),
        "{err}"
    );
    // `true` and a nested option: the breaker with that option, the rest defaults.
    let open_ms = "SPEND_SENTINEL_REFRESH_BREAKER_OPEN_MS";
    let tuned = obj(&[("refresh", obj(&[("breaker", obj(&[("openMs", n(900.0))]))]))]);
    assert_eq!(read(&[(breaker, "true"), (open_ms, "900")]).unwrap(), tuned);
    assert_eq!(read(&[(open_ms, "900")]).unwrap(), tuned);
}

#[test]
fn lists_are_comma_separated() {
    let options = read(&[(
        "SPEND_SENTINEL_AUTHORITY_REQUIRED_CAPABILITIES",
        "meter.requests, meter.tokens,x",
    )])
    .unwrap();
    let list = RawValue::Array(vec![s("meter.requests"), s("meter.tokens"), s("x")]);
    assert_eq!(
        options,
        obj(&[("authority", obj(&[("requiredCapabilities", list)]))])
    );
}

#[test]
fn an_unknown_spend_sentinel_variable_is_refused_and_others_are_left_alone() {
    let err = read_error(&[("SPEND_SENTINEL_BUDGET_UNVERIFED_UNITS", "200")]);
    assert!(
        err.starts_with("SPEND_SENTINEL_BUDGET_UNVERIFED_UNITS: is not the variable of any option; did you mean SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS?"),
        "{err}"
    );
    let err = read_error(&[("SPEND_SENTINEL_FLEET_MAX_NODES", "25")]);
    assert!(
        err.starts_with("SPEND_SENTINEL_FLEET_MAX_NODES: is not the variable of any option ("),
        "{err}"
    );
    // Its value is not shown: it may be a secret under a misspelt name.
    let err = read_error(&[("SPEND_SENTINEL_AUTHORITY_CREDENTAIL", "sk_live_123")]);
    assert!(!err.contains("sk_live_123"), "{err}");
    let others = [
        ("SPEND_SENTINEL_NO_INSTALL", "1"),
        ("SPEND_SENTINEL_BLESS", "1"),
        ("FLEET_MAX_NODES", "25"),
        ("spend_sentinel_budget_nodes", "x"),
    ];
    assert_eq!(read(&others).unwrap(), obj(&[]));
}

#[test]
fn a_secret_loses_one_trailing_newline_and_nothing_else() {
    for path in [
        "authority.credential",
        "budget.fleet.redis",
        "budget.fleet.tls.key",
    ] {
        let v = variable(path);
        assert!(v.opt.secret, "{path}");
        for (given, kept) in [
            ("sk_1\n", "sk_1"),
            ("sk_1\n\n", "sk_1\n"),
            ("sk_1\r\n", "sk_1\r"),
            ("\nsk_1", "\nsk_1"),
            (" sk_1 ", " sk_1 "),
        ] {
            let options = read(&[(&v.name, given)]).unwrap();
            assert_eq!(options_value(&options, path), &s(kept), "{path} {given:?}");
        }
    }
    let url = read(&[("SPEND_SENTINEL_AUTHORITY_URL", "https://a.example/\n")]).unwrap();
    assert_eq!(
        options_value(&url, "authority.url"),
        &s("https://a.example/\n")
    );
    let secrets: Vec<String> = variables()
        .into_iter()
        .filter(|v| v.opt.secret)
        .map(|v| v.path)
        .collect();
    assert_eq!(
        secrets,
        [
            "budget.fleet.redis",
            "budget.fleet.tls.key",
            "authority.credential"
        ]
    );
}

fn options_value<'a>(options: &'a RawValue, path: &str) -> &'a RawValue {
    path.split('.').fold(options, |node, key| match node {
        RawValue::Object(members) => &members.iter().find(|(k, _)| k == key).unwrap().1,
        other => panic!("{path}: {other:?}"),
    })
}

#[test]
fn a_bad_value_is_shown_short_and_escaped() {
    let long = format!("{}\u{7}", "9".repeat(60));
    let err = read_error(&[("SPEND_SENTINEL_BUDGET_NODES", &long)]);
    assert!(
        err.ends_with(&format!("(got \"{}\"…)", "9".repeat(40))),
        "{err}"
    );
    let err = read_error(&[("SPEND_SENTINEL_BUDGET_NODES", "1\u{7}")]);
    assert!(err.ends_with(r#"(got "1\u{7}")"#), "{err}");
}

#[test]
fn env_is_an_object_of_strings() {
    assert_eq!(
        string_members(&s("PATH=/bin")).unwrap_err().to_string(),
        "env: must be an object of environment variables, such as process.env (got string)"
    );
    let env = obj(&[
        ("PATH", s("/bin")),
        ("UNSET", RawValue::Undefined),
        ("COUNT", n(3.0)),
    ]);
    assert_eq!(string_members(&env).unwrap(), vars(&[("PATH", "/bin")]));
    let ours = obj(&[("SPEND_SENTINEL_BUDGET_NODES", n(3.0))]);
    assert_eq!(
        string_members(&ours).unwrap_err().to_string(),
        "SPEND_SENTINEL_BUDGET_NODES: must be a string (got number)"
    );
}

#[test]
fn edit_distance_counts_insertions_deletions_and_substitutions() {
    assert_eq!(edit_distance("abc", "abc"), 0);
    assert_eq!(edit_distance("abc", "abxc"), 1);
    assert_eq!(edit_distance("abc", "ac"), 1);
    assert_eq!(edit_distance("abc", "axc"), 1);
    assert_eq!(edit_distance("", "ab"), 2);
    assert_eq!(edit_distance("kitten", "sitting"), 3);
}
