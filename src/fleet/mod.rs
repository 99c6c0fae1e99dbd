//! The fleet budget's I/O: one task per fleet sentinel, on the private runtime, that renews this
//! node's lease in Redis, settles and ends holds along the way, and releases the grant on close.
//! Every decision is [`FleetNode`]'s (`crate::rules::fleet`); this module calls Redis when it says
//! so and sleeps otherwise. `admit()` and `readiness()` never wait on it: they read the lease the
//! task last handed to the sentinel state, and the lease deadline takes the grant away by itself.

#[cfg(test)]
mod close_tests;
pub mod connection;
#[cfg(test)]
mod explorer;
#[cfg(test)]
pub(crate) mod lua_redis;
pub mod metrics;
#[cfg(test)]
mod script_tests;
mod scripts;
#[cfg(test)]
mod simulation;
mod task;
#[cfg(test)]
mod test_redis;

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::watch;

use crate::refresher::{Draws, SentinelObserver};
use crate::rules::budget::lease::FleetShape;
use crate::rules::fleet::{FleetNode, FleetStatus};
use crate::runtime;
use crate::shared_sentinel::SharedSentinel;
use connection::{RedisLink, CALL_TIMEOUT};

/// `close()` waits for the release at most this long. The release is bounded by one Redis call
/// ([`CALL_TIMEOUT`]); this only guards against a task that never reports.
const RELEASE_WAIT: Duration = CALL_TIMEOUT.saturating_add(Duration::from_millis(200));

/// The part of the fleet that the bindings read: the node's decisions and what Redis last said,
/// and whether the release on close is done.
pub struct Fleet {
    node: Mutex<FleetNode>,
    released: watch::Sender<bool>,
}

impl Fleet {
    /// The fleet as this node sees it now (the grant is in the sentinel state, so it lapses at
    /// its deadline by itself).
    pub fn status(&self, shared: &SharedSentinel) -> FleetStatus {
        let now = shared.now();
        let lease = shared.with_state(|state| state.budget().fleet().and_then(|f| f.lease()));
        self.node.lock().status(now, lease)
    }

    /// Runs `job` on the runtime once the grant has been released after `close()` (or the
    /// release gave up), and after [`RELEASE_WAIT`] at most.
    pub fn on_released(&self, job: impl FnOnce() + Send + 'static) {
        let mut rx = self.released.subscribe();
        runtime::handle().spawn(async move {
            let _ = tokio::time::timeout(RELEASE_WAIT, rx.wait_for(|done| *done)).await;
            job();
        });
    }
}

/// Starts leasing for `shared`. `client` was built from the configured URL and TLS settings.
pub fn start(
    shared: Arc<SharedSentinel>,
    shape: FleetShape,
    name: &str,
    client: redis::Client,
    observer: Arc<dyn SentinelObserver>,
) -> Arc<Fleet> {
    let fleet = Arc::new(Fleet {
        node: Mutex::new(FleetNode::new(shape)),
        released: watch::channel(false).0,
    });
    let task = task::Task::new(
        shared,
        fleet.clone(),
        observer,
        RedisLink::new(client),
        name,
        Draws::from_entropy(),
    );
    runtime::handle().spawn(task.run());
    fleet
}
