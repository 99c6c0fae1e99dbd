//! Every error that reaches JavaScript is made here, with a stable `code`.
//!
//! The helpers throw on the env and return `Status::PendingException`, which napi-rs passes
//! through untouched.

use std::ffi::CString;

use napi::bindgen_prelude::*;
use napi::sys;

/// A bad option: an `Error` whose message names the option path and the rule.
pub const CONFIG: &str = "ERR_SPEND_SENTINEL_CONFIG";
/// `Sentinel` called without `new` (or with a `new.target` outside its class): a `TypeError`.
pub const CONSTRUCT: &str = "ERR_SPEND_SENTINEL_CONSTRUCT";
/// A bad `admit(units)` argument: a `TypeError`.
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
    unsafe {
        check_status!(sys::napi_create_string_utf8(
            env,
            code_c.as_ptr(),
            code.len() as isize,
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

/// Throws a new error on `env`; use as `return Err(throw(...))`.
pub fn throw(env: sys::napi_env, kind: Kind, code: &str, message: &str) -> Error {
    match create(env, kind, code, message) {
        Ok(error) => {
            unsafe { sys::napi_throw(env, error) };
            Error::from_status(Status::PendingException)
        }
        Err(err) => err,
    }
}
