//! The errors the native addon throws on purpose, each with a stable `code`, are made here. (The
//! JavaScript layer makes coded errors of its own, e.g. js/options.js, js/breaker.js and
//! js/native-error.js; a napi call that fails surfaces as napi-rs's own error, whose `code` is the
//! napi status, e.g. `GenericFailure`.)
//!
//! The helpers throw on the env and return `Status::PendingException`, which napi-rs passes
//! through untouched.

use std::ffi::CString;

use napi::bindgen_prelude::*;
use napi::sys;

/// A bad option (an `Error`) or a bad argument to a method (a `TypeError`); the message names the
/// option path or argument and the rule.
pub const CONFIG: &str = "ERR_SPEND_SENTINEL_CONFIG";
/// `Sentinel` called without `new` (or with a `new.target` outside its class): a `TypeError`.
pub const CONSTRUCT: &str = "ERR_SPEND_SENTINEL_CONSTRUCT";
/// A bad units argument (`admit`, `reserve`, `extend`, `settle`, `charge`): a `TypeError`.
pub const UNITS: &str = "ERR_SPEND_SENTINEL_UNITS";
/// `whenReady` gave up.
pub const TIMEOUT: &str = "ERR_SPEND_SENTINEL_TIMEOUT";
/// `whenReady` pending when the sentinel closed.
pub const CLOSED: &str = "ERR_SPEND_SENTINEL_CLOSED";

#[derive(Clone, Copy)]
pub enum Kind {
    Error,
    TypeError,
}

/// Builds a JS error object with `code`.
///
/// `env` is trusted as napi-rs trusts the env of an `Env` (`Env::from_raw` is safe): every
/// caller passes the env of a call or callback in progress on this thread.
pub fn create(
    env: sys::napi_env,
    kind: Kind,
    code: &str,
    message: &str,
) -> Result<sys::napi_value> {
    let mut code_value = std::ptr::null_mut();
    let mut message_value = std::ptr::null_mut();
    let mut error = std::ptr::null_mut();
    let code_c = CString::new(code).unwrap_or_default();
    let message_c = CString::new(message.replace('\0', "")).unwrap_or_default();
    // SAFETY: `env` is live on this thread (see above); both strings are NUL-terminated, outlive
    // the calls and are passed with their length (or -1: up to the NUL); every out-pointer is a
    // local.
    unsafe {
        check_status!(sys::napi_create_string_utf8(
            env,
            code_c.as_ptr(),
            code_c.as_bytes().len().cast_signed(),
            &mut code_value
        ))?;
        check_status!(sys::napi_create_string_utf8(
            env,
            message_c.as_ptr(),
            -1,
            &mut message_value
        ))?;
        let create = match kind {
            Kind::Error => sys::napi_create_error,
            Kind::TypeError => sys::napi_create_type_error,
        };
        check_status!(create(env, code_value, message_value, &mut error))?;
    }
    Ok(error)
}

/// Throws a new error on `env` (trusted as in [`create`]); use as `return Err(throw(...))`.
pub fn throw(env: sys::napi_env, kind: Kind, code: &str, message: &str) -> Error {
    let error = match create(env, kind, code, message) {
        Ok(error) => error,
        Err(err) => return err,
    };
    // SAFETY: `env` is live on this thread (see `create`); `error` was just made on it.
    let status = unsafe { sys::napi_throw(env, error) };
    match check_status!(status) {
        Ok(()) => Error::from_status(Status::PendingException),
        // Either an exception was already pending (napi-rs leaves it to propagate) or napi-rs
        // throws this error itself, with the napi status as its code.
        Err(err) => err,
    }
}
