//! `budget.fleet` options → a validated [`FleetConfig`]. Every error names its option path and
//! never echoes the Redis URL or what `redisEnv` held (either may carry a password).

use std::time::Duration;

use reqwest::Url;

use crate::numbers::saturating_u32;
use crate::options::env::without_one_newline;
use crate::options::limits::{FLEET_NAME_BYTES, URL_BYTES};
use crate::options::{check_length, error, is_env_name, ConfigError, Section};
use crate::rules::budget::fixed::BudgetInput;
use crate::rules::budget::lease::FleetShape;
use crate::secret::Secret;

/// A fleet budget as configured.
#[derive(Debug, Clone)]
pub struct FleetConfig {
    /// `redis://` or `rediss://`, possibly with a user and password: never shown.
    pub redis_url: Secret<String>,
    /// `budget.fleet.tls`, for a `rediss://` URL.
    pub tls: Option<FleetTls>,
    /// The fleet's identity; every key is under the hash tag `{spend-sentinel:<name>}`.
    pub name: String,
    pub shape: FleetShape,
}

/// `budget.fleet.tls`: PEM strings, checked at construction.
#[derive(Debug, Clone)]
pub struct FleetTls {
    /// The CA certificates that replace the system's roots.
    pub ca: Option<String>,
    /// The client certificate (chain) and its private key, given together.
    pub client: Option<ClientCertificate>,
}

#[derive(Debug, Clone)]
pub struct ClientCertificate {
    pub cert: String,
    /// A secret: never shown.
    pub key: Secret<String>,
}

/// Parses `budget.fleet` for the budget `input` (b, r and `maxStaleSeconds`).
pub(crate) fn parse_fleet(
    fleet: &Section<'_>,
    input: &BudgetInput,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<FleetConfig, ConfigError> {
    let redis_url = parse_redis_url(fleet, env)?;
    let tls = parse_tls(fleet, redis_url.expose().starts_with("rediss:"))?;
    let name = parse_name(fleet)?;
    Ok(FleetConfig {
        redis_url,
        tls,
        name,
        shape: parse_fleet_shape(fleet, input)?,
    })
}

/// The fleet's shape (`maxNodes`, `reserve`, `leaseSeconds`, `maxSplitSeconds`) for the budget `input`: all of
/// `budget.fleet` the `window` calculator needs (it reaches no Redis).
pub(crate) fn parse_fleet_shape(
    fleet: &Section<'_>,
    input: &BudgetInput,
) -> Result<FleetShape, ConfigError> {
    // Ranges and defaults are the schema's.
    let Some(max_nodes) = fleet.number("maxNodes")? else {
        return Err(error(
            &fleet.path_of("maxNodes"),
            "is required: the most nodes alive at once, surge and terminating pods included",
        ));
    };
    let reserve = fleet.number_or_default("reserve")?;
    let lease_seconds = fleet.number_or_default("leaseSeconds")?;
    let max_split_seconds = fleet.number_or_default("maxSplitSeconds")?;
    Ok(FleetShape {
        fleet_ceiling_units: input.fleet_ceiling_units,
        max_units_per_second: input.max_units_per_second,
        // A whole number from 1 to 10000.
        max_nodes: saturating_u32(max_nodes),
        reserve,
        // In range: 5 to 600 s.
        lease: Duration::from_secs_f64(lease_seconds),
        // In range: 0 to 120 s.
        max_split: Duration::from_secs_f64(max_split_seconds),
        max_stale: input.max_stale_seconds.map(Duration::from_secs_f64),
    })
}

fn parse_tls(fleet: &Section<'_>, tls_url: bool) -> Result<Option<FleetTls>, ConfigError> {
    let Some(tls) = fleet.section("tls")? else {
        return Ok(None);
    };
    if !tls_url {
        return Err(error(
            &fleet.path_of("tls"),
            "needs a rediss:// URL in budget.fleet.redis (TLS); redis:// is plain TCP",
        ));
    }
    let ca = tls.string("ca")?.map(str::to_owned);
    if let Some(ca) = &ca {
        if !holds_certificates(ca) {
            return Err(error(
                &tls.path_of("ca"),
                "must hold at least one PEM certificate (-----BEGIN CERTIFICATE-----)",
            ));
        }
    }
    let client = match (tls.string("cert")?, tls.string("key")?) {
        (None, None) => None,
        (Some(_), None) | (None, Some(_)) => {
            return Err(error(
                &tls.path_of("key"),
                "give budget.fleet.tls.cert and budget.fleet.tls.key together (a client \
                 certificate and its private key)",
            ))
        }
        (Some(cert), Some(key)) => {
            if !holds_certificates(cert) {
                return Err(error(
                    &tls.path_of("cert"),
                    "must hold at least one PEM certificate (-----BEGIN CERTIFICATE-----)",
                ));
            }
            // The key is never echoed: only whether it is a key that goes with the certificate.
            let pair = format!("{cert}\n{key}");
            if reqwest::Identity::from_pem(pair.as_bytes()).is_err() {
                return Err(error(
                    &tls.path_of("key"),
                    "must be a PEM private key (PKCS #8, PKCS #1 or SEC1: -----BEGIN ... PRIVATE \
                     KEY-----) for budget.fleet.tls.cert",
                ));
            }
            Some(ClientCertificate {
                cert: cert.to_owned(),
                key: Secret::new(key.to_owned()),
            })
        }
    };
    Ok(Some(FleetTls { ca, client }))
}

fn holds_certificates(pem: &str) -> bool {
    reqwest::Certificate::from_pem_bundle(pem.as_bytes()).is_ok_and(|certs| !certs.is_empty())
}

fn parse_name(fleet: &Section<'_>) -> Result<String, ConfigError> {
    let path = fleet.path_of("name");
    let name = fleet.string("name")?;
    let valid = |c: char| c.is_ascii_alphanumeric() || "_.:-".contains(c);
    match name {
        Some(name) if !name.is_empty() && name.chars().all(valid) => Ok(name.to_owned()),
        Some(_) => Err(error(
            &path,
            format!("must be 1–{FLEET_NAME_BYTES} of the characters A-Z a-z 0-9 _ . : -"),
        )),
        None => Err(error(
            &path,
            "is required: every node sharing the budget uses the same name",
        )),
    }
}

fn parse_redis_url(
    fleet: &Section<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Secret<String>, ConfigError> {
    let direct = fleet.string("redis")?;
    let named = fleet.string("redisEnv")?;
    let (path, url) = match (direct, named) {
        (Some(_), Some(_)) => {
            return Err(error(
                &fleet.path_of("redisEnv"),
                "give either budget.fleet.redis or budget.fleet.redisEnv, not both",
            ))
        }
        (None, None) => {
            return Err(error(
                &fleet.path_of("redis"),
                "is required (a redis:// or rediss:// URL), or give budget.fleet.redisEnv",
            ))
        }
        (Some(url), None) => (fleet.path_of("redis"), url.to_owned()),
        (None, Some(name)) => {
            let path = fleet.path_of("redisEnv");
            if !is_env_name(name) {
                return Err(error(
                    &path,
                    "must be the name of an environment variable (letters, digits and _, not \
                     starting with a digit), not its value",
                ));
            }
            let value = env(name).map(|v| without_one_newline(&v).to_owned());
            let value = value.filter(|v| !v.is_empty()).ok_or_else(|| {
                error(
                    &path,
                    "the environment variable it names is not set or empty",
                )
            })?;
            check_length(&path, &value, URL_BYTES)?;
            (path, value)
        }
    };
    check_redis_url(&path, &url)?;
    Ok(Secret::new(url))
}

/// `redis://` or `rediss://` with a host; the message never shows the URL.
fn check_redis_url(path: &str, url: &str) -> Result<(), ConfigError> {
    let parsed = Url::parse(url).map_err(|_| {
        error(
            path,
            "must be an absolute redis:// or rediss:// URL (redis://[user:password@]host[:port][/db])",
        )
    })?;
    if !matches!(parsed.scheme(), "redis" | "rediss") {
        return Err(error(path, "must use redis:// or rediss://"));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(error(path, "must name a host (redis://host:port)"));
    }
    Ok(())
}
