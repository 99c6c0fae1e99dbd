//! The lease task's Redis calls and the release on `close()`, on fake time: tokio's paused clock,
//! read through the sentinel's [`RuntimeClock`] as in `crate::refresher`'s cadence tests (why
//! not a hand-rolled fake: `crate::clock`). The "server" is a listener on this runtime that
//! accepts every connection and reads every request but never answers, as a paused
//! (`SIGSTOP`, `CLIENT PAUSE`) or blackholed Redis does; so a call can only end at its timeout,
//! and every instant seen here is exact (timers fire on whole milliseconds).
//!
//! These hold the upper bounds the JavaScript suites cannot measure on a busy machine: a call
//! gives up one second after it was sent, and the task reports the release done one second
//! after `close()` at most, whether a renewal was in flight or the task was waiting.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use super::connection::{open_client, RedisLink};
use super::scripts::{RELEASE_SCRIPT, RENEW_SCRIPT};
use super::task::Task;
use super::Fleet;
use crate::clock::{Clock, RuntimeClock};
use crate::config::FleetConfig;
use crate::logging::Task as SentinelTask;
use crate::refresher::{Draws, SentinelObserver};
use crate::rules::budget::lease::{example_shape, FleetBudget};
use crate::rules::fleet::{ErrorKind, FleetNode};
use crate::rules::{BudgetSource, CadencePlan, Readiness, SentinelState, Status, Verdict};
use crate::secret::Secret;
use crate::shared_sentinel::SharedSentinel;

/// The bound docs/fleet.md and `close()`'s documentation give: every Redis call, the release
/// included, gives up one second after it was sent.
const ONE_SECOND: Duration = Duration::from_secs(1);

/// Longer than any wait here: a task that stops calling fails the test instead of hanging it.
const BOUND: Duration = Duration::from_secs(24 * 3600);

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

/// Which script a request ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Request {
    Renew,
    Release,
}

/// Hears nothing: the fleet's own state is read directly.
struct Deaf;

impl SentinelObserver for Deaf {
    fn transition(&self, _: Status, _: Readiness) {}
    fn refreshed(&self, _: Verdict, _: Duration) {}
    fn task_failed(&self, _: SentinelTask) {}
}

/// A fleet sentinel's lease task on fake time, against a server that never answers.
struct Unanswered {
    shared: Arc<SharedSentinel>,
    fleet: Arc<Fleet>,
    clock: RuntimeClock,
    /// Each request the server read, and when.
    requests: mpsc::UnboundedReceiver<(Duration, Request)>,
}

impl Unanswered {
    async fn start() -> Self {
        let clock = RuntimeClock::starting_now();
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a local port");
        let port = listener.local_addr().expect("its address").port();
        let (seen, requests) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let seen = seen.clone();
                tokio::spawn(async move {
                    let renew = redis::Script::new(RENEW_SCRIPT).get_hash().to_owned();
                    let release = redis::Script::new(RELEASE_SCRIPT).get_hash().to_owned();
                    let mut read = Vec::new();
                    let mut buffer = [0u8; 4096];
                    // Read and never answer, until the client hangs up.
                    while let Ok(n @ 1..) = socket.read(&mut buffer).await {
                        read.extend_from_slice(&buffer[..n]);
                        let text = String::from_utf8_lossy(&read).into_owned();
                        for (sha, request) in
                            [(&renew, Request::Renew), (&release, Request::Release)]
                        {
                            if let Some(at) = text.find(sha.as_str()) {
                                let _ = seen.send((clock.now(), request));
                                read.drain(..at + sha.len());
                            }
                        }
                    }
                });
            }
        });
        let shape = example_shape();
        let shared = SharedSentinel::with_clock(
            SentinelState::new(BudgetSource::Fleet(FleetBudget::new(shape))),
            CadencePlan::ScaledForFleet,
            Arc::new(clock),
        );
        let fleet = Arc::new(Fleet {
            node: parking_lot::Mutex::new(FleetNode::new(shape)),
            released: tokio::sync::watch::channel(false).0,
        });
        // The client `budget.fleet` makes (no `CLIENT SETINFO` on connect).
        let client = open_client(&FleetConfig {
            redis_url: Secret::new(format!("redis://127.0.0.1:{port}")),
            tls: None,
            name: "close-tests".to_owned(),
            shape,
        })
        .expect("a client");
        let task = Task::new(
            shared.clone(),
            fleet.clone(),
            Arc::new(Deaf),
            RedisLink::new(client),
            "close-tests",
            Draws::seeded(1),
        );
        tokio::spawn(task.run());
        Unanswered {
            shared,
            fleet,
            clock,
            requests,
        }
    }

    fn now(&self) -> Duration {
        self.clock.now()
    }

    /// The next request the server reads: when, and which script.
    async fn next_request(&mut self) -> (Duration, Request) {
        tokio::time::timeout(BOUND, self.requests.recv())
            .await
            .expect("the task calls Redis again")
            .expect("the server runs")
    }

    /// When the task reports the release done (what `close()`'s promise waits for).
    async fn released(&self) -> Duration {
        let mut done = self.fleet.released.subscribe();
        tokio::time::timeout(BOUND, done.wait_for(|released| *released))
            .await
            .expect("the release ends")
            .expect("the task's sender lives in the fleet");
        self.now()
    }

    /// Closes the sentinel now and checks what every close does against a server that never
    /// answers: the release goes out at once (`why`: what it must not wait for first), and the
    /// task is done exactly one second later, when the release's call gives up.
    async fn close_and_expect_the_release_at_once_and_done_a_second_later(&mut self, why: &str) {
        let closed_at = self.now();
        self.shared.close();
        let (asked, request) = self.next_request().await;
        assert_eq!((asked, request), (closed_at, Request::Release), "{why}");
        let after = self.released().await.saturating_sub(closed_at);
        assert!(
            ONE_SECOND <= after && after <= ONE_SECOND + ms(1),
            "the release waited for an answer for exactly one second: done {after:?} after close()"
        );
    }

    fn timeouts(&self) -> u64 {
        self.fleet.status(&self.shared).errors[ErrorKind::Timeout.index()]
    }
}

#[tokio::test(start_paused = true)]
async fn a_call_to_a_server_that_never_answers_gives_up_one_second_after_it_was_sent_as_a_timeout()
{
    let mut fleet = Unanswered::start().await;
    let (sent, request) = fleet.next_request().await;
    assert_eq!(request, Request::Renew, "the first renewal goes at once");
    fleet
        .clock
        .sleep_until((sent + ONE_SECOND).saturating_sub(ms(1)))
        .await;
    assert_eq!(
        fleet.timeouts(),
        0,
        "still waiting 1 ms before its second is up"
    );
    fleet.clock.sleep_until(sent + ONE_SECOND + ms(1)).await;
    assert_eq!(fleet.timeouts(), 1, "given up when its second was up");
}

#[tokio::test(start_paused = true)]
async fn close_during_a_renewal_that_gets_no_answer_sends_the_release_at_once_and_is_done_one_second_later(
) {
    let mut fleet = Unanswered::start().await;
    let (sent, request) = fleet.next_request().await;
    assert_eq!(request, Request::Renew);
    fleet.clock.sleep_until(sent + ms(300)).await;
    fleet
        .close_and_expect_the_release_at_once_and_done_a_second_later(
            "the renewal in flight is dropped and the release goes out at once",
        )
        .await;
}

#[tokio::test(start_paused = true)]
async fn close_while_the_task_waits_to_retry_a_failed_renewal_sends_the_release_at_once_and_is_done_one_second_later(
) {
    let mut fleet = Unanswered::start().await;
    let (sent, _) = fleet.next_request().await;
    // The renewal times out at 1 s; the retry waits a backoff of 100 ms or more (jittered).
    fleet.clock.sleep_until(sent + ONE_SECOND + ms(1)).await;
    assert_eq!(fleet.timeouts(), 1);
    fleet
        .close_and_expect_the_release_at_once_and_done_a_second_later(
            "no retry of the renewal: the release goes out at once",
        )
        .await;
    assert_eq!(fleet.timeouts(), 2, "the release's timeout is counted too");
}
