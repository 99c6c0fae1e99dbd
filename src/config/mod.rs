//! Options → a validated [`Config`], parsed once at construction.
//!
//! The binding layer turns the JavaScript options object into a [`RawValue`] tree; everything
//! here is plain Rust, so every rule is a unit test. Keys, types, ranges, lengths and defaults
//! come from the option schema (`crate::options::catalog`); the code here adds what relates one
//! option to another. Every error names the option path and the rule it breaks, and never
//! contains the credential (docs/api.md, Limits).

mod authority;
mod breaker;
mod budget;
mod fleet;
mod method_options;

#[cfg(test)]
mod from_env_tests;
#[cfg(test)]
mod schema_tests;
#[cfg(test)]
mod tests;

pub use authority::{AuthorityConfig, HttpAuthorityConfig};
pub use breaker::parse_circuit_breaker;
pub use fleet::FleetConfig;
pub use method_options::{parse_metrics_options, parse_when_ready};

use crate::options::catalog::{LOGGER_RULE, SENTINEL};
use crate::options::{error, ConfigError, EnvOptions, RawValue, Section};
use crate::rules::breaker::BreakerSettings;
use crate::rules::{Budget, BudgetSource, CadencePlan};

#[derive(Debug, Clone)]
pub struct Config {
    pub budget: BudgetSource,
    pub cadence: CadencePlan,
    /// Neither `refresh.minIntervalMs` nor `refresh.maxIntervalMs` given: how often the
    /// authority is asked follows from the budget alone, so the constructor says when that is
    /// more than once a second (explicit pauses are the user's own choice).
    pub default_pauses: bool,
    /// `budget.fleet`: the grant is leased from Redis when given.
    pub fleet: Option<FleetConfig>,
    pub authority: AuthorityConfig,
    /// `refresh.breaker`: refreshes go through a circuit breaker when given.
    pub breaker: Option<BreakerSettings>,
}

/// Parses and validates the whole options object. `env` looks up environment variables
/// (`authority.credentialEnv`, `budget.fleet.redisEnv`); tests pass a fake.
pub fn parse_options(
    options: &RawValue,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, ConfigError> {
    let top = Section::new("", options, &SENTINEL)?;
    // Any object: its methods are the binding's to check (a pino logger has many more).
    match top.get("logger") {
        RawValue::Undefined | RawValue::Object(_) => {}
        other => {
            let rule = format!("{LOGGER_RULE} (got {})", other.type_name());
            return Err(error("logger", rule));
        }
    }
    let (budget, fleet) = budget::parse_budget(&top, env)?;
    let refresh = top.section("refresh")?;
    let cadence = budget::parse_cadence(refresh.as_ref(), &budget)?;
    let default_pauses = refresh
        .as_ref()
        .is_none_or(|r| !r.has("minIntervalMs") && !r.has("maxIntervalMs"));
    let authority = authority::parse_authority(&top, env)?;
    let breaker = match &refresh {
        Some(refresh) => breaker::parse_refresh_breaker(refresh)?,
        None => None,
    };
    Ok(Config {
        budget,
        cadence,
        default_pauses,
        fleet,
        authority,
        breaker,
    })
}

/// `Sentinel.fromEnv(env, overrides)`: the options the `SPEND_SENTINEL_*` variables of `env` give,
/// with `overrides` merged over them, parsed as the constructor parses its own; `credentialEnv`
/// and `redisEnv` name variables of the same `env`. An error about an option the environment
/// gives names its variable. The [`EnvOptions`] name the errors of what comes after parsing too.
pub fn parse_env_options(
    env: &RawValue,
    overrides: &RawValue,
) -> Result<(Config, EnvOptions), ConfigError> {
    let from_env = EnvOptions::read(env, overrides)?;
    let config = parse_options(from_env.options(), &|name| from_env.lookup(name))
        .map_err(|err| from_env.name(err))?;
    Ok((config, from_env))
}

/// Only the `budget` options (for `computeBudget`): the same rules, the same errors. A fleet's
/// node budget changes at run time, so `computeBudget` refuses `fleet` (the `window` calculator
/// shows a fleet's figures for a number of live nodes: [`parse_calculator_budget`]).
pub fn parse_budget_options(budget: &RawValue) -> Result<Budget, ConfigError> {
    let top = RawValue::Object(vec![("budget".to_owned(), budget.clone())]);
    match budget::parse_budget(&Section::new("", &top, &SENTINEL)?, &|_| None)? {
        (BudgetSource::Static(budget), _) => Ok(budget),
        (BudgetSource::Fleet(_), _) => Err(error(
            "budget.fleet",
            "the calculator works on fixed budgets (nodes or share); a fleet node's budget is \
             its floor plus a grant that changes while it runs",
        )),
    }
}

/// The `budget` options for the `window` calculator: fixed budgets as `new Sentinel` reads them,
/// and fleet budgets from their shape alone (no Redis URL or fleet name needed).
pub fn parse_calculator_budget(budget: &RawValue) -> Result<BudgetSource, ConfigError> {
    let top = RawValue::Object(vec![("budget".to_owned(), budget.clone())]);
    budget::parse_budget_shape(&Section::new("", &top, &SENTINEL)?)
}
