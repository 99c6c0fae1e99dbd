//! The network between the nodes and Redis: calls on their way, landing late or never, answers
//! lost or late, the node giving up on its own clock; and what an answer changes in a node, as the
//! lease task would.

use std::time::Duration;

use super::{Due, InFlight, Script, World, CALL_TIMEOUT, KEY};
use crate::fleet::explorer::action::{Cut, Fate};
use crate::fleet::explorer::checker::Violation;
use crate::fleet::scripts;
use crate::rules::fleet::{ErrorKind, FleetReply, RenewRequest};
use crate::rules::fleet_exchange;

impl World {
    /// Puts a call on the network: it lands (or not) and its answer returns (or not) as `fate`
    /// says, unless the node's link is cut; the node gives up after [`CALL_TIMEOUT`] on its clock.
    pub(super) fn send(
        &mut self,
        i: usize,
        script: Script,
        argv: Vec<String>,
        request: Option<(RenewRequest, f64)>,
        fate: Fate,
    ) {
        self.calls += 1;
        let call = self.calls;
        let node = &mut self.nodes[i];
        let (land_ms, answer_ms) = match node.cut {
            None => (fate.land_ms, fate.answer_ms),
            Some(Cut::Answers) => (fate.land_ms, None),
            Some(Cut::Requests | Cut::Both) => (None, None),
        };
        let gives_up_at = node.clock.real_at(node.clock.at(self.now) + CALL_TIMEOUT);
        if node.alive {
            node.call = Some(InFlight { call, request });
            self.schedule(gives_up_at, Due::GiveUp { node: i, call });
        }
        if let Some(land) = land_ms {
            let at = self.now + Duration::from_millis(u64::from(land));
            self.schedule(
                at,
                Due::Land {
                    node: i,
                    call,
                    script,
                    argv,
                    answer_ms,
                },
            );
        }
    }

    pub(super) fn schedule(&mut self, at: Duration, due: Due) {
        self.calls += 1;
        self.due.insert((at, self.calls), due);
    }

    /// Real time passes by `by`; what falls due on the way happens in time order, each step
    /// checked.
    pub(super) fn wait(&mut self, by: Duration) -> Result<(), Violation> {
        let until = self.now + by;
        while let Some(entry) = self.due.first_entry() {
            if entry.key().0 > until {
                break;
            }
            let ((at, _), due) = entry.remove_entry();
            self.now = self.now.max(at);
            self.happen(due);
            self.check()?;
        }
        let elapsed = i64::try_from(until.saturating_sub(self.now).as_millis()).unwrap_or(0);
        self.redis.advance_server_clock(elapsed);
        if let Some(split) = &mut self.split {
            split.old.advance_server_clock(elapsed);
        }
        self.now = until;
        self.check()
    }

    /// Redis ended node `i`'s lease: invariant T (docs/fleet-protocol.md) says its holder can no
    /// longer use it, whichever primary granted what it holds.
    fn lease_ended(&mut self, i: usize) {
        let node = &self.nodes[i];
        let local = node.clock.at(self.now);
        let usable = node
            .state
            .budget()
            .fleet()
            .and_then(|fleet| fleet.lease())
            .map_or(0.0, |lease| lease.usable_at(local));
        if node.alive && usable > 0.0 && self.ended_early.is_none() {
            self.ended_early = Some(Violation(format!(
                "T: Redis ended n{i}'s lease while it could still use {usable:.3} units of it"
            )));
        }
    }

    pub(super) fn happen(&mut self, due: Due) {
        match due {
            Due::Land {
                node,
                call,
                script,
                argv,
                answer_ms,
            } => {
                let source = match script {
                    Script::Renew => scripts::RENEW_SCRIPT,
                    Script::Release => scripts::RELEASE_SCRIPT,
                };
                self.script_calls += 1;
                let old = self.on_old_primary(node);
                let before = lease_holders(&self.primary_of(node).hash(KEY));
                let fields = self.primary_of(node).eval(source, &[KEY], &argv);
                let after = lease_holders(&self.primary_of(node).hash(KEY));
                // A node's own release ends its lease at once; anything else that ends a lease
                // is a sweep, which T allows only past the holder's deadline.
                let released = matches!(script, Script::Release).then_some(node);
                for ended in before.difference(&after).filter(|i| Some(**i) != released) {
                    self.lease_ended(*ended);
                }
                let on = if old { " on the old primary" } else { "" };
                self.note(|| format!("{script:?} of n{node} lands{on}: {argv:?} -> {fields:?}"));
                // The replica follows the primary; nothing follows the old one of a split.
                let replicated = self.replica_linked && !old;
                if replicated {
                    self.replica = self.redis.dump(KEY);
                }
                if let Some(back) = answer_ms {
                    let at = self.now + Duration::from_millis(u64::from(back));
                    self.schedule(
                        at,
                        Due::Answer {
                            node,
                            call,
                            fields,
                            replicated,
                        },
                    );
                }
            }
            Due::Answer {
                node,
                call,
                fields,
                replicated,
            } => self.answer(node, call, fields, replicated),
            Due::SplitEnds => {
                self.note(|| "the split ends: the old primary is fenced".to_owned());
                self.end_split();
            }
            Due::GiveUp { node, call } => {
                let now = self.now;
                let n = &mut self.nodes[node];
                if n.alive && n.call.as_ref().is_some_and(|c| c.call == call) {
                    n.call = None;
                    let local = n.clock.at(now);
                    let _ = n.fleet.call_failed(local, ErrorKind::Timeout, 0.5);
                }
            }
        }
    }

    /// An answer reaches its node, if the node still waits for that call.
    pub(super) fn answer(
        &mut self,
        i: usize,
        call: u64,
        fields: Result<Vec<String>, String>,
        replicated: bool,
    ) {
        let now = self.now;
        let node = &mut self.nodes[i];
        if !node.alive {
            return;
        }
        let Some(flight) = node.call.take_if(|c| c.call == call) else {
            return;
        };
        let local = node.clock.at(now);
        let fields = fields.unwrap_or_else(|error| panic!("script error: {error}"));
        if !node.reached_redis {
            node.spent_unreached = node.state.exposure_units().min(node.shape.floor_units());
        }
        node.reached_redis = true;
        node.answered_at = Some(local);
        node.answered_before_loss = false;
        match flight.request {
            Some((request, jitter)) => {
                let answer = FleetReply::parse_renewal(&fields).expect("a renewal answer");
                let answered = fleet_exchange::apply_renewal_answer(
                    &mut node.fleet,
                    &mut node.state,
                    &request,
                    &answer,
                    local,
                    jitter,
                );
                let budget = node.state.node_budget_units(local);
                self.note(|| format!("n{i} answered: node budget {budget:.3}"));
                let node = &mut self.nodes[i];
                if let Some(confirm) = answered.confirm {
                    // WAIT: the replica acknowledged iff it received this write.
                    let acknowledged = if replicated { confirm.replicas } else { 0 };
                    fleet_exchange::apply_confirmation(
                        &node.fleet,
                        &mut node.state,
                        &confirm,
                        acknowledged,
                    );
                }
            }
            None => {
                let reply = FleetReply::parse(&fields).expect("a release answer");
                let _ = node.fleet.apply_release(&reply, local);
            }
        }
    }
}

/// The nodes whose leases a state holds (`n:<name>` fields; names are `n<index>`).
fn lease_holders(
    state: &std::collections::BTreeMap<String, String>,
) -> std::collections::BTreeSet<usize> {
    state
        .keys()
        .filter_map(|field| field.strip_prefix("n:n")?.parse().ok())
        .collect()
}
