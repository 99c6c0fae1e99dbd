//! The one private tokio runtime of the process (current_thread, on one named thread, started on
//! first use).
//!
//! Not napi's `tokio_rt`: that starts a worker per CPU at load time; one thread is plenty for a
//! refresh every few seconds per sentinel.

use std::sync::OnceLock;
use std::time::Duration;

use tokio::runtime::{Builder, Handle};

/// Starts the runtime thread on first use and returns a handle to spawn on it.
pub fn handle() -> &'static Handle {
    static HANDLE: OnceLock<Handle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let runtime = Builder::new_current_thread()
            .enable_time()
            .enable_io()
            .build()
            .expect("spend-sentinel: cannot build the tokio runtime");
        let handle = runtime.handle().clone();
        std::thread::Builder::new()
            .name("spend-sentinel".into())
            // The thread parks in `block_on` forever; at process exit it simply stops.
            .spawn(move || runtime.block_on(std::future::pending::<()>()))
            .expect("spend-sentinel: cannot start the runtime thread");
        handle
    })
}

/// Runs `job` on the runtime once `delay` has passed (the `whenReady` timeout): the bindings
/// say what happens, the waiting stays in the shell.
pub fn after(delay: Duration, job: impl FnOnce() + Send + 'static) {
    handle().spawn(async move {
        tokio::time::sleep(delay).await;
        job();
    });
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    #[test]
    fn after_runs_the_job_once_the_delay_has_passed() {
        let (tx, rx) = mpsc::channel();
        let start = Instant::now();
        super::after(Duration::from_millis(60), move || {
            let _ = tx.send(Instant::now());
        });
        let ran = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the job runs");
        assert!(ran - start >= Duration::from_millis(60));
    }
}
