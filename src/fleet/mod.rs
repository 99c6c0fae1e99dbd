//! The fleet budget's I/O: one task per fleet sentinel, on the private runtime, that leases this
//! node's grant from Redis, renews it, settles charges after valid refreshes and releases the
//! grant on close. `admit()` and `readiness()` never wait on it: they read the lease the task
//! last handed to the sentinel state, and the lease deadline takes the grant away by itself.

pub mod metrics;
mod scripts;
pub mod session;
#[cfg(test)]
mod simulation;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::AsyncConnectionConfig;
use tokio::sync::watch;

use crate::clock;
use crate::rules::lease::{FleetShape, Lease};
use crate::runtime;
use crate::shared_sentinel::SharedSentinel;
use scripts::Keys;
use session::{FleetReply, Session};

/// Every Redis call (connect included) gives up after this: a dead or paused server must not
/// hold the task (measured: a plain call blocked 9.2 s in reconnect backoff).
const CALL_TIMEOUT: Duration = Duration::from_secs(1);
/// How often the task looks at the ledger, to renew early when it passes half the grant.
const USAGE_CHECK: Duration = Duration::from_millis(200);
/// Reconnect backoff: doubling from the first to the last, with jitter.
const BACKOFF: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(5));
/// `close()` waits for the release at most this long. The release is bounded by one Redis call
/// (`CALL_TIMEOUT`); this only guards against a task that never reports.
const RELEASE_WAIT: Duration = Duration::from_millis(1200);
/// Settles are spaced at least this far apart (each valid refresh could settle otherwise).
const SETTLE_SPACING: Duration = Duration::from_secs(2);

/// Kinds of Redis errors counted in the metrics (a closed set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Connect,
    Timeout,
    Response,
    Malformed,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 4] = [
        ErrorKind::Connect,
        ErrorKind::Timeout,
        ErrorKind::Response,
        ErrorKind::Malformed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Connect => "connect",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Response => "response",
            ErrorKind::Malformed => "malformed",
        }
    }
}

/// `connecting` (Redis has not answered yet), `leased` (a usable grant), `floor` (answered, no
/// usable grant).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Connecting,
    Leased,
    Floor,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::Connecting, Mode::Leased, Mode::Floor];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Connecting => "connecting",
            Mode::Leased => "leased",
            Mode::Floor => "floor",
        }
    }
}

/// What `fleet()` and the metrics read, as of now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FleetStatus {
    pub mode: Mode,
    pub grant_units: f64,
    pub floor_units: f64,
    pub node_budget_units: f64,
    pub lease_remaining: Duration,
    pub live_nodes: Option<u64>,
    pub charged_units: Option<f64>,
    /// Growth is held (a fresh fleet, or Redis lost its state) until leaseSeconds + 2 s have
    /// passed and a valid refresh sent after that settled the fleet; as of the last answer.
    pub growth_held: bool,
    pub errors: [u64; 4],
}

/// The part of the fleet task that the bindings read: the last answer's figures, error counts,
/// and whether the release on close is done.
pub struct Fleet {
    shape: FleetShape,
    answered: AtomicBool,
    live_nodes: AtomicU64,
    charged_bits: AtomicU64,
    growth_held: AtomicBool,
    errors: [AtomicU64; 4],
    released: watch::Sender<bool>,
}

impl Fleet {
    /// Reads the fleet's state now (the grant is in the sentinel state, so it lapses at the deadline).
    pub fn status(&self, shared: &SharedSentinel) -> FleetStatus {
        let now = clock::now();
        let (grant, deadline) = shared.with_state(|state| {
            let fleet = state.budget().fleet();
            (
                fleet.map_or(0.0, |f| f.grant_at(now)),
                fleet.and_then(|f| f.lease).map(|l| l.deadline),
            )
        });
        let answered = self.answered.load(Relaxed);
        let mode = match (answered, grant > 0.0) {
            (false, _) => Mode::Connecting,
            (true, true) => Mode::Leased,
            (true, false) => Mode::Floor,
        };
        let floor = self.shape.floor_units();
        FleetStatus {
            mode,
            grant_units: grant,
            floor_units: floor,
            node_budget_units: floor + grant,
            lease_remaining: match deadline {
                Some(deadline) if grant > 0.0 => deadline.saturating_sub(now),
                _ => Duration::ZERO,
            },
            live_nodes: answered.then(|| self.live_nodes.load(Relaxed)),
            charged_units: answered.then(|| f64::from_bits(self.charged_bits.load(Relaxed))),
            growth_held: self.growth_held.load(Relaxed),
            errors: std::array::from_fn(|i| self.errors[i].load(Relaxed)),
        }
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

    fn count_error(&self, kind: ErrorKind) {
        let index = ErrorKind::ALL.iter().position(|k| *k == kind).unwrap_or(0);
        self.errors[index].fetch_add(1, Relaxed);
    }

    fn note(&self, reply: &FleetReply) {
        self.live_nodes.store(reply.live_nodes, Relaxed);
        self.charged_bits
            .store(reply.charged_units.to_bits(), Relaxed);
        self.growth_held.store(!reply.settled, Relaxed);
        self.answered.store(true, Relaxed);
    }
}

/// Starts leasing for `shared`. `client` was built from the configured URL.
pub fn start(
    shared: Arc<SharedSentinel>,
    shape: FleetShape,
    name: &str,
    client: redis::Client,
) -> Arc<Fleet> {
    let fleet = Arc::new(Fleet {
        shape,
        answered: AtomicBool::new(false),
        live_nodes: AtomicU64::new(0),
        charged_bits: AtomicU64::new(0),
        // Until Redis answers, growth is as good as held: the node runs on its floor.
        growth_held: AtomicBool::new(true),
        errors: Default::default(),
        released: watch::channel(false).0,
    });
    let task = Task {
        shared,
        fleet: fleet.clone(),
        client,
        keys: Keys::new(name),
        node: random_id(),
        connection: None,
        session: Session::default(),
        failures: 0,
    };
    runtime::handle().spawn(task.run());
    fleet
}

/// Differences smaller than this are not worth a Redis call.
fn slack(share: f64) -> f64 {
    0.5_f64.max(share * 0.01)
}

fn random_id() -> String {
    format!("{:016x}", rand::random::<u64>())
}

/// Why a Redis call failed.
type CallResult<T> = Result<T, ErrorKind>;

struct Task {
    shared: Arc<SharedSentinel>,
    fleet: Arc<Fleet>,
    client: redis::Client,
    keys: Keys,
    /// This node's id in the fleet: new for every sentinel, so a restart is a new node.
    node: String,
    connection: Option<MultiplexedConnection>,
    session: Session,
    /// Consecutive failed calls, for the backoff.
    failures: u32,
}

impl Task {
    async fn run(mut self) {
        let mut verified = self.shared.verified_sent_at.subscribe();
        let mut next_renewal = clock::now();
        let mut last_renewal = Duration::ZERO;
        let mut last_settle: Option<Duration> = None;
        loop {
            if self.shared.is_closed() {
                break;
            }
            let now = clock::now();
            if now >= next_renewal {
                last_renewal = now;
                next_renewal = match self.renew().await {
                    Ok(after) => now + after,
                    Err(kind) => now + self.failed(kind),
                };
                continue;
            }
            let sent = *verified.borrow_and_update();
            let settle_due = last_settle.is_none_or(|at| now >= at + SETTLE_SPACING);
            if let (Some(sent), true) = (sent, settle_due) {
                if let Some(cutoff) = self.session.settle_cutoff(sent) {
                    last_settle = Some(now);
                    match self.settle(cutoff).await {
                        // A settle that allowed growth: renew now to grow.
                        Ok(true) => next_renewal = clock::now(),
                        Ok(false) => {}
                        Err(kind) => {
                            next_renewal = next_renewal.max(clock::now() + self.failed(kind))
                        }
                    }
                    continue;
                }
            }
            let wants_renewal = self.shrink_to_share(now) || self.passed_half_the_grant(now);
            let soonest = last_renewal + self.shape().lease / 12;
            if wants_renewal && soonest < next_renewal {
                next_renewal = soonest.max(now);
                continue;
            }
            tokio::select! {
                _ = self.shared.until_closed() => {}
                _ = tokio::time::sleep_until(clock::deadline(next_renewal)) => {}
                _ = verified.changed() => {}
                _ = tokio::time::sleep(USAGE_CHECK) => {}
            }
        }
        self.release().await;
        self.fleet.released.send_replace(true);
    }

    fn shape(&self) -> &FleetShape {
        &self.fleet.shape
    }

    /// Grant units in use: the ledger beyond the floor.
    fn used_beyond_floor(&self) -> f64 {
        let floor = self.shape().floor_units();
        self.shared
            .with_state(|state| (state.exposure_units() - floor).max(0.0))
    }

    fn passed_half_the_grant(&self, now: Duration) -> bool {
        let grant = self.current_lease().map_or(0.0, |l| l.usable_at(now));
        grant > 0.0 && self.used_beyond_floor() > grant / 2.0
    }

    /// Holding more than its fair share (others joined), the node lowers its own cap to
    /// max(used, share) as its ledger clears: always safe (it uses less than Redis reserves for
    /// it), and the next renewal hands the difference back. Answers whether it lowered.
    fn shrink_to_share(&self, now: Duration) -> bool {
        let Some(lease) = self.current_lease() else {
            return false;
        };
        let held = lease.usable_at(now);
        let share = self.session.target_units;
        let cap = share.max(self.used_beyond_floor());
        if cap + slack(share) >= held {
            return false;
        }
        self.shared.set_lease(Some(Lease {
            grant_units: cap,
            ..lease
        }));
        true
    }

    fn current_lease(&self) -> Option<Lease> {
        self.shared
            .with_state(|state| state.budget().fleet().and_then(|f| f.lease))
    }

    /// One renewal; answers how long until the next.
    async fn renew(&mut self) -> CallResult<Duration> {
        let now = clock::now();
        let used = self.used_beyond_floor();
        let held = self.current_lease();
        let keep = self.shared.with_state(|state| {
            state.budget().fleet().map_or(0.0, |f| {
                f.keep_for_renewal(now, used, self.session.target_units)
            })
        });
        // Cap the local grant at `keep` until the answer: Redis may lower the reservation to it.
        if let Some(lease) = held.filter(|l| l.usable_at(now) > keep) {
            self.shared.set_lease(Some(Lease {
                grant_units: keep,
                ..lease
            }));
        }
        let shape = *self.shape();
        let renewal = self.session.renewal(&shape, keep, now);
        let mut conn = self.connection().await?;
        let new_fleet_id = random_id();
        let call = scripts::renew(
            &mut conn,
            &self.keys,
            &self.node,
            &new_fleet_id,
            &shape,
            &renewal,
        );
        let fields = self.finished(tokio::time::timeout(CALL_TIMEOUT, call).await)?;
        let received = clock::now();
        let (reply, grant) = FleetReply::parse(&fields, true).map_err(|_| ErrorKind::Malformed)?;
        let grant = grant.ok_or(ErrorKind::Malformed)?;
        self.session.answered_with(&reply, received);
        self.fleet.note(&reply);
        if let Some(lease) = self.session.lease_from(&shape, &renewal, &grant) {
            self.shared.set_lease(Some(lease));
        }
        Ok(self.next_renewal_after(&grant, reply.settled))
    }

    /// Every leaseSeconds / 3 (±10 %); sooner while this node holds less than its fair share
    /// and growth is allowed, to pick up what the others hand back (lowering is driven by
    /// `shrink_to_share`).
    fn next_renewal_after(&self, grant: &session::Grant, settled: bool) -> Duration {
        let period = self
            .shape()
            .lease
            .mul_f64((1.0 + 0.2 * (rand::random::<f64>() - 0.5)) / 3.0);
        if settled && grant.grant_units + slack(grant.target_units) < grant.target_units {
            period.min(self.shape().lease / 10)
        } else {
            period
        }
    }

    /// One settle; answers whether growth became allowed.
    async fn settle(&mut self, cutoff: f64) -> CallResult<bool> {
        let was_settled = self.session.last.as_ref().is_some_and(|l| l.settled);
        self.session.settling(cutoff);
        let (known_id, known_version) = self.session.known();
        let shape = *self.shape();
        let mut conn = self.connection().await?;
        let new_fleet_id = random_id();
        let call = scripts::settle(
            &mut conn,
            &self.keys,
            cutoff,
            &known_id,
            known_version,
            &new_fleet_id,
            &shape,
        );
        let fields = self.finished(tokio::time::timeout(CALL_TIMEOUT, call).await)?;
        let (reply, _) = FleetReply::parse(&fields, false).map_err(|_| ErrorKind::Malformed)?;
        self.session.answered_with(&reply, clock::now());
        self.fleet.note(&reply);
        Ok(reply.settled && !was_settled)
    }

    /// On close: the unused grant returns to the pool, the used part stays charged. Bounded by
    /// one call's timeout in all, connecting included.
    async fn release(&mut self) {
        if self.current_lease().is_none() {
            return;
        }
        let grant = self.current_lease().map_or(0.0, |l| l.grant_units);
        let used = self.used_beyond_floor().min(grant);
        let shape = *self.shape();
        let attempt = async {
            let mut conn = self.connection().await?;
            let call = scripts::release(&mut conn, &self.keys, &self.node, used, &shape);
            self.finished(tokio::time::timeout(CALL_TIMEOUT, call).await)
        };
        if let Ok(Ok(fields)) = tokio::time::timeout(CALL_TIMEOUT, attempt).await {
            if let Ok((reply, _)) = FleetReply::parse(&fields, false) {
                self.fleet.note(&reply);
            }
        }
        self.shared.set_lease(None);
    }

    /// The connection, made (bounded by the call timeout) when there is none.
    async fn connection(&mut self) -> CallResult<MultiplexedConnection> {
        if let Some(connection) = &self.connection {
            return Ok(connection.clone());
        }
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(CALL_TIMEOUT))
            .set_response_timeout(Some(CALL_TIMEOUT));
        let connect = self
            .client
            .get_multiplexed_async_connection_with_config(&config);
        match tokio::time::timeout(CALL_TIMEOUT, connect).await {
            Ok(Ok(connection)) => {
                self.connection = Some(connection.clone());
                Ok(connection)
            }
            // Errors are never shown: their text can carry the URL and its password.
            _ => Err(ErrorKind::Connect),
        }
    }

    /// A call's result, its error classified; a success ends the backoff.
    fn finished<T>(
        &mut self,
        result: Result<redis::RedisResult<T>, tokio::time::error::Elapsed>,
    ) -> CallResult<T> {
        match result {
            Ok(Ok(value)) => {
                self.failures = 0;
                Ok(value)
            }
            Err(_) => Err(ErrorKind::Timeout),
            Ok(Err(e)) if e.is_timeout() => Err(ErrorKind::Timeout),
            Ok(Err(e))
                if e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal() =>
            {
                Err(ErrorKind::Connect)
            }
            Ok(Err(_)) => Err(ErrorKind::Response),
        }
    }

    /// Counts the error, drops the connection when it may be broken, and answers the backoff.
    fn failed(&mut self, kind: ErrorKind) -> Duration {
        self.fleet.count_error(kind);
        if kind != ErrorKind::Malformed {
            self.connection = None;
        }
        self.failures = self.failures.saturating_add(1);
        let (first, last) = BACKOFF;
        let exp = first.saturating_mul(1 << self.failures.min(16)).min(last);
        exp.mul_f64(0.5 + rand::random::<f64>() / 2.0)
    }
}
