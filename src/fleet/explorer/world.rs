//! One explored world: real time, Redis (the real scripts in the embedded stand-in), and nodes
//! that each run the real [`SentinelState`] and [`FleetNode`] on their own monotonic clock. It
//! carries out [`Action`]s in order, exactly as the lease task and the refresh loop would, and
//! hands every step to the [`Checker`].

use std::collections::BTreeMap;
use std::time::Duration;

use super::action::{Action, Cut, Fate};
use super::checker::{Checker, Violation};
use crate::fleet::lua_redis::{LuaRedis, Snapshot};
use crate::fleet::scripts;
use crate::rules::budget::lease::{FleetBudget, FleetShape};
use crate::rules::fleet::{FleetNode, RenewRequest};
use crate::rules::fleet_exchange;
use crate::rules::sentinel_state::RefreshTicket;
use crate::rules::{BudgetSource, Outcome, SentinelState};

/// A call's bound on the node's clock, as the lease task's.
const CALL_TIMEOUT: Duration = Duration::from_secs(1);
const KEY: &str = "{spend-sentinel:explored}";

/// A node's monotonic clock: its own origin, and a rate within ±1 % of real time.
#[derive(Debug, Clone, Copy)]
struct LocalClock {
    born_real: Duration,
    born_local: Duration,
    rate: f64,
}

impl LocalClock {
    fn at(&self, real: Duration) -> Duration {
        self.born_local + real.saturating_sub(self.born_real).mul_f64(self.rate)
    }

    /// The real moment this clock shows `local` (for timeouts measured on it).
    fn real_at(&self, local: Duration) -> Duration {
        self.born_real + local.saturating_sub(self.born_local).div_f64(self.rate)
    }
}

/// A renewal or release on its way: what the node sent, and when it gives up on it.
struct InFlight {
    call: u64,
    /// A renewal's request and the jitter its answer draws the next renewal with (`None`: a
    /// release).
    request: Option<(RenewRequest, f64)>,
}

pub(super) struct Node {
    pub(super) name: String,
    pub(super) shape: FleetShape,
    clock: LocalClock,
    pub(super) state: SentinelState,
    fleet: FleetNode,
    cut: Option<Cut>,
    call: Option<InFlight>,
    /// The pending refresh, and whether the authority answers it `valid`.
    refresh: Option<(RefreshTicket, bool)>,
    pub(super) alive: bool,
    pub(super) reached_redis: bool,
    /// When its last answer from Redis arrived, on its clock.
    answered_at: Option<Duration>,
    /// Redis lost or replaced the state since that answer.
    answered_before_loss: bool,
    /// The largest static floor Redis stopped counting for it so far (see `uncounted_floor`):
    /// what it spent there may stay outside the pool once it is counted again.
    uncounted: f64,
    /// What it admitted on its own floor before its first answer: Redis counts it from then
    /// on, possibly beyond the pool.
    spent_unreached: f64,
}

/// Something due at a real moment.
#[derive(Debug, Clone)]
enum Due {
    /// A script call reaches Redis.
    Land {
        node: usize,
        call: u64,
        script: Script,
        argv: Vec<String>,
        answer_ms: Option<u32>,
    },
    /// Its answer reaches the node.
    Answer {
        node: usize,
        call: u64,
        fields: Result<Vec<String>, String>,
        replicated: bool,
    },
    /// The node gives up on the call.
    GiveUp { node: usize, call: u64 },
    /// The split brain under way ends.
    SplitEnds,
}

#[derive(Debug, Clone, Copy)]
enum Script {
    Renew,
    Release,
}

mod invariants;
mod network;

/// A split brain under way: the primary of before, still taking its clients' writes.
struct Split {
    old: LuaRedis,
    /// The nodes that still reach it.
    stay: Vec<usize>,
}

pub(super) struct World {
    now: Duration,
    configs: Vec<FleetShape>,
    pub(super) nodes: Vec<Node>,
    /// The primary (during a split, the promoted one, which the replica follows).
    redis: LuaRedis,
    split: Option<Split>,
    /// A lease Redis ended while its holder could still use it (invariant T), found as a call
    /// landed; the next check reports it.
    ended_early: Option<Violation>,
    /// A replica that receives every write to the primary while its link is up.
    replica: Option<Snapshot>,
    replica_linked: bool,
    /// The online replicas the primary's INFO lists (as the last `ReplicaLink` set).
    replicas_listed: u32,
    snapshot: Option<Snapshot>,
    due: BTreeMap<(Duration, u64), Due>,
    calls: u64,
    authority_up: bool,
    pub(super) checker: Checker,
    pub(super) script_calls: u64,
    /// What happened beyond the actions (calls landing, answers), for a narrated trace.
    pub(super) log: Option<Vec<String>>,
}

impl World {
    pub(super) fn new(configs: Vec<FleetShape>) -> Self {
        World {
            now: Self::START,
            configs,
            nodes: Vec::new(),
            redis: LuaRedis::new(),
            split: None,
            ended_early: None,
            replica: None,
            replica_linked: true,
            replicas_listed: 0,
            snapshot: None,
            due: BTreeMap::new(),
            calls: 0,
            authority_up: true,
            checker: Checker::default(),
            script_calls: 0,
            log: None,
        }
    }

    /// Real time at the start of a run.
    pub(super) const START: Duration = Duration::from_secs(1_000);

    fn note(&mut self, line: impl FnOnce() -> String) {
        if let Some(log) = &mut self.log {
            let at = self.now.as_secs_f64() - Self::START.as_secs_f64();
            log.push(format!("{at:>9.3} s    {}", line()));
        }
    }

    /// The commands Redis ran so far, as `INFO commandstats` counts them (each script call's
    /// `EVALSHA` included).
    pub(super) fn redis_commands(&self) -> BTreeMap<String, u64> {
        self.redis.command_counts()
    }

    pub(super) fn now(&self) -> Duration {
        self.now
    }

    pub(super) fn authority_up(&self) -> bool {
        self.authority_up
    }

    pub(super) fn local_now(&self, i: usize) -> Duration {
        self.nodes[i].clock.at(self.now)
    }

    /// Whether node `i` is alive and its renewal is due (none in flight).
    pub(super) fn renewal_due(&self, i: usize) -> bool {
        self.renewal_due_in(i).is_some_and(|wait| wait.is_zero())
    }

    /// Real time until node `i`'s renewal is due (zero when due; `None` while a call is in
    /// flight or the node is dead).
    pub(super) fn renewal_due_in(&self, i: usize) -> Option<Duration> {
        let node = &self.nodes[i];
        if !node.alive || node.call.is_some() {
            return None;
        }
        let now = self.local_now(i);
        let due = node.fleet.renewal_due_at(now, &node.state.fleet_local());
        Some(node.clock.real_at(due.max(now)).saturating_sub(self.now))
    }

    /// Whether node `i` would send a refresh now: none pending, and its evidence a third of the
    /// window old (the default cadence draws its pause from [0.3 w, 0.5 w]).
    pub(super) fn refresh_due(&self, i: usize) -> bool {
        let node = &self.nodes[i];
        let now = self.local_now(i);
        let window = node.state.budget().cadence_basis_at(now);
        node.alive
            && node.refresh.is_none()
            && node
                .state
                .readiness(now)
                .evidence_age
                .is_none_or(|age| age >= window.mul_f64(0.3))
    }

    pub(super) fn refresh_pending(&self, i: usize) -> bool {
        self.nodes[i].refresh.is_some()
    }

    pub(super) fn apply(&mut self, action: &Action) -> Result<(), Violation> {
        match *action {
            Action::Wait(ms) => return self.wait(Duration::from_millis(u64::from(ms))),
            Action::Join { config, rate_ppm } => self.join(config, rate_ppm),
            Action::Crash(i) => {
                if let Some(node) = self.live(i) {
                    node.alive = false;
                    node.call = None;
                }
            }
            Action::Close { node, fate } => self.close(node, fate),
            Action::Admit { node, units } => self.admit(node, units, false),
            Action::Spend { node, units } => self.admit(node, units, true),
            Action::RefreshSend(i) => self.refresh_send(i),
            Action::RefreshAnswer(i) => self.refresh_answer(i),
            Action::Renew { node, fate, jitter } => self.renew(node, fate, jitter),
            Action::Link { node, cut } => {
                if let Some(n) = self.live(node) {
                    n.cut = cut;
                }
            }
            Action::AuthorityDown => {
                if self.authority_up {
                    self.authority_up = false;
                    let b = self.largest_live_b();
                    self.checker.cut(b);
                }
            }
            Action::AuthorityUp => {
                self.authority_up = true;
                self.checker.heal();
            }
            Action::LoseKey => {
                self.redis.del(KEY);
                self.state_lost();
            }
            Action::ReplicaLink(up) => {
                self.replica_linked = up;
                self.replicas_listed = u32::from(up);
                self.redis.set_replicas(self.replicas_listed, 0);
            }
            Action::Snapshot => self.snapshot = self.redis.dump(KEY),
            Action::Failover => {
                match self.replica.clone() {
                    Some(copy) => self.redis.restore(KEY, copy),
                    None => {
                        self.redis.del(KEY);
                    }
                }
                self.redis.new_server_identity(self.calls);
                self.state_lost();
            }
            Action::Restart => {
                match self.snapshot.clone() {
                    Some(copy) => self.redis.restore(KEY, copy),
                    None => {
                        self.redis.del(KEY);
                    }
                }
                self.redis.new_server_identity(self.calls + 1);
                self.state_lost();
            }
            Action::ServerClockStep(ms) => {
                self.redis.advance_server_clock(ms);
                self.state_lost(); // the key may have expired
            }
            Action::Split { ref stay, ms } => self.split(stay, ms),
        }
        self.check()
    }

    /// Redis lost or replaced the fleet's state: what each node was last told is gone.
    fn state_lost(&mut self) {
        for node in &mut self.nodes {
            node.answered_before_loss = true;
        }
    }

    /// Whether node `i` reaches the old primary of a split under way.
    fn on_old_primary(&self, i: usize) -> bool {
        self.split
            .as_ref()
            .is_some_and(|split| split.stay.contains(&i))
    }

    /// The primary node `i` reaches now.
    fn primary_of(&mut self, i: usize) -> &mut LuaRedis {
        match &mut self.split {
            Some(split) if split.stay.contains(&i) => &mut split.old,
            _ => &mut self.redis,
        }
    }

    /// The replica is promoted (a new server, its clock the old one's, its state the replica's
    /// copy) while the old primary goes on for the nodes in `stay`. The old primary lists no
    /// replica from now on: its replica left it, so `WAIT` asks for no acknowledgement there
    /// and its growth is used at once (Redis drops a replica whose link broke, at the latest
    /// after `repl-timeout`); the new one lists the replicas the old one did, and they follow it.
    fn split(&mut self, stay: &[usize], ms: u32) {
        if self.split.is_some() {
            return;
        }
        let ends = self.now + Duration::from_millis(u64::from(ms));
        self.schedule(ends, Due::SplitEnds);
        let mut promoted = LuaRedis::new();
        promoted.advance_server_clock(self.redis.server_clock_ms() - promoted.server_clock_ms());
        if let Some(copy) = self.replica.clone() {
            promoted.restore(KEY, copy);
        }
        // Another seed space than the failovers' and restarts' (drawn from the call count), and
        // the count grew since the last split: the promoted server's identity is its own.
        promoted.new_server_identity((1 << 63) | self.calls);
        promoted.set_replicas(self.replicas_listed, 0);
        let mut old = std::mem::replace(&mut self.redis, promoted);
        old.set_replicas(0, 0);
        self.split = Some(Split {
            old,
            stay: stay.to_vec(),
        });
        // The nodes that reach the promoted copy lost what they were told since the replica's
        // last write.
        for (i, node) in self.nodes.iter_mut().enumerate() {
            node.answered_before_loss |= !stay.contains(&i);
        }
    }

    /// The old primary is fenced and demoted: what it took since the split is gone, and its
    /// clients reach the primary, which lacks their writes since the split.
    fn end_split(&mut self) {
        let Some(split) = self.split.take() else {
            return;
        };
        for &i in &split.stay {
            if let Some(node) = self.nodes.get_mut(i) {
                node.answered_before_loss = true;
            }
        }
    }

    fn live(&mut self, i: usize) -> Option<&mut Node> {
        self.nodes.get_mut(i).filter(|node| node.alive)
    }

    fn largest_live_b(&self) -> f64 {
        self.nodes
            .iter()
            .filter(|n| n.alive)
            .map(|n| n.shape.fleet_ceiling_units)
            .fold(0.0, f64::max)
    }

    fn join(&mut self, config: usize, rate_ppm: i32) {
        let shape = self.configs[config % self.configs.len()];
        let id = self.nodes.len();
        let clock = LocalClock {
            born_real: self.now,
            // Monotonic clocks of different machines share no origin.
            born_local: Duration::from_secs(500 + 37 * id as u64),
            rate: 1.0 + f64::from(rate_ppm.clamp(-10_000, 10_000)) / 1e6,
        };
        self.nodes.push(Node {
            name: format!("n{id}"),
            shape,
            clock,
            state: SentinelState::new(BudgetSource::Fleet(FleetBudget::new(shape))),
            fleet: FleetNode::new(shape),
            cut: None,
            call: None,
            refresh: None,
            alive: true,
            reached_redis: false,
            answered_at: None,
            answered_before_loss: false,
            uncounted: 0.0,
            spent_unreached: 0.0,
        });
        self.checker.joined(shape.fleet_ceiling_units);
    }

    fn admit(&mut self, i: usize, units: u32, until_refused: bool) {
        let now = self.now;
        let Some(node) = self.nodes.get_mut(i).filter(|n| n.alive) else {
            return;
        };
        let local = node.clock.at(now);
        let units = f64::from(units.max(1));
        loop {
            if node.state.try_admit(units, local).is_err() {
                return;
            }
            self.checker.admitted(units);
            if !until_refused {
                return;
            }
        }
    }

    fn refresh_send(&mut self, i: usize) {
        let now = self.now;
        let valid = self.authority_up;
        if let Some(node) = self.live(i) {
            if node.refresh.is_none() {
                let local = node.clock.at(now);
                node.refresh = node.state.refresh_sent(local).map(|t| (t, valid));
            }
        }
    }

    fn refresh_answer(&mut self, i: usize) {
        if let Some(node) = self.live(i) {
            if let Some((ticket, valid)) = node.refresh.take() {
                let outcome = if valid {
                    Outcome::Valid
                } else {
                    Outcome::Indeterminate
                };
                node.state.refresh_answered(ticket, outcome);
            }
        }
    }

    fn renew(&mut self, i: usize, fate: Fate, jitter: u16) {
        let now = self.now;
        let Some(node) = self
            .nodes
            .get_mut(i)
            .filter(|n| n.alive && n.call.is_none())
        else {
            return;
        };
        let local = node.clock.at(now);
        let request = fleet_exchange::send_renewal(&mut node.fleet, &mut node.state, local);
        let new_id = format!("f{}-{jitter}", self.calls);
        let argv = scripts::renew_argv(&node.name, &new_id, &node.shape, &request);
        self.send(
            i,
            Script::Renew,
            argv,
            Some((request, f64::from(jitter) / 65_536.0)),
            fate,
        );
    }

    fn close(&mut self, i: usize, fate: Fate) {
        let now = self.now;
        let new_id = format!("f{}-r", self.calls);
        let Some(node) = self.live(i) else { return };
        let local = node.clock.at(now);
        node.state.close();
        node.alive = false;
        node.call = None;
        if let Some(release) = fleet_exchange::send_release(&mut node.fleet, &node.state, local) {
            let argv = scripts::release_argv(&node.name, &new_id, &node.shape, &release);
            self.send(i, Script::Release, argv, None, fate);
        }
    }
}
