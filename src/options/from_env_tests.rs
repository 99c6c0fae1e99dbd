use super::*;
use crate::options::raw::build::{n, obj, s};

fn env(pairs: &[(&str, &str)]) -> RawValue {
    RawValue::Object(pairs.iter().map(|(k, v)| ((*k).to_owned(), s(v))).collect())
}

const BUDGET: &[(&str, &str)] = &[
    ("SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS", "200"),
    ("SPEND_SENTINEL_BUDGET_MAX_UNITS_PER_SECOND", "20"),
];

#[test]
fn overrides_win_key_by_key() {
    let overrides = obj(&[
        ("budget", obj(&[("maxUnitsPerSecond", n(50.0))])),
        ("authority", obj(&[("inspect", RawValue::Function)])),
    ]);
    let read = EnvOptions::read(&env(BUDGET), &overrides).unwrap();
    let expected = obj(&[
        (
            "budget",
            obj(&[
                ("unverifiedUnits", n(200.0)),
                ("maxUnitsPerSecond", n(50.0)),
            ]),
        ),
        ("authority", obj(&[("inspect", RawValue::Function)])),
    ]);
    assert_eq!(read.options(), &expected);
}

#[test]
fn an_undefined_override_changes_nothing_and_a_value_replaces_a_whole_option() {
    let vars = env(&[
        ("SPEND_SENTINEL_BUDGET_NODES", "2"),
        ("SPEND_SENTINEL_REFRESH_BREAKER_OPEN_MS", "900"),
        ("SPEND_SENTINEL_AUTHORITY_REQUIRED_CAPABILITIES", "a,b"),
    ]);
    let overrides = obj(&[
        ("budget", obj(&[("nodes", RawValue::Undefined)])),
        ("logger", RawValue::Undefined),
        ("refresh", obj(&[("breaker", RawValue::Bool(true))])),
        (
            "authority",
            obj(&[("requiredCapabilities", RawValue::Array(vec![s("c")]))]),
        ),
    ]);
    let read = EnvOptions::read(&vars, &overrides).unwrap();
    let expected = obj(&[
        ("budget", obj(&[("nodes", n(2.0))])),
        ("refresh", obj(&[("breaker", RawValue::Bool(true))])),
        (
            "authority",
            obj(&[("requiredCapabilities", RawValue::Array(vec![s("c")]))]),
        ),
        ("logger", RawValue::Undefined),
    ]);
    assert_eq!(read.options(), &expected);
    // Breaker options over the environment's `true`.
    let vars = env(&[("SPEND_SENTINEL_REFRESH_BREAKER", "true")]);
    let tuned = obj(&[("refresh", obj(&[("breaker", obj(&[("openMs", n(5.0))]))]))]);
    assert_eq!(EnvOptions::read(&vars, &tuned).unwrap().options(), &tuned);
}

#[test]
fn overrides_are_an_options_object_or_nothing() {
    for bad in [s("x"), RawValue::Null, RawValue::Array(vec![])] {
        let err = EnvOptions::read(&env(BUDGET), &bad).err().unwrap();
        assert_eq!(err.path, "overrides", "{bad:?}");
    }
    assert!(EnvOptions::read(&env(BUDGET), &RawValue::Undefined).is_ok());
}

#[test]
fn names_are_looked_up_in_the_same_env() {
    let read = EnvOptions::read(&env(&[("BILLING_KEY", "sk_1\n")]), &RawValue::Undefined);
    let read = read.unwrap();
    assert_eq!(read.lookup("BILLING_KEY").as_deref(), Some("sk_1\n"));
    assert_eq!(read.lookup("PATH"), None);
}

#[test]
fn an_error_names_the_variable_of_an_option_the_environment_gives() {
    let vars = env(&[
        ("SPEND_SENTINEL_BUDGET_NODES", "2"),
        ("SPEND_SENTINEL_BUDGET_SHARE", "0.5"),
        ("SPEND_SENTINEL_AUTHORITY_REQUIRED_CAPABILITIES", "a,,b"),
    ]);
    let read = EnvOptions::read(&vars, &RawValue::Undefined).unwrap();
    let named = read.name(error(
        "budget.share",
        "give either budget.nodes or budget.share, not both",
    ));
    assert_eq!(
        named.to_string(),
        "SPEND_SENTINEL_BUDGET_SHARE: give either SPEND_SENTINEL_BUDGET_NODES or \
         SPEND_SENTINEL_BUDGET_SHARE, not both"
    );
    let item = read.name(error(
        "authority.requiredCapabilities[1]",
        "must not be an empty string",
    ));
    assert_eq!(
        item.to_string(),
        "SPEND_SENTINEL_AUTHORITY_REQUIRED_CAPABILITIES[1]: must not be an empty string"
    );
    // Nobody gave it: a variable could have.
    let missing = read.name(error("budget.unverifiedUnits", "is required."));
    assert_eq!(missing.path, "SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS");
    // A path with no variable, and a rule with none, stay as they are.
    let given = error("budget", "is required: x.y 0.5.");
    assert_eq!(read.name(given.clone()), given);
    // An object nobody gave: where its variables are.
    let object = error("refresh", "is required");
    assert_eq!(
        read.name(object).to_string(),
        "refresh: is required; from the environment: SPEND_SENTINEL_REFRESH_*"
    );
}

#[test]
fn an_error_about_an_override_names_the_option_and_the_variables_in_its_rule() {
    let vars = env(&[("SPEND_SENTINEL_BUDGET_SHARE", "0.5")]);
    let overrides = obj(&[("budget", obj(&[("nodes", n(2.0))]))]);
    let read = EnvOptions::read(&vars, &overrides).unwrap();
    let nodes = error(
        "budget.nodes",
        "give either budget.nodes or budget.share, not both",
    );
    assert_eq!(
        read.name(nodes).to_string(),
        "budget.nodes: give either budget.nodes or SPEND_SENTINEL_BUDGET_SHARE, not both"
    );
    let share = error(
        "budget.share",
        "give either budget.nodes or budget.share, not both",
    );
    assert_eq!(
        read.name(share).to_string(),
        "SPEND_SENTINEL_BUDGET_SHARE: give either budget.nodes or SPEND_SENTINEL_BUDGET_SHARE, \
         not both"
    );
    // A variable's option overridden: the error is about the override.
    let vars = env(&[("SPEND_SENTINEL_BUDGET_NODES", "2")]);
    let read = EnvOptions::read(&vars, &overrides).unwrap();
    assert_eq!(read.name(error("budget.nodes", "bad")).path, "budget.nodes");
}
