//! `authority: { inspect }`: a JavaScript function answers with one of the four outcome strings.
//! A rejection, a throw, any other value, or no answer in time is `Indeterminate`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use napi::bindgen_prelude::*;
use tokio::sync::oneshot;

use crate::js_thread::JsThread;
use crate::rules::Outcome;

pub struct JsAuthority {
    inspect: Arc<FunctionRef<(), Unknown<'static>>>,
    js_thread: Arc<JsThread>,
    /// Checked on the JS thread just before calling `inspect`, so that no call starts after
    /// `close()` has returned there.
    closed: Arc<AtomicBool>,
}

/// What `inspect()` gave back, carried off the JS thread.
enum Answer {
    Now(String),
    Later(Promise<String>),
}

impl JsAuthority {
    pub fn new(
        inspect: FunctionRef<(), Unknown<'static>>,
        js_thread: Arc<JsThread>,
        closed: Arc<AtomicBool>,
    ) -> Self {
        JsAuthority {
            inspect: Arc::new(inspect),
            js_thread,
            closed,
        }
    }

    pub async fn check(&self) -> Outcome {
        let (reply, answer) = oneshot::channel();
        let inspect = self.inspect.clone();
        let closed = self.closed.clone();
        let queued = self.js_thread.run(move |env| {
            if closed.load(Ordering::Acquire) {
                return;
            }
            let _ = reply.send(call_inspect(&env, &inspect));
        });
        if !queued {
            return Outcome::Indeterminate;
        }
        match answer.await {
            Ok(Some(Answer::Now(text))) => Outcome::from_answer(&text),
            Ok(Some(Answer::Later(promise))) => match promise.await {
                Ok(text) => Outcome::from_answer(&text),
                Err(_) => Outcome::Indeterminate,
            },
            _ => Outcome::Indeterminate,
        }
    }
}

/// Calls `inspect()` on the JS thread. A throw is caught (napi clears it) and becomes `None`.
fn call_inspect(env: &Env, inspect: &FunctionRef<(), Unknown<'static>>) -> Option<Answer> {
    let value = inspect.borrow_back(env).ok()?.call(()).ok()?;
    match value.get_type().ok()? {
        ValueType::String => value
            .coerce_to_string()
            .ok()?
            .into_utf8()
            .ok()?
            .as_str()
            .ok()
            .map(|s| Answer::Now(s.to_owned())),
        ValueType::Object if value.is_promise().ok()? => {
            // SAFETY: `value` is a live promise on this env's thread.
            let promise =
                unsafe { Promise::<String>::from_napi_value(env.raw(), value.raw()) }.ok()?;
            Some(Answer::Later(promise))
        }
        _ => None,
    }
}
