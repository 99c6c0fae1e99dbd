//! The lease task: asks [`FleetNode`] what to do, does it (a Redis call, or a sleep), and hands
//! back what came of it. Nothing here decides: each step of an exchange is a function of
//! `rules::fleet_exchange`, run on the node and the sentinel state under both locks.

use std::sync::Arc;
use std::time::Duration;

use super::connection::{RedisLink, CALL_TIMEOUT};
use super::{scripts, Fleet};
use crate::refresher::{Draws, SentinelObserver};
use crate::rules::fleet::{Confirm, ErrorKind, FleetEvent, FleetNode, FleetReply};
use crate::rules::fleet_exchange::{self, NextStep};
use crate::rules::SentinelState;
use crate::shared_sentinel::SharedSentinel;

/// `WAIT` gets what is left of the renewal's second, and at least this.
const LEAST_WAIT: Duration = Duration::from_millis(100);

pub(super) struct Task {
    shared: Arc<SharedSentinel>,
    fleet: Arc<Fleet>,
    observer: Arc<dyn SentinelObserver>,
    link: RedisLink,
    key: String,
    /// This node's id in the fleet: new for every sentinel, so a restart is a new node.
    node_id: String,
    /// The backoff's and the renewals' jitter.
    draws: Draws,
}

fn random_id() -> String {
    format!("{:016x}", rand::random::<u64>())
}

impl Task {
    pub(super) fn new(
        shared: Arc<SharedSentinel>,
        fleet: Arc<Fleet>,
        observer: Arc<dyn SentinelObserver>,
        link: RedisLink,
        name: &str,
        draws: Draws,
    ) -> Self {
        Task {
            shared,
            fleet,
            observer,
            link,
            key: scripts::fleet_key(name),
            node_id: random_id(),
            draws,
        }
    }

    pub(super) async fn run(mut self) {
        while !self.shared.is_closed() {
            let due = match self.exchange(fleet_exchange::next_step) {
                NextStep::GaveBack => continue,
                NextStep::RenewAt(due) => due,
            };
            if self.shared.now() >= due {
                // A renewal in flight when `close()` comes is dropped: the release goes out at
                // once, with a later sequence number, so the renewal cannot undo it.
                let shared = self.shared.clone();
                tokio::select! {
                    biased;
                    () = shared.until_closed() => {}
                    () = self.renew() => {}
                }
                continue;
            }
            tokio::select! {
                () = self.shared.until_closed() => {}
                () = self.shared.clock().sleep_until(due) => {}
                () = self.shared.verified.notified() => {}
            }
        }
        self.release().await;
        self.fleet.released.send_replace(true);
    }

    fn node(&self) -> parking_lot::MutexGuard<'_, FleetNode> {
        self.fleet.node.lock()
    }

    /// Runs `step` on the node and its sentinel state, locked in that order, with the time of
    /// now: a ledger read, the decision on it and the lease it sets are one step, so no
    /// admission comes between them.
    fn exchange<T>(
        &self,
        step: impl FnOnce(&mut FleetNode, &mut SentinelState, Duration) -> T,
    ) -> T {
        let mut node = self.node();
        self.shared
            .with_fleet_budget(|state, now| step(&mut node, state, now))
    }

    /// Hands the events to the logger.
    fn tell(&self, events: Vec<FleetEvent>) {
        for event in events {
            self.observer.fleet_event(&event);
        }
    }

    fn failed(&mut self, kind: ErrorKind) {
        let draw = self.draws.uniform();
        let events = self.node().call_failed(self.shared.now(), kind, draw);
        self.tell(events);
    }

    async fn renew(&mut self) {
        // Redis may lower the reservation to `keep`: the node uses no more until the answer.
        let request = self.exchange(fleet_exchange::send_renewal);
        let shape = *self.node().shape();
        let call = scripts::renew(&self.key, &self.node_id, &random_id(), &shape, &request);
        let answer = self.link.invoke(&call).await.and_then(|fields| {
            FleetReply::parse_renewal(&fields).map_err(|_| ErrorKind::Malformed)
        });
        let answer = match answer {
            Ok(answer) => answer,
            Err(kind) => return self.failed(kind),
        };
        let draw = self.draws.uniform();
        let answered = self.exchange(|node, state, now| {
            fleet_exchange::apply_renewal_answer(node, state, &request, &answer, now, draw)
        });
        self.tell(answered.events);
        if let Some(confirm) = answered.confirm {
            self.confirm(confirm, request.sent_at).await;
        }
    }

    /// Growth is used once `WAIT` says every replica connected at the renewal has it, within
    /// what is left of the renewal's second.
    async fn confirm(&mut self, confirm: Confirm, sent_at: Duration) {
        let spent = self.shared.now().saturating_sub(sent_at);
        let bound = CALL_TIMEOUT.saturating_sub(spent).max(LEAST_WAIT);
        match self.link.wait(confirm.replicas, bound).await {
            Ok(acknowledged) => {
                self.exchange(|node, state, _| {
                    fleet_exchange::apply_confirmation(node, state, &confirm, acknowledged)
                });
            }
            Err(kind) => self.failed(kind),
        }
    }

    /// On close: the unused grant returns to the pool, the used part stays charged. Bounded by
    /// one call's timeout in all; a connection that broke before is re-opened for it.
    async fn release(&mut self) {
        let request =
            self.exchange(|node, state, now| fleet_exchange::send_release(node, state, now));
        if let Some(request) = request {
            let shape = *self.node().shape();
            let call = scripts::release(&self.key, &self.node_id, &random_id(), &shape, &request);
            match self.link.invoke(&call).await {
                Ok(fields) => match FleetReply::parse(&fields) {
                    Ok(reply) => {
                        let events = self.node().apply_release(&reply, self.shared.now());
                        self.tell(events);
                    }
                    Err(_) => self.failed(ErrorKind::Malformed),
                },
                Err(kind) => self.failed(kind),
            }
        }
        self.shared.set_lease(None);
    }
}
