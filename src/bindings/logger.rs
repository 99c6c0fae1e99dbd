//! The `logger` option: any object with pino-style `info/warn/error(obj, msg)` methods. What it
//! hears, and at which level, is `crate::logging`; this file hands each line to it.

use napi::bindgen_prelude::*;

use super::errors::{self, Kind};
use super::types::millisecond_seconds;
use crate::logging::{Field, Level, Line};
use crate::options::catalog::LOGGER_RULE;

pub struct JsLogger(ObjectRef<false>);

impl JsLogger {
    /// The `logger` option as the config's read saw it (`CodeOptions`; already type-checked);
    /// `None` when not given. Its methods are checked here, where a prototype's can be seen (a
    /// pino logger keeps them there), and looked up again for each line (`logger.warn(obj, msg)`).
    pub fn from_option(env: &Env, logger: Option<Unknown>) -> Result<Option<JsLogger>> {
        let Some(logger) = logger else {
            return Ok(None);
        };
        if logger.get_type()? != ValueType::Object {
            return Ok(None);
        }
        // SAFETY: `logger` is an object (checked above).
        let object: Object = unsafe { logger.cast()? };
        for level in Level::ALL {
            let method: Unknown = object.get_named_property(level.as_str())?;
            if method.get_type()? != ValueType::Function {
                return Err(errors::throw(
                    env.raw(),
                    Kind::Error,
                    errors::CONFIG,
                    &format!("logger: {LOGGER_RULE} (no {} method)", level.as_str()),
                ));
            }
        }
        Ok(Some(JsLogger(object.create_ref::<false>()?)))
    }

    /// Calls `logger[level](fields, message)` with `this` = the logger. A logger that throws is
    /// ignored (its exception is cleared): logging must not break the sentinel.
    pub fn log(&self, env: &Env, line: &Line) -> Result<()> {
        let logger = self.0.get_value(env)?;
        let method: Function<FnArgs<(Object, String)>, Unknown> =
            logger.get_named_property(line.level.as_str())?;
        let mut fields = Object::new(env)?;
        for &(name, value) in &line.fields {
            match value {
                Field::Text(text) => fields.set_named_property(name, text)?,
                Field::Seconds(age) => fields.set_named_property(name, millisecond_seconds(age))?,
                Field::Milliseconds(took) => {
                    fields.set_named_property(name, took.as_secs_f64() * 1000.0)?
                }
                Field::Number(number) => fields.set_named_property(name, number)?,
                Field::Null => fields.set_named_property(name, Null)?,
                Field::Hold(hold) => fields.set_named_property(name, hold.as_str())?,
            }
        }
        let arguments = FnArgs::from((fields, line.message.clone()));
        if method.apply(logger, arguments).is_err() {
            // `apply` leaves the logger's exception pending; left there, Node would raise it
            // as an uncaught exception once this callback returns.
            let mut exception = std::ptr::null_mut();
            // SAFETY: `env` is the env of the JS-thread callback in progress; `exception` is a
            // valid out-pointer.
            let status =
                unsafe { napi::sys::napi_get_and_clear_last_exception(env.raw(), &mut exception) };
            check_status!(status)?;
        }
        Ok(())
    }

    pub fn release(self, env: &Env) -> Result<()> {
        self.0.unref(env)
    }
}
