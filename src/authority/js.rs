//! `authority: { inspect }`: a JavaScript function answers with one of the four outcome strings.
//! A throw, a rejection, any other value, or no answer in time is `Indeterminate`, each with its
//! own cause. What was thrown, rejected or wrongly answered is never kept or shown beyond its
//! type: it may be anything, a secret included.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use napi::bindgen_prelude::*;
use tokio::sync::oneshot;

use crate::js_thread::JsThread;
use crate::rules::{JsType, RefreshCause, Verdict};

pub struct JsAuthority {
    inspect: Arc<FunctionRef<(), Unknown<'static>>>,
    js_thread: Arc<JsThread>,
    /// Checked on the JS thread just before calling `inspect`, so that no call starts after
    /// `close()` has returned there.
    closed: Arc<AtomicBool>,
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

    pub async fn check(&self) -> Verdict {
        let (reply, answer) = oneshot::channel();
        let inspect = self.inspect.clone();
        let closed = self.closed.clone();
        self.js_thread.run(move |env| {
            if !closed.load(Ordering::Acquire) {
                call_inspect(&env, &inspect, reply);
            }
        });
        match answer.await {
            Ok(verdict) => verdict,
            // No answer will come: the sentinel is closing (`inspect` was not called), the
            // environment is gone, or the promise was collected unsettled. Like a hang, the
            // refresh ends with the close or at `refresh.timeoutMs` (`inspect_timeout`).
            Err(_) => std::future::pending().await,
        }
    }
}

/// Calls `inspect()` on the JS thread; `reply` gets the verdict now, or once the promise it
/// returned settles.
fn call_inspect(env: &Env, inspect: &FunctionRef<(), Unknown<'static>>, reply: Reply) {
    let Ok(function) = inspect.borrow_back(env) else {
        return;
    };
    // A throw is caught (napi clears it).
    let Ok(value) = function.call(()) else {
        let _ = reply.send(Verdict::Indeterminate(RefreshCause::InspectThrew));
        return;
    };
    if value.is_promise().unwrap_or(false) {
        // Attaching the callbacks fails only with a broken environment; the dropped `reply`
        // then ends the refresh at its timeout.
        let _ = settle_later(env, &value, reply);
    } else if let Some(verdict) = verdict_of(&value) {
        let _ = reply.send(verdict);
    }
}

type Reply = oneshot::Sender<Verdict>;

/// Replies once `promise` settles: the verdict of its value, or `inspect_rejected`.
fn settle_later(env: &Env, promise: &Unknown, reply: Reply) -> Result<()> {
    // Whichever callback runs first replies (a thenable could call both).
    let fulfilled = Rc::new(Cell::new(Some(reply)));
    let rejected = fulfilled.clone();
    // SAFETY: `promise` is a live promise on this env's thread.
    let promise = unsafe { PromiseRaw::<Unknown>::from_napi_value(env.raw(), promise.raw()) }?;
    promise
        .then(move |settled: CallbackContext<Unknown>| {
            if let (Some(reply), Some(verdict)) = (fulfilled.take(), verdict_of(&settled.value)) {
                let _ = reply.send(verdict);
            }
            Ok(())
        })?
        .catch(move |_: CallbackContext<Unknown>| {
            if let Some(reply) = rejected.take() {
                let _ = reply.send(Verdict::Indeterminate(RefreshCause::InspectRejected));
            }
            Ok(())
        })?;
    Ok(())
}

/// The verdict of what `inspect` answered (a promise's value, or a value returned at once);
/// `None` only if napi cannot read the value.
fn verdict_of(value: &Unknown) -> Option<Verdict> {
    let kind = value.get_type().ok()?;
    if kind != ValueType::String {
        return Some(Verdict::BadValue(js_type(kind)));
    }
    let text = value.coerce_to_string().ok()?.into_utf8().ok()?;
    Some(Verdict::of_inspect_answer(text.as_str().ok()?))
}

/// `typeof`'s name for a napi value type (an external is an `'object'` to JavaScript).
fn js_type(kind: ValueType) -> JsType {
    match kind {
        ValueType::Undefined => JsType::Undefined,
        ValueType::Null => JsType::Null,
        ValueType::Boolean => JsType::Boolean,
        ValueType::Number => JsType::Number,
        ValueType::BigInt => JsType::BigInt,
        ValueType::String => JsType::String,
        ValueType::Symbol => JsType::Symbol,
        ValueType::Function => JsType::Function,
        ValueType::Object | ValueType::External | ValueType::Unknown => JsType::Object,
    }
}
