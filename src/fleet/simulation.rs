//! A seeded randomized simulation of a fleet against a real `redis-server` (started here on a
//! free port): nodes join, admit, refresh, renew, settle, shrink to their share, crash, close,
//! get partitioned or lose replies; the authority goes down and comes back; Redis loses the
//! fleet's keys. An independent checker keeps every admission and asserts the ceiling: the units
//! admitted by all nodes together while the authority is down never pass b. It also checks the
//! scripts' own invariant after every step: live grants + charged units ≤ the pool.
//!
//! Node-side decisions use the real pieces (`SentinelState`, `FleetBudget`, `Session`, the scripts); only
//! the schedule is random instead of timed, which explores more interleavings than the task's.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use redis::aio::MultiplexedConnection;

use super::scripts::{self, Keys};
use super::session::{FleetReply, Session};
use crate::rules::lease::{FleetBudget, FleetShape, Lease};
use crate::rules::{BudgetSource, Outcome, SentinelState};

struct RedisServer {
    child: Child,
    port: u16,
}

impl RedisServer {
    fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .args(["--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server on PATH (Debian: apt-get install redis-server)");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "redis-server did not listen within 10 s"
            );
            std::thread::yield_now();
        }
        RedisServer { child, port }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Node {
    id: String,
    state: SentinelState,
    session: Session,
    /// Send time of the latest refresh that answered valid.
    last_valid: Option<Duration>,
    partitioned: bool,
}

/// One admission, for the checker.
struct Admitted {
    at: Duration,
    units: f64,
}

struct Sim {
    rng: StdRng,
    shape: FleetShape,
    keys: Keys,
    name: String,
    conn: MultiplexedConnection,
    origin: Instant,
    nodes: Vec<Node>,
    next_id: u32,
    authority_up: bool,
    /// When the current outage began, and when it ends.
    down_since: Option<Duration>,
    down_until: Duration,
    admitted: Vec<Admitted>,
    steps: u32,
    /// The largest outage exposure seen, as a fraction of b (to show the checker was tested).
    worst_outage: f64,
}

impl Sim {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }

    fn join(&mut self) {
        if self.nodes.len() < self.shape.max_nodes as usize {
            self.next_id += 1;
            self.nodes.push(Node {
                id: format!("n{}", self.next_id),
                state: SentinelState::new(BudgetSource::Fleet(FleetBudget::new(self.shape))),
                session: Session::default(),
                last_valid: None,
                partitioned: false,
            });
        }
    }

    fn used_beyond_floor(&self, i: usize) -> f64 {
        (self.nodes[i].state.exposure_units() - self.shape.floor_units()).max(0.0)
    }

    fn lease(&self, i: usize) -> Option<Lease> {
        self.nodes[i].state.budget().fleet().and_then(|f| f.lease)
    }

    fn admit(&mut self, i: usize) {
        let now = self.now();
        let units = f64::from(self.rng.random_range(1..=20u32));
        if self.nodes[i].state.admit(units, now) {
            self.admitted.push(Admitted { at: now, units });
        }
    }

    fn refresh(&mut self, i: usize) {
        let now = self.now();
        let node = &mut self.nodes[i];
        if let Some(ticket) = node.state.refresh_sent(now) {
            let outcome = if self.authority_up {
                Outcome::Valid
            } else {
                Outcome::Indeterminate
            };
            node.state.refresh_answered(ticket, outcome);
            if outcome == Outcome::Valid {
                node.last_valid = Some(now);
            }
        }
    }

    /// Whether the call reaches Redis, and whether its reply comes back.
    fn network(&mut self, i: usize) -> (bool, bool) {
        if self.nodes[i].partitioned {
            return (self.rng.random_bool(0.3), false);
        }
        (true, !self.rng.random_bool(0.05))
    }

    async fn renew(&mut self, i: usize) {
        let now = self.now();
        let used = self.used_beyond_floor(i);
        let target = self.nodes[i].session.target_units;
        let fleet = *self.nodes[i].state.budget().fleet().unwrap();
        let keep = fleet.keep_for_renewal(now, used, target);
        if let Some(lease) = self.lease(i).filter(|l| l.usable_at(now) > keep) {
            self.nodes[i].state.set_lease(Some(Lease {
                grant_units: keep,
                ..lease
            }));
        }
        let shape = self.shape;
        let renewal = self.nodes[i].session.renewal(&shape, keep, now);
        let (reaches, answers) = self.network(i);
        if !reaches {
            return;
        }
        let fresh_id = format!("{}-{}", self.name, self.steps);
        let id = self.nodes[i].id.clone();
        let fields = scripts::renew(&mut self.conn, &self.keys, &id, &fresh_id, &shape, &renewal)
            .await
            .expect("renew script");
        if !answers {
            return;
        }
        let (reply, grant) = FleetReply::parse(&fields, true).expect("renew reply");
        let node = &mut self.nodes[i];
        node.session.answered_with(&reply, self.origin.elapsed());
        if let Some(lease) = node.session.lease_from(&shape, &renewal, &grant.unwrap()) {
            node.state.set_lease(Some(lease));
        }
    }

    async fn settle(&mut self, i: usize) {
        let Some(sent) = self.nodes[i].last_valid else {
            return;
        };
        let Some(cutoff) = self.nodes[i].session.settle_cutoff(sent) else {
            return;
        };
        self.nodes[i].session.settling(cutoff);
        let (reaches, answers) = self.network(i);
        if !reaches {
            return;
        }
        let (known_id, known_version) = self.nodes[i].session.known();
        let fresh_id = format!("{}-{}", self.name, self.steps);
        let shape = self.shape;
        let fields = scripts::settle(
            &mut self.conn,
            &self.keys,
            cutoff,
            &known_id,
            known_version,
            &fresh_id,
            &shape,
        )
        .await
        .expect("settle script");
        if answers {
            let (reply, _) = FleetReply::parse(&fields, false).expect("settle reply");
            self.nodes[i]
                .session
                .answered_with(&reply, self.origin.elapsed());
        }
    }

    /// What the task does when it holds more than its share: cap itself at max(used, share).
    fn shrink(&mut self, i: usize) {
        let now = self.now();
        let share = self.nodes[i].session.target_units;
        let cap = share.max(self.used_beyond_floor(i));
        if let Some(lease) = self.lease(i).filter(|l| l.usable_at(now) > cap) {
            self.nodes[i].state.set_lease(Some(Lease {
                grant_units: cap,
                ..lease
            }));
        }
    }

    async fn close(&mut self, i: usize) {
        let node = self.nodes.swap_remove(i);
        let grant = node
            .state
            .budget()
            .fleet()
            .and_then(|f| f.lease)
            .map_or(0.0, |l| l.grant_units);
        let used = (node.state.exposure_units() - self.shape.floor_units())
            .max(0.0)
            .min(grant);
        if !node.partitioned {
            scripts::release(&mut self.conn, &self.keys, &node.id, used, &self.shape)
                .await
                .expect("release script");
        }
    }

    fn set_authority(&mut self, up: bool) {
        let now = self.now();
        if up && !self.authority_up {
            self.check_ceiling(now);
            self.down_since = None;
        } else if !up && self.authority_up {
            // Order the cut strictly after every refresh sent so far.
            self.down_since = Some(now + Duration::from_nanos(1));
        }
        self.authority_up = up;
    }

    /// The checker: units admitted after the authority went down, by all nodes, ≤ b.
    fn check_ceiling(&mut self, until: Duration) {
        let Some(since) = self.down_since else { return };
        let total: f64 = self
            .admitted
            .iter()
            .filter(|a| a.at >= since && a.at <= until)
            .map(|a| a.units)
            .sum();
        self.worst_outage = self
            .worst_outage
            .max(total / self.shape.fleet_ceiling_units);
        assert!(
            total <= self.shape.fleet_ceiling_units + 1e-6,
            "{}: {total} units admitted during an outage, b = {} (step {})",
            self.name,
            self.shape.fleet_ceiling_units,
            self.steps
        );
    }

    /// The scripts' invariant, read from Redis: live grants + charged ≤ pool.
    async fn check_pool(&mut self) {
        let (fleet_key, leases_key) = (self.keys.name(0), self.keys.name(1));
        let leases: Vec<String> = redis::cmd("HVALS")
            .arg(leases_key)
            .query_async(&mut self.conn)
            .await
            .unwrap();
        let charged: Option<f64> = redis::cmd("HGET")
            .arg(fleet_key)
            .arg("charged")
            .query_async(&mut self.conn)
            .await
            .unwrap();
        let granted: f64 = leases
            .iter()
            .map(|l| l.split('|').next().unwrap().parse::<f64>().unwrap())
            .sum();
        let total = granted + charged.unwrap_or(0.0);
        assert!(
            total <= self.shape.pool_units() + 1e-6,
            "{}: grants {granted} + charged {charged:?} > pool {} (step {})",
            self.name,
            self.shape.pool_units(),
            self.steps
        );
    }

    async fn step(&mut self) {
        self.steps += 1;
        if !self.authority_up && self.now() >= self.down_until {
            self.set_authority(true);
        }
        if self.nodes.is_empty() {
            self.join();
            return;
        }
        let i = self.rng.random_range(0..self.nodes.len());
        match self.rng.random_range(0..100u32) {
            0..=29 => self.admit(i),
            30..=44 => self.refresh(i),
            45..=59 => self.renew(i).await,
            60..=66 => self.settle(i).await,
            67..=69 => self.shrink(i),
            // Real time passes (leases are real time in Redis): ~8 s a seed in all.
            70..=79 => {
                tokio::time::sleep(Duration::from_millis(self.rng.random_range(1..100))).await
            }
            80..=82 => self.join(),
            83 => {
                self.nodes.swap_remove(i); // a crash: no release, its lease expires in Redis
            }
            84 => self.close(i).await,
            85..=87 => self.nodes[i].partitioned = !self.nodes[i].partitioned,
            88 if self.authority_up && self.rng.random_bool(0.25) => {
                // An outage of 1 to 6 s: long enough for leases to expire inside it.
                let length = Duration::from_millis(self.rng.random_range(1000..6000));
                self.down_until = self.now() + length;
                self.set_authority(false);
            }
            93 if self.rng.random_bool(0.1) => {
                // Redis lost the fleet's state (keys deleted): rare, since each loss holds growth
                // for lease + 2 s.
                let keys: Vec<String> = (0..3).map(|k| self.keys.name(k).to_owned()).collect();
                let _: () = redis::cmd("DEL")
                    .arg(keys)
                    .query_async(&mut self.conn)
                    .await
                    .unwrap();
            }
            _ => self.admit(i),
        }
        self.check_ceiling(self.now());
        if self.steps.is_multiple_of(8) {
            self.check_pool().await;
        }
    }
}

async fn new_sim(port: u16, seed: u64, shape: FleetShape) -> Sim {
    let name = format!("sim-{seed}");
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap();
    let conn = client.get_multiplexed_async_connection().await.unwrap();
    Sim {
        rng: StdRng::seed_from_u64(seed),
        shape,
        keys: Keys::new(&name),
        name,
        conn,
        origin: Instant::now(),
        nodes: Vec::new(),
        next_id: 0,
        authority_up: true,
        down_since: None,
        down_until: Duration::ZERO,
        admitted: Vec::new(),
        steps: 0,
        worst_outage: 0.0,
    }
}

async fn simulate(port: u16, seed: u64, steps: u32) -> (u32, f64) {
    // Answers the steps run and the worst outage exposure (fraction of b).
    let mut rng = StdRng::seed_from_u64(seed);
    let max_nodes = rng.random_range(2..=5u32);
    let shape = FleetShape {
        fleet_ceiling_units: f64::from(rng.random_range(100..=400u32)),
        // Windows (node budget / r) of seconds: longer than a lease, so an expired lease freed
        // too early would be spent on evidence that is still young.
        max_units_per_second: f64::from(rng.random_range(20..=80u32)),
        max_nodes,
        reserve: [0.0, 0.1, 0.25, 0.5][rng.random_range(0..4)],
        // Short leases so that they expire within the run; usable for lease − ~1 s.
        lease: Duration::from_millis(rng.random_range(1300..=2000)),
        max_stale: None,
    };
    let mut sim = new_sim(port, seed, shape).await;
    sim.rng = rng;
    for _ in 0..steps {
        sim.step().await;
    }
    (sim.steps, sim.worst_outage)
}

#[test]
fn seeded_fleets_never_pass_the_ceiling_or_the_pool() {
    let redis = RedisServer::start();
    let port = redis.port;
    // Seeds run side by side (each its own fleet name): most of a step is waiting on Redis.
    let runs: Vec<_> = (1..=12u64)
        .map(|seed| {
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                runtime.block_on(simulate(port, seed, 1500))
            })
        })
        .collect();
    let mut total_steps = 0;
    let mut worst: f64 = 0.0;
    for run in runs {
        let (steps, worst_outage) = run.join().expect("a seed failed: see its message above");
        total_steps += steps;
        worst = worst.max(worst_outage);
    }
    assert_eq!(total_steps, 12 * 1500);
    // Some outage must have come close to b, or the ceiling was never put to the test.
    assert!(worst > 0.5, "the worst outage admitted only {worst:.2} b");
}

/// Rule 1, deterministically: a node that spent its grant and crashed leaves it charged, so the
/// survivor cannot take it over while the authority is down (its evidence is still young).
/// Runs `test` on a current-thread runtime against a redis-server of its own.
fn with_redis<F: std::future::Future<Output = ()>>(test: impl FnOnce(u16) -> F) {
    let redis = RedisServer::start();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(test(redis.port));
}

/// Two nodes, no floor, b = 200 at r = 20 (a 10 s window on the whole pool), 2 s leases.
fn two_node_shape() -> FleetShape {
    FleetShape {
        fleet_ceiling_units: 200.0,
        max_units_per_second: 20.0,
        max_nodes: 2,
        reserve: 0.0,
        lease: Duration::from_millis(2000),
        max_stale: None,
    }
}

#[test]
fn an_expired_lease_stays_charged_until_a_valid_refresh_after_its_expiry() {
    with_redis(|port| async move {
        let mut sim = new_sim(port, 1000, two_node_shape()).await;
        sim.join();
        sim.join();
        sim.renew(0).await; // opens a fresh fleet: growth is held for lease + 2 s
        tokio::time::sleep(Duration::from_millis(4100)).await;
        for i in 0..2 {
            sim.refresh(i);
            sim.settle(i).await;
        }
        // Renewal rounds until the split settles: the first node to renew takes the whole pool,
        // then hands half back once it learns its share.
        for _ in 0..4 {
            for i in 0..2 {
                sim.renew(i).await;
            }
        }
        for i in 0..2 {
            assert_eq!(
                sim.lease(i).unwrap().grant_units,
                100.0,
                "an equal split of the pool"
            );
            sim.refresh(i);
        }
        sim.set_authority(false);
        let now = sim.now();
        assert!(sim.nodes[0].state.admit(100.0, now));
        assert!(sim.nodes[1].state.admit(100.0, now));
        sim.nodes.swap_remove(0); // a crash, without release
                                  // The survivor keeps its own lease (usable ~1 s) while the crashed node's expires.
        for _ in 0..4 {
            tokio::time::sleep(Duration::from_millis(550)).await;
            sim.renew(0).await;
        }
        let lease = sim.lease(0).unwrap();
        assert_eq!(
            lease.grant_units, 100.0,
            "the crashed node's 100 units stay charged"
        );
        let now = sim.now();
        assert!(
            !sim.nodes[0].state.admit(1.0, now),
            "the survivor has spent its 100"
        );
        // A valid refresh sent after the expiry settles the charge: the survivor may grow.
        sim.set_authority(true);
        sim.refresh(0);
        sim.settle(0).await;
        sim.renew(0).await;
        assert_eq!(sim.lease(0).unwrap().grant_units, 200.0);
    });
}

/// Nodes sharing a name must agree on reserve and maxNodes: one that differs gets no grant, and
/// does not shrink the others' shares.
#[test]
fn a_node_whose_reserve_differs_from_the_live_fleet_gets_no_grant() {
    with_redis(|port| async move {
        let shape = two_node_shape();
        let mut fleet = new_sim(port, 2000, shape).await;
        let other_shape = FleetShape {
            reserve: 0.5,
            ..shape
        };
        let mut odd = new_sim(port, 2000, other_shape).await;
        odd.next_id = 100;
        fleet.join();
        fleet.renew(0).await;
        tokio::time::sleep(Duration::from_millis(4100)).await; // a fresh fleet's hold
        fleet.refresh(0);
        fleet.settle(0).await;
        fleet.renew(0).await;
        assert_eq!(fleet.lease(0).unwrap().grant_units, 200.0);
        odd.join();
        odd.renew(0).await;
        assert_eq!(
            odd.lease(0).unwrap().grant_units,
            0.0,
            "a mismatched node gets nothing"
        );
        fleet.renew(0).await;
        assert_eq!(
            fleet.nodes[0].session.target_units, 200.0,
            "and takes no share"
        );
    });
}
