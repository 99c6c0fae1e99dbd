//! `parse_options` and the method options, rule by rule.

use std::time::Duration;

use super::*;
use crate::metrics::Format;
use crate::options::build::{n, obj, s};
use crate::options::catalog::{BUDGET, HTTP_AUTHORITY, INSPECT_AUTHORITY, REFRESH};
use crate::options::limits;
use crate::options::schema::Group;

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

/// The seed budget (b 200, r 20) with `maxStaleSeconds`, fixed (`nodes: 2`) or as a fleet
/// (4 nodes, reserve 0.25: floor 12.5 units, a 0.625 s window; floor + pool 162.5, 8.125 s).
fn budget_with_max_stale(max_stale: f64, fleet: bool) -> RawValue {
    let mut budget = vec![
        ("unverifiedUnits", n(200.0)),
        ("maxUnitsPerSecond", n(20.0)),
        ("maxStaleSeconds", n(max_stale)),
    ];
    budget.push(if fleet {
        let fleet = obj(&[
            ("redis", s("redis://127.0.0.1:6379")),
            ("name", s("metering")),
            ("maxNodes", n(4.0)),
        ]);
        ("fleet", fleet)
    } else {
        ("nodes", n(2.0))
    });
    let authority = obj(&[("inspect", RawValue::Function)]);
    obj(&[("budget", obj(&budget)), ("authority", authority)])
}

/// One rule for a fixed budget and a fleet: `maxStaleSeconds` may not pass the longest window
/// the node can run with (node budget / r; for a fleet, (floor + pool) / r), and below that it
/// caps the window of every node budget the node has.
#[test]
fn max_stale_is_one_rule_for_a_fixed_budget_and_a_fleet() {
    let window = |max_stale, fleet, grant: Option<f64>| {
        let mut config = parse_options(&budget_with_max_stale(max_stale, fleet), &no_env)
            .unwrap_or_else(|e| panic!("maxStaleSeconds {max_stale}: {e}"));
        config
            .budget
            .set_lease(grant.map(|grant_units| crate::rules::budget::lease::Lease {
                grant_units,
                deadline: Duration::from_secs(60),
            }));
        config.budget.stale_window_at(Duration::ZERO).as_secs_f64()
    };
    // Fixed: node budget 100 units, node budget / r = 5 s.
    assert_eq!(window(4.0, false, None), 4.0, "below the ceiling: the cap");
    assert_eq!(window(5.0, false, None), 5.0, "at the ceiling");
    // Fleet: the cap lowers only the windows longer than it.
    assert_eq!(window(6.0, true, None), 0.625, "the floor's window");
    assert_eq!(window(6.0, true, Some(150.0)), 6.0, "floor + pool: capped");
    // Above the longest window: refused, naming the option and the window it passes.
    for (max_stale, fleet, longest) in [(6.0, false, "5 s"), (8.2, true, "8.125 s")] {
        let err = parse_error(&budget_with_max_stale(max_stale, fleet));
        assert_eq!(err.path, "budget.maxStaleSeconds", "{err}");
        assert!(err.to_string().contains(longest), "{err}");
    }
}

/// The `window` calculator reads `budget.fleet` without Redis (no `redis`, no `name`): the very
/// budget `new Sentinel` runs with, and the same errors.
#[test]
fn the_calculator_reads_a_fleets_shape_alone_by_the_same_rules() {
    let budget = |max_stale: f64, fleet: RawValue| {
        obj(&[
            ("unverifiedUnits", n(200.0)),
            ("maxUnitsPerSecond", n(20.0)),
            ("maxStaleSeconds", n(max_stale)),
            ("fleet", fleet),
        ])
    };
    let shape = || obj(&[("maxNodes", n(4.0))]);
    let sentinel = parse_options(&budget_with_max_stale(6.0, true), &no_env).unwrap();
    assert_eq!(
        parse_calculator_budget(&budget(6.0, shape())).unwrap(),
        sentinel.budget
    );
    let fixed = obj(&[
        ("unverifiedUnits", n(200.0)),
        ("maxUnitsPerSecond", n(20.0)),
    ]);
    assert_eq!(
        parse_calculator_budget(&fixed).unwrap(),
        BudgetSource::Static(parse_budget_options(&fixed).unwrap())
    );
    for (refused, path) in [
        (budget(8.2, shape()), "budget.maxStaleSeconds"),
        (budget(6.0, obj(&[])), "budget.fleet.maxNodes"),
        (
            budget(6.0, obj(&[("maxNodes", n(4.0)), ("reserve", n(1.0))])),
            "budget.fleet.reserve",
        ),
    ] {
        assert_eq!(parse_calculator_budget(&refused).unwrap_err().path, path);
    }
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
            obj(&[("timeoutMs", n(limits::MAX_TIMER_MS + 1.0))]),
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

    /// Objects of these keys, with any values.
    fn object_of(keys: Vec<&'static str>) -> impl Strategy<Value = RawValue> {
        prop::collection::vec((prop::sample::select(keys), value()), 0..6).prop_map(|members| {
            RawValue::Object(
                members
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect(),
            )
        })
    }

    /// Objects of the groups' keys (the schema's).
    fn section(groups: &[&'static Group]) -> impl Strategy<Value = RawValue> {
        object_of(groups.iter().flat_map(|g| g.all()).map(|o| o.key).collect())
    }

    proptest! {
        /// Any options either parse or give an error naming a path: never a panic, and a
        /// parsed config always has a window and cadence a `Duration` and timers can hold.
        #[test]
        fn any_options_parse_or_fail_with_a_path(
            b in edgy_number(),
            r in edgy_number(),
            budget in section(&[&BUDGET]),
            refresh in section(&[&REFRESH]),
            authority in prop_oneof![
                Just(obj(&[("inspect", RawValue::Function)])),
                section(&[&HTTP_AUTHORITY, &INSPECT_AUTHORITY]),
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
                    prop_assert!(window.as_secs_f64() > 0.0 && window.as_secs_f64() <= crate::rules::budget::window::MAX_STALE_WINDOW_SECONDS);
                    let cadence = config.cadence.at(window);
                    prop_assert!(cadence.min_interval >= std::time::Duration::from_millis(20));
                    prop_assert!(cadence.max_interval + cadence.timeout < window);
                }
                Err(err) => prop_assert!(!err.path.is_empty(), "{err}"),
            }
        }

        #[test]
        fn any_when_ready_argument_parses_or_fails_with_a_path(arg in prop_oneof![value(), object_of(vec!["timeoutMs", "foo"])]) {
            if let Err(err) = parse_when_ready(&arg) {
                prop_assert!(err.path.starts_with("whenReady"), "{err}");
            }
        }
    }
}
