//! A seeded randomized simulation of a fleet against a real `redis-server` (started here on a
//! free port), on a fake clock: nodes join, admit, refresh, renew, give back, crash, close, get
//! partitioned, lose replies or have a renewal delivered late; the authority goes down and comes
//! back; Redis loses the fleet's state (the key deleted, as eviction or FLUSHDB would) or fails
//! over to a copy that missed writes (an older snapshot of the key, served by "another server").
//!
//! Every node decision is the real one: [`SentinelState`] admits and verifies, [`FleetNode`]
//! builds each request and reads each answer, the real scripts run in Redis. Only the schedule is
//! random instead of timed, which explores more interleavings than the task's. Time is fake: the
//! fleet clock in Redis moves only by what the nodes report, so no sleep is needed.
//!
//! The checker knows nothing of grants: it keeps every admission and asserts the ceiling, the
//! units admitted by all nodes together since the authority went down ≤ b.

use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use redis::aio::MultiplexedConnection;

use super::scripts;
use super::test_redis::RedisServer;
use crate::rules::budget::lease::{FleetBudget, FleetShape};
use crate::rules::fleet::{FleetNode, FleetReply, RenewRequest};
use crate::rules::fleet_exchange;
use crate::rules::{BudgetSource, Outcome, SentinelState};

struct Node {
    id: String,
    state: SentinelState,
    fleet: FleetNode,
    partitioned: bool,
}

/// One admission, for the checker.
struct Admitted {
    at: Duration,
    units: f64,
}

/// A task of a node that is due.
enum Due {
    Refresh,
    Renewal,
}

/// A renewal sent but not delivered yet (a slow network): it reaches Redis later, or never.
struct Delayed {
    node: String,
    request: RenewRequest,
}

struct Sim {
    rng: StdRng,
    shape: FleetShape,
    key: String,
    name: String,
    conn: MultiplexedConnection,
    now: Duration,
    nodes: Vec<Node>,
    next_id: u32,
    authority_up: bool,
    /// When the current outage began, and when it ends.
    down_since: Option<Duration>,
    down_until: Duration,
    admitted: Vec<Admitted>,
    delayed: Vec<Delayed>,
    /// A copy of the fleet's key from earlier, for a failover that lost the writes since.
    snapshot: Option<Vec<u8>>,
    steps: u32,
    /// The largest outage exposure seen, as a fraction of b (to show the checker was tested).
    worst_outage: f64,
    faults: Faults,
    /// Lost replies, partitions and late deliveries happen (off in the deterministic tests).
    chaos: bool,
}

/// How many of each fault a run injected (a run that injected none tested nothing).
#[derive(Debug, Default, Clone, Copy)]
struct Faults {
    lost: u32,
    failovers: u32,
    late: u32,
}

impl Sim {
    fn join(&mut self) {
        if self.nodes.len() < self.shape.max_nodes as usize {
            self.next_id += 1;
            self.nodes.push(Node {
                id: format!("n{}", self.next_id),
                state: SentinelState::new(BudgetSource::Fleet(FleetBudget::new(self.shape))),
                fleet: FleetNode::new(self.shape),
                partitioned: false,
            });
        }
    }

    /// Admits 1 to 20 units; during an outage, as many batches as the node takes (traffic at
    /// full rate, the case the ceiling is for).
    fn admit(&mut self, i: usize) {
        loop {
            let units = f64::from(self.rng.random_range(1..=20u32));
            if !self.nodes[i].state.admit(units, self.now) {
                return;
            }
            self.admitted.push(Admitted {
                at: self.now,
                units,
            });
            if self.authority_up {
                return;
            }
        }
    }

    fn refresh(&mut self, i: usize) {
        let node = &mut self.nodes[i];
        if let Some(ticket) = node.state.refresh_sent(self.now) {
            let outcome = if self.authority_up {
                Outcome::Valid
            } else {
                Outcome::Indeterminate
            };
            node.state.refresh_answered(ticket, outcome);
        }
    }

    /// Whether the call reaches Redis, and whether its reply comes back.
    fn network(&mut self, i: usize) -> (bool, bool) {
        if !self.chaos {
            return (true, true);
        }
        if self.nodes[i].partitioned {
            return (self.rng.random_bool(0.3), false);
        }
        (true, !self.rng.random_bool(0.05))
    }

    /// What the task does when it holds more than its share: cap itself at max(used, share).
    fn give_back(&mut self, i: usize) {
        let node = &mut self.nodes[i];
        fleet_exchange::next_step(&mut node.fleet, &mut node.state, self.now);
    }

    async fn renew(&mut self, i: usize) {
        let now = self.now;
        let node = &mut self.nodes[i];
        let request = fleet_exchange::send_renewal(&mut node.fleet, &mut node.state, now);
        if self.chaos && self.rng.random_bool(0.01) {
            self.faults.late += 1;
            let node = self.nodes[i].id.clone();
            if self.delayed.len() == 4 {
                self.delayed.remove(0); // lost for good
            }
            self.delayed.push(Delayed { node, request });
            return;
        }
        // Traffic goes on while the call is in flight.
        if self.chaos && self.rng.random_bool(0.3) {
            self.admit(i);
        }
        let (reaches, answers) = self.network(i);
        if !reaches {
            return;
        }
        let fields = self.run_renewal(&self.nodes[i].id.clone(), &request).await;
        if self.chaos && self.rng.random_bool(0.3) {
            self.admit(i);
        }
        if !answers {
            return;
        }
        let answer = FleetReply::parse_renewal(&fields).expect("renew reply");
        let u = self.rng.random::<f64>();
        let node = &mut self.nodes[i];
        let answered = fleet_exchange::apply_renewal_answer(
            &mut node.fleet,
            &mut node.state,
            &request,
            &answer,
            self.now,
            u,
        );
        // A standalone server has no replicas: growth never waits.
        assert_eq!(answered.confirm, None);
    }

    async fn run_renewal(&mut self, node: &str, request: &RenewRequest) -> Vec<String> {
        let new_id = format!("{}-{}", self.name, self.steps);
        let call = scripts::renew(&self.key, node, &new_id, &self.shape, request);
        call.invoke_async(&mut self.conn)
            .await
            .expect("renew script")
    }

    /// A renewal delayed earlier reaches Redis now (its answer is lost: the node gave up).
    async fn deliver_late(&mut self) {
        if self.delayed.is_empty() {
            return;
        }
        let at = self.rng.random_range(0..self.delayed.len());
        let late = self.delayed.swap_remove(at);
        self.run_renewal(&late.node, &late.request).await;
    }

    async fn close(&mut self, i: usize) {
        let mut node = self.nodes.swap_remove(i);
        node.state.close();
        if let Some(release) = fleet_exchange::send_release(&mut node.fleet, &node.state, self.now)
        {
            if !node.partitioned {
                let new_id = format!("{}-{}-r", self.name, self.steps);
                let call = scripts::release(&self.key, &node.id, &new_id, &self.shape, &release);
                let _: Vec<String> = call
                    .invoke_async(&mut self.conn)
                    .await
                    .expect("release script");
            }
        }
    }

    fn set_authority(&mut self, up: bool) {
        if up && !self.authority_up {
            self.check_ceiling();
            self.down_since = None;
        } else if !up && self.authority_up {
            // Order the cut strictly after every refresh sent so far.
            self.now += Duration::from_nanos(1);
            self.down_since = Some(self.now);
            self.now += Duration::from_nanos(1);
        }
        self.authority_up = up;
    }

    /// The checker: units admitted after the authority went down, by all nodes, ≤ b.
    fn check_ceiling(&mut self) {
        let Some(since) = self.down_since else { return };
        let total: f64 = self
            .admitted
            .iter()
            .filter(|a| a.at >= since)
            .map(|a| a.units)
            .sum();
        self.worst_outage = self
            .worst_outage
            .max(total / self.shape.fleet_ceiling_units);
        assert!(
            total <= self.shape.fleet_ceiling_units + 1e-6,
            "{}: {total} units admitted during an outage, b = {} (step {}, faults {:?})",
            self.name,
            self.shape.fleet_ceiling_units,
            self.steps,
            self.faults
        );
    }

    /// Redis loses the fleet's state: the key deleted (eviction, DEL, FLUSHDB, a restart
    /// without persistence look the same to the scripts).
    async fn lose_state(&mut self) {
        self.faults.lost += 1;
        let _: () = redis::cmd("DEL")
            .arg(&self.key)
            .query_async(&mut self.conn)
            .await
            .unwrap();
    }

    /// Redis fails over to a replica that missed the writes since `snapshot`: the key goes back
    /// to that copy, now served by another server.
    async fn fail_over(&mut self) {
        let Some(snapshot) = self.snapshot.take() else {
            return;
        };
        self.faults.failovers += 1;
        let _: () = redis::cmd("RESTORE")
            .arg(&self.key)
            .arg(0)
            .arg(snapshot)
            .arg("REPLACE")
            .query_async(&mut self.conn)
            .await
            .unwrap();
        let _: () = redis::cmd("HSET")
            .arg(&self.key)
            .arg("server")
            .arg(format!("promoted-{}", self.steps))
            .query_async(&mut self.conn)
            .await
            .unwrap();
    }

    async fn take_snapshot(&mut self) {
        self.snapshot = redis::cmd("DUMP")
            .arg(&self.key)
            .query_async(&mut self.conn)
            .await
            .unwrap();
    }

    async fn step(&mut self) {
        self.steps += 1;
        // Most steps take a few ms; one in twenty jumps up to a second.
        let jump = if self.rng.random_bool(0.05) { 1000 } else { 30 };
        self.now += Duration::from_millis(self.rng.random_range(0..jump));
        if !self.authority_up && self.now >= self.down_until {
            self.set_authority(true);
        }
        if self.nodes.is_empty() {
            self.join();
            return;
        }
        let i = self.rng.random_range(0..self.nodes.len());
        // Mostly the tasks' own schedules; random actions below add odd interleavings.
        match self.due_task(i) {
            Some(Due::Refresh) => return self.refresh(i),
            Some(Due::Renewal) if self.rng.random_bool(0.8) => {
                self.give_back(i);
                self.renew(i).await;
                return self.check_ceiling();
            }
            _ => {}
        }
        match self.rng.random_range(0..100u32) {
            0..=34 => self.admit(i),
            35..=49 => self.refresh(i),
            50..=64 => self.renew(i).await,
            65..=67 => self.give_back(i),
            68..=70 => self.deliver_late().await,
            71 if self.rng.random_bool(0.2) => self.join(),
            // Crashes and closes are rarer: a fleet that never settles tests little.
            74 if self.rng.random_bool(0.3) => {
                self.nodes.swap_remove(i); // a crash: no release, its lease expires in Redis
            }
            // The crash that tests the ceiling hardest: during an outage, the node that has
            // spent the most since it began.
            83 if !self.authority_up && self.rng.random_bool(0.3) => {
                let spender = (0..self.nodes.len())
                    .max_by(|&a, &b| {
                        let spent = |k: usize| self.nodes[k].state.exposure_units();
                        spent(a).total_cmp(&spent(b))
                    })
                    .unwrap_or(i);
                self.nodes.swap_remove(spender);
                // Long enough for its lease to expire and the others to renew in the outage.
                self.down_until = self.down_until.max(self.now + self.shape.lease * 3);
            }
            75 if self.rng.random_bool(0.3) => self.close(i).await,
            76..=78 => self.nodes[i].partitioned = !self.nodes[i].partitioned,
            79 if self.authority_up && self.rng.random_bool(0.1) => {
                // An outage of 1 to 30 s: long enough for leases (5 to 8 s) to expire in it.
                let length = Duration::from_millis(self.rng.random_range(1000..30_000));
                self.down_until = self.now + length;
                // Often just after every node verified: empty ledgers, young evidence, so each
                // node can spend its whole budget after the cut.
                if self.rng.random_bool(0.5) {
                    for k in 0..self.nodes.len() {
                        self.refresh(k);
                    }
                }
                self.set_authority(false);
            }
            80 if self.rng.random_bool(0.2) => self.take_snapshot().await,
            81 if self.rng.random_bool(0.05) => self.fail_over().await,
            82 if self.rng.random_bool(0.03) => self.lose_state().await,
            _ => self.admit(i),
        }
        self.check_ceiling();
    }
}

async fn new_sim(port: u16, seed: u64, shape: FleetShape) -> Sim {
    let name = format!("sim-{seed}-{}", rand::random::<u32>());
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap();
    let conn = client.get_multiplexed_async_connection().await.unwrap();
    Sim {
        rng: StdRng::seed_from_u64(seed),
        shape,
        key: scripts::fleet_key(&name),
        name,
        conn,
        now: Duration::from_secs(1000),
        nodes: Vec::new(),
        next_id: 0,
        authority_up: true,
        down_since: None,
        down_until: Duration::ZERO,
        admitted: Vec::new(),
        delayed: Vec::new(),
        snapshot: None,
        steps: 0,
        worst_outage: 0.0,
        faults: Faults::default(),
        chaos: false,
    }
}

/// Answers the steps run, the worst outage exposure (a fraction of b) and the faults injected.
async fn simulate(port: u16, seed: u64, steps: u32) -> (u32, f64, Faults) {
    let mut sim = seeded_sim(port, seed, 2..=6, &[0.0, 0.1, 0.25, 0.5]).await;
    for _ in 0..steps {
        sim.step().await;
    }
    (sim.steps, sim.worst_outage, sim.faults)
}

/// A chaotic fleet of `max_nodes` (drawn from the range) on a shape drawn from `seed`: b from
/// 100 to 400, r from 5 to 20 (windows longer than a lease, so a lease freed too early would be
/// spent on evidence that is still young), leases of 5 to 8 s.
async fn seeded_sim(
    port: u16,
    seed: u64,
    max_nodes: std::ops::RangeInclusive<u32>,
    reserves: &[f64],
) -> Sim {
    let mut rng = StdRng::seed_from_u64(seed);
    let shape = FleetShape {
        fleet_ceiling_units: f64::from(rng.random_range(100..=400u32)),
        max_units_per_second: f64::from(rng.random_range(5..=20u32)),
        max_nodes: rng.random_range(max_nodes),
        reserve: reserves[rng.random_range(0..reserves.len())],
        lease: Duration::from_millis(rng.random_range(5000..=8000)),
        max_split: Duration::ZERO,
        max_stale: None,
    };
    let mut sim = new_sim(port, seed, shape).await;
    sim.rng = rng;
    sim.chaos = true;
    sim
}

/// Runs `run(port, seed)` for each seed on its own thread and runtime, against one server (each
/// seed its own fleet name); answers the results in seed order.
fn on_threads<T: Send + 'static, F: std::future::Future<Output = T> + 'static>(
    seeds: std::ops::RangeInclusive<u64>,
    run: fn(u16, u64) -> F,
) -> Vec<T> {
    let redis = RedisServer::start();
    let port = redis.port;
    let threads: Vec<_> = seeds
        .map(|seed| {
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                runtime.block_on(run(port, seed))
            })
        })
        .collect();
    threads
        .into_iter()
        .map(|thread| thread.join().expect("a seed failed: see its message above"))
        .collect()
}

/// The seeds' steps, the worst outage (a fraction of b) and the faults, all together.
fn run_seeds(seeds: std::ops::RangeInclusive<u64>) -> (u32, f64, Faults) {
    let mut total = (0, 0.0_f64, Faults::default());
    for (steps, worst, faults) in on_threads(seeds, |port, seed| simulate(port, seed, 10_000)) {
        total.0 += steps;
        total.1 = total.1.max(worst);
        total.2.lost += faults.lost;
        total.2.failovers += faults.failovers;
        total.2.late += faults.late;
    }
    total
}

#[test]
fn seeded_fleets_never_pass_the_ceiling() {
    let (steps, worst, faults) = run_seeds(1..=16);
    assert_eq!(steps, 16 * 10_000);
    // Some outage must have come close to b, or the ceiling was never put to the test; and
    // every kind of fault must have happened.
    assert!(worst > 0.5, "the worst outage admitted only {worst:.2} b");
    assert!(
        faults.lost > 0 && faults.failovers > 0 && faults.late > 0,
        "faults injected: {faults:?}"
    );
}

impl Sim {
    /// One node does what its tasks would now, else it admits.
    async fn tick(&mut self) {
        self.steps += 1;
        let i = self.rng.random_range(0..self.nodes.len());
        match self.due_task(i) {
            Some(Due::Refresh) => self.refresh(i),
            Some(Due::Renewal) => {
                self.give_back(i);
                self.renew(i).await;
            }
            None => self.admit(i),
        }
        self.check_ceiling();
    }

    /// What node `i`'s tasks would do now: refresh when its evidence is a third of the window
    /// old (three times in ten: the refresh and lease tasks run side by side, one never starves
    /// the other), renew when its fleet node says so.
    fn due_task(&mut self, i: usize) -> Option<Due> {
        let node = &self.nodes[i];
        let due = node
            .fleet
            .renewal_due_at(self.now, &node.state.fleet_local());
        let window = node.state.budget().cadence_basis_at(self.now);
        let age = node.state.readiness(self.now).evidence_age;
        if age.is_none_or(|age| age >= window / 3) && self.rng.random_bool(0.3) {
            Some(Due::Refresh)
        } else if self.now >= due {
            Some(Due::Renewal)
        } else {
            None
        }
    }

    /// The schedule the ceiling is hardest on: every node has just verified, the authority goes
    /// silent, everyone spends at full rate; at a random moment the biggest spender crashes, or
    /// Redis loses the fleet's state, or fails over to a copy from before the episode; the others
    /// go on renewing (with lost replies and late deliveries) for three leases.
    async fn crash_episode(&mut self) {
        for k in 0..self.nodes.len() {
            self.refresh(k);
        }
        self.set_authority(false);
        let start = self.now;
        let crash_at = start + self.shape.lease.mul_f64(self.rng.random::<f64>());
        let mut crashed = false;
        while self.now < start + self.shape.lease * 3 && !self.nodes.is_empty() {
            self.now += Duration::from_millis(self.rng.random_range(5..100));
            if !crashed && self.now >= crash_at {
                crashed = true;
                match self.rng.random_range(0..5u32) {
                    0 => self.lose_state().await,
                    1 => self.fail_over().await,
                    _ => {}
                }
                let spender = (0..self.nodes.len())
                    .max_by(|&a, &b| {
                        let spent = |k: usize| self.nodes[k].state.exposure_units();
                        spent(a).total_cmp(&spent(b))
                    })
                    .unwrap_or(0);
                self.nodes.swap_remove(spender);
                continue;
            }
            if self.rng.random_bool(0.1) {
                self.deliver_late().await;
            }
            self.tick().await;
        }
        self.set_authority(true);
    }
}

/// Seeded crash episodes (see [`Sim::crash_episode`]) on small fleets with windows longer
/// than a lease: the interleavings in which a lease freed early, or a charge settled too soon,
/// would be spent twice.
async fn crash_episodes(port: u16, seed: u64, episodes: u32) -> f64 {
    let mut sim = seeded_sim(port, seed, 2..=4, &[0.0, 0.1, 0.25]).await;
    let (size, shape) = (sim.shape.max_nodes as usize, sim.shape);
    for _ in 0..episodes {
        while sim.nodes.len() < size {
            sim.join();
        }
        // Until the fleet has settled: its hold over, grants leased.
        let settled = sim.now + shape.lease * 4;
        while sim.now < settled {
            sim.now += Duration::from_millis(sim.rng.random_range(5..100));
            sim.tick().await;
        }
        sim.take_snapshot().await;
        // A little more: the copy a failover would return to misses what follows.
        for _ in 0..50 {
            sim.now += Duration::from_millis(sim.rng.random_range(5..100));
            sim.tick().await;
        }
        sim.crash_episode().await;
    }
    sim.worst_outage
}

#[test]
fn seeded_crash_episodes_never_pass_the_ceiling() {
    let worst = on_threads(1..=12, |port, seed| crash_episodes(port, seed, 12))
        .into_iter()
        .fold(0.0_f64, f64::max);
    assert!(worst > 0.8, "the worst episode admitted only {worst:.2} b");
}

/// Runs `test` on a current-thread runtime against a redis-server of its own.
fn with_redis<F: std::future::Future<Output = ()>>(test: impl FnOnce(u16) -> F) {
    let redis = RedisServer::start();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(test(redis.port));
}

/// Two nodes, no floor, b = 200 at r = 20 (a 10 s window on the whole pool), 5 s leases.
fn two_node_shape() -> FleetShape {
    FleetShape {
        fleet_ceiling_units: 200.0,
        max_units_per_second: 20.0,
        max_nodes: 2,
        reserve: 0.0,
        lease: Duration::from_secs(5),
        max_split: Duration::ZERO,
        max_stale: None,
    }
}

impl Sim {
    fn lease_units(&self, i: usize) -> f64 {
        self.nodes[i]
            .state
            .budget()
            .fleet()
            .and_then(|f| f.lease())
            .map_or(0.0, |l| l.usable_at(self.now))
    }

    /// Both nodes renew (and give back) in turn, `rounds` times, `gap` apart.
    async fn rounds(&mut self, rounds: u32, gap: Duration) {
        for _ in 0..rounds {
            for i in 0..self.nodes.len() {
                self.give_back(i);
                self.renew(i).await;
            }
            self.now += gap;
        }
    }

    /// A fresh two-node fleet past its hold, each node on half the pool.
    async fn settled_pair(port: u16, seed: u64) -> Sim {
        let sim = Sim::settled(port, seed, two_node_shape(), 2).await;
        for i in 0..2 {
            assert_eq!(sim.lease_units(i), 100.0, "an equal split of the pool");
        }
        sim
    }

    /// A fresh fleet of `nodes` nodes of `shape` (leases of at most 5 s) past its hold, verified
    /// and renewed until the grants settle.
    async fn settled(port: u16, seed: u64, shape: FleetShape, nodes: usize) -> Sim {
        let mut sim = new_sim(port, seed, shape).await;
        for _ in 0..nodes {
            sim.join();
        }
        sim.rounds(1, Duration::from_millis(100)).await;
        sim.now += Duration::from_secs(8); // the fresh fleet's hold: lease × 1.03 + 2 s
        sim.rounds(1, Duration::from_millis(100)).await;
        for i in 0..nodes {
            sim.refresh(i);
        }
        sim.now += Duration::from_millis(100);
        sim.rounds(4, Duration::from_millis(300)).await;
        sim
    }
}

/// The `window` calculator shows a fleet node's grant as `FleetShape::settled_grant`; the
/// scripts hand out exactly that once renewals settle, whether the want or the equal split of
/// the pool is the smaller.
#[test]
fn settled_grants_are_what_the_calculator_shows() {
    with_redis(|port| async move {
        // b 400 at r 20, 5 nodes, reserve 0.25: floor 20, pool 300.
        for (seed, max_stale, live, grant) in [
            (3000, None, 3, 100.0),     // all it can get: pool / 3
            (3001, Some(5.0), 3, 80.0), // wants 20 × 5 − 20 = 80 < 100
            (3002, Some(5.0), 5, 60.0), // pool / 5 = 60 < 80
        ] {
            let shape = FleetShape {
                fleet_ceiling_units: 400.0,
                max_units_per_second: 20.0,
                max_nodes: 5,
                reserve: 0.25,
                lease: Duration::from_secs(5),
                max_split: Duration::ZERO,
                max_stale: max_stale.map(Duration::from_secs_f64),
            };
            let live_nodes = u32::try_from(live).unwrap();
            assert_eq!(
                shape.settled_grant(live_nodes),
                grant,
                "{max_stale:?} {live}"
            );
            let sim = Sim::settled(port, seed, shape, live).await;
            for i in 0..live {
                let held = sim.lease_units(i);
                assert!(
                    (held - grant).abs() < 1e-9,
                    "node {i} of {live}: {held} ≠ {grant}"
                );
            }
        }
    });
}

/// The ceiling, deterministically: a node that spent its grant and crashed leaves it charged,
/// so the survivor cannot take it over while the authority is down.
#[test]
fn an_expired_lease_stays_charged_until_a_valid_refresh_after_it_was_listed() {
    with_redis(|port| async move {
        // Replies must not get lost here.
        let mut sim = Sim::settled_pair(port, 1000).await;
        for i in 0..2 {
            sim.refresh(i);
        }
        sim.set_authority(false);
        let now = sim.now;
        assert!(sim.nodes[0].state.admit(100.0, now));
        assert!(sim.nodes[1].state.admit(100.0, now));
        sim.nodes.swap_remove(0); // a crash, without release
                                  // The survivor renews while the crashed node's lease expires on the fleet clock.
        sim.rounds(12, Duration::from_millis(700)).await;
        assert_eq!(
            sim.lease_units(0),
            100.0,
            "the crashed node's 100 stay charged"
        );
        assert!(
            !sim.nodes[0].state.admit(1.0, sim.now),
            "the survivor spent its 100"
        );
        // A valid refresh sent after the answer that listed the charge settles it.
        sim.set_authority(true);
        sim.refresh(0);
        sim.now += Duration::from_millis(100);
        sim.rounds(2, Duration::from_millis(100)).await;
        assert_eq!(sim.lease_units(0), 200.0);
    });
}

/// A failover to a copy that lacks a node's growth: the first call after it sees another server
/// and holds growth, so a node joining meanwhile cannot take units the other already holds.
#[test]
fn a_failover_holds_growth_for_everyone() {
    with_redis(|port| async move {
        let mut sim = Sim::settled_pair(port, 2000).await;
        sim.close(1).await; // its 100 return to the pool at once
        sim.take_snapshot().await; // the copy: the survivor holds 100
        sim.refresh(0);
        sim.now += Duration::from_millis(100);
        sim.rounds(2, Duration::from_millis(100)).await;
        assert_eq!(sim.lease_units(0), 200.0, "the survivor grew");
        sim.fail_over().await; // to the copy, which lacks that growth
        sim.join();
        // The joiner calls first: it knows no version, so only the server change tells it.
        sim.nodes.swap(0, 1);
        sim.rounds(3, Duration::from_millis(100)).await;
        sim.nodes.swap(0, 1);
        assert_eq!(
            sim.lease_units(1),
            0.0,
            "the joiner gets nothing during the hold"
        );
        assert_eq!(sim.lease_units(0), 200.0, "the survivor keeps what it held");
    });
}

/// A node whose reserve differs from the fleet's (a rolling update) adopts the fleet's: its
/// floor is the smaller of the two, and the fleet's shares do not change.
#[test]
fn a_node_whose_reserve_differs_adopts_the_fleets() {
    with_redis(|port| async move {
        let shape = two_node_shape();
        let mut fleet = new_sim(port, 3000, shape).await;
        let mut odd = new_sim(
            port,
            3000,
            FleetShape {
                reserve: 0.5,
                ..shape
            },
        )
        .await;
        odd.key.clone_from(&fleet.key);
        odd.next_id = 100;
        fleet.join();
        fleet.rounds(1, Duration::ZERO).await;
        fleet.now += Duration::from_secs(8);
        fleet.rounds(1, Duration::ZERO).await;
        fleet.refresh(0);
        fleet.now += Duration::from_millis(100);
        fleet.rounds(1, Duration::ZERO).await;
        assert_eq!(fleet.lease_units(0), 200.0);
        odd.now = fleet.now;
        odd.join();
        odd.rounds(1, Duration::ZERO).await;
        let status = odd.nodes[0].fleet.status(odd.now, None);
        assert_eq!(
            status.settings.reserve, shape.reserve,
            "the fleet's reserve"
        );
        assert_eq!(
            status.configured.reserve, 0.5,
            "and its own, shown beside it"
        );
        assert_eq!(status.floor_units, shape.floor_units(), "the smaller floor");
        fleet.rounds(1, Duration::ZERO).await;
        assert_eq!(
            fleet.lease_units(0),
            200.0,
            "the first node's grant is untouched"
        );
    });
}
