//! The `logger` option: any object with pino-style `info/warn/error(obj, msg)` methods gets one
//! line per status change and per refresh that did not prove the credential valid. Lines carry
//! codes only (status, reason, outcome, age, duration): never the credential, the URL, or what
//! the authority answered.

use std::time::Duration;

use napi::bindgen_prelude::*;

use super::errors::{self, Kind};
use crate::refresher::Task;
use crate::rules::{Outcome, Readiness, Reason, Status};

pub struct JsLogger(ObjectRef<false>);

impl JsLogger {
    /// Reads `options.logger` (already type-checked by the config); `None` when not given.
    pub fn from_options(env: &Env, options: &Unknown) -> Result<Option<JsLogger>> {
        // SAFETY: the options are an object: the config accepted them.
        let options: Object = unsafe { options.cast()? };
        let logger: Unknown = options.get_named_property("logger")?;
        if logger.get_type()? != ValueType::Object {
            return Ok(None);
        }
        // SAFETY: `logger` is an object (checked above).
        let object: Object = unsafe { logger.cast()? };
        for level in ["info", "warn", "error"] {
            let method: Unknown = object.get_named_property(level)?;
            if method.get_type()? != ValueType::Function {
                return Err(errors::throw(
                    env.raw(),
                    Kind::Error,
                    errors::CONFIG,
                    "logger: must have info, warn and error methods (pino-style: (obj, msg))",
                ));
            }
        }
        Ok(Some(JsLogger(object.create_ref::<false>()?)))
    }

    pub fn transition(&self, env: &Env, from: Status, now: &Readiness) {
        let level = match (now.status, now.reason) {
            (Status::Ready, _) => "info",
            (_, Reason::InvalidCredential | Reason::CapabilityMissing) => "error",
            _ => "warn",
        };
        let message = format!(
            "spend-sentinel: {} -> {} ({})",
            from.as_str(),
            now.status.as_str(),
            now.reason.as_str()
        );
        let age = now.evidence_age.map(super::types::millisecond_seconds);
        let _ = self.log(env, level, &message, |fields| {
            fields.set_named_property("event", "spend_sentinel.transition")?;
            fields.set_named_property("from", from.as_str())?;
            fields.set_named_property("to", now.status.as_str())?;
            fields.set_named_property("reason", now.reason.as_str())?;
            match age {
                Some(age) => fields.set_named_property("evidenceAgeSeconds", age),
                None => fields.set_named_property("evidenceAgeSeconds", Null),
            }
        });
    }

    /// A refresh that answered anything but `valid`.
    pub fn refresh_failed(&self, env: &Env, outcome: Outcome, took: Duration) {
        let level = match outcome {
            Outcome::Indeterminate => "warn",
            _ => "error",
        };
        let message = format!("spend-sentinel: refresh {}", outcome.as_str());
        let _ = self.log(env, level, &message, |fields| {
            fields.set_named_property("event", "spend_sentinel.refresh")?;
            fields.set_named_property("outcome", outcome.as_str())?;
            fields.set_named_property("durationMs", took.as_secs_f64() * 1000.0)
        });
    }

    /// A task of the sentinel panicked (a defect); the sentinel now fails closed.
    pub fn task_failed(&self, env: &Env, task: Task) {
        let message = format!(
            "spend-sentinel: the {} task stopped on an internal error; failing closed",
            task.as_str()
        );
        let _ = self.log(env, "error", &message, |fields| {
            fields.set_named_property("event", "spend_sentinel.internal_error")?;
            fields.set_named_property("task", task.as_str())
        });
    }

    /// Calls `logger[level](fields, message)` with `this` = the logger. A logger that throws is
    /// ignored (its exception is cleared): logging must not break the sentinel.
    fn log(
        &self,
        env: &Env,
        level: &str,
        message: &str,
        fill: impl FnOnce(&mut Object) -> Result<()>,
    ) -> Result<()> {
        let logger = self.0.get_value(env)?;
        let method: Function<FnArgs<(Object, String)>, Unknown> =
            logger.get_named_property(level)?;
        let mut fields = Object::new(env)?;
        fill(&mut fields)?;
        if method
            .apply(logger, FnArgs::from((fields, message.to_owned())))
            .is_err()
        {
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
