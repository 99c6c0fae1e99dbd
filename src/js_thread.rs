//! Running Rust code on the JavaScript thread from the runtime thread.
//!
//! One weak (unref'd) threadsafe function per sentinel, called `NonBlocking`: it keeps no handle
//! on the event loop, and a call can never wait on a JS thread that is itself waiting in
//! `close()`. Once the environment is gone, jobs are dropped unrun.

use napi::bindgen_prelude::*;
use napi::sys;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};

/// Work for the JavaScript thread; it receives that thread's `Env`.
pub type Job = Box<dyn FnOnce(Env) + Send>;

pub struct JsThread {
    tsfn: ThreadsafeFunction<Job, (), (), Status, false, true>,
}

/// The carrier function's body: napi-rs calls it after each job (which runs in the threadsafe
/// function's callback), and there is nothing left to do. Safe: it touches none of its arguments.
extern "C" fn do_nothing(_env: sys::napi_env, _info: sys::napi_callback_info) -> sys::napi_value {
    std::ptr::null_mut()
}

impl JsThread {
    pub fn new(env: &Env) -> Result<Self> {
        let carrier = env.create_function::<(), ()>("spendSentinelJob", do_nothing)?;
        let tsfn = carrier
            .build_threadsafe_function::<Job>()
            .weak::<true>()
            .callee_handled::<false>()
            .build_callback(|ctx| {
                (ctx.value)(ctx.env);
                Ok(())
            })?;
        Ok(JsThread { tsfn })
    }

    /// Queues `job`; returns false when the environment is shutting down.
    pub fn run(&self, job: impl FnOnce(Env) + Send + 'static) -> bool {
        self.tsfn
            .call(Box::new(job), ThreadsafeFunctionCallMode::NonBlocking)
            == Status::Ok
    }
}
