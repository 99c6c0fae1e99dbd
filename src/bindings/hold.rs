//! `sentinel.hold(name)`: the name read and checked, the hold opened, and the release function
//! handed back. The rule is `rules::readiness_holds`; this file only translates.

use std::sync::Arc;

use napi::bindgen_prelude::*;

use super::errors::{self, Kind};
use super::events::JsSubscribers;
use super::options::type_name;
use crate::logging;
use crate::options::ConfigError;
use crate::rules::readiness_holds::{HoldName, HoldNameError};
use crate::shared_sentinel::SharedSentinel;

/// Opens a hold named `name` and answers the function that releases it (once: a second call does
/// nothing). A bad name throws a `TypeError` (`ERR_SPEND_SENTINEL_CONFIG`) and opens nothing.
pub fn hold<'env>(
    env: &'env Env,
    shared: &Arc<SharedSentinel>,
    subscribers: &Arc<JsSubscribers>,
    name: &Unknown,
) -> Result<Function<'env, (), ()>> {
    let name = read_name(name).map_err(|rule| {
        let error = ConfigError {
            path: "hold: name".to_owned(),
            rule: rule.to_string(),
        };
        errors::throw(
            env.raw(),
            Kind::TypeError,
            errors::CONFIG,
            &error.to_string(),
        )
    })?;
    let (id, open_named) = shared.hold_readiness(name);
    subscribers.log_now(env, &logging::hold_opened(name, open_named));
    // Weak: a release function kept after the sentinel is gone must not keep it alive.
    let shared = Arc::downgrade(shared);
    let subscribers = Arc::downgrade(subscribers);
    env.create_function_from_closure("releaseHold", move |call| {
        let released = shared
            .upgrade()
            .and_then(|shared| shared.release_readiness_hold(id));
        if let (Some(released), Some(subscribers)) = (released, subscribers.upgrade()) {
            subscribers.log_now(call.env, &logging::hold_released(&released));
        }
        Ok(())
    })
}

fn read_name(name: &Unknown) -> std::result::Result<HoldName, HoldNameError> {
    let kind = name.get_type().unwrap_or(ValueType::Unknown);
    if kind != ValueType::String {
        return Err(HoldNameError::NotAString(type_name(kind)));
    }
    let text = name
        .coerce_to_string()
        .and_then(|s| s.into_utf8())
        .and_then(|s| s.as_str().map(str::to_owned))
        .map_err(|_| HoldNameError::NotAString("an unreadable string"))?;
    HoldName::parse(&text)
}
