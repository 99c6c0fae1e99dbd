//! `Sentinel.fromEnv(env = process.env, overrides)`: the constructor's options from environment
//! variables (`crate::options::env` names them after the catalog's option paths), with
//! `overrides` merged over them; the code-only options (`logger`, `authority.inspect`) come from
//! `overrides`, from the one read the config validates.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::errors::Kind;
use super::options::{read_options, to_raw};
use super::sentinel::{config_error, Sentinel};
use crate::config::parse_env_options;

#[napi]
impl Sentinel {
    /// `new Sentinel(options)` with the options read from environment variables named
    /// `SPEND_SENTINEL_` + the option path in upper snake case (`budget.fleet.maxNodes` →
    /// `SPEND_SENTINEL_BUDGET_FLEET_MAX_NODES`; the list: docs/api.md, Options from the
    /// environment). Numbers are read strictly, booleans are `true` or `false`, lists are
    /// comma-separated; a secret (credential, Redis URL, TLS key) loses one trailing newline.
    /// `credentialEnv` and `redisEnv` name variables of the same `env`. `overrides` (any part of
    /// the options) is merged over the environment's key by key, and is how code gives `logger`
    /// and `authority.inspect`. An unknown `SPEND_SENTINEL_*` variable or a bad value throws an
    /// `Error` (`ERR_SPEND_SENTINEL_CONFIG`) naming the variable, never showing a secret.
    #[napi(
        ts_args_type = "env?: Record<string, string | undefined>, overrides?: import('./js/option-types').SentinelOverrides",
        ts_return_type = "Sentinel"
    )]
    pub fn from_env<'env>(
        env: &'env Env,
        vars: Unknown<'env>,
        overrides: Unknown<'env>,
    ) -> Result<ClassInstance<'env, Sentinel>> {
        let vars = match vars.get_type()? {
            ValueType::Undefined => process_env(env)?,
            _ => vars,
        };
        let (overrides, code) = read_options(&overrides)?;
        let (config, from_env) = parse_env_options(&to_raw(&vars)?, &overrides)
            .map_err(|e| config_error(env, Kind::Error, &e))?;
        let sentinel = Sentinel::start(env, config, &code, &|e| from_env.name(e))?;
        let instance = sentinel.into_instance(env)?;
        instance.install_hot_path(env, &instance.as_object(env))?;
        Ok(instance)
    }
}

/// `process.env`, the default `env`.
fn process_env(env: &Env) -> Result<Unknown<'_>> {
    let process: Object = env.get_global()?.get_named_property("process")?;
    process.get_named_property("env")
}
