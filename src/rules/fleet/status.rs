//! What a fleet node shows: its mode, the kind of its last failed Redis call, the read-out of
//! `sentinel.fleet()` and the events its logger hears. Plain data.

use std::time::Duration;

use crate::closed_list::closed_list;

closed_list! {
    /// `connecting` (Redis has not answered yet), `leased` (a usable grant), `floor` (answered, no
    /// usable grant).
    pub enum Mode {
        Connecting => "connecting",
        Leased => "leased",
        Floor => "floor",
    }
}

closed_list! {
    /// Why a Redis call failed, as `fleet().redisError` and the error metric name it (a closed set:
    /// an error's text is never shown, it can carry the URL and its password).
    pub enum ErrorKind {
        /// No connection: refused, reset, unreachable, DNS.
        Connect => "connect",
        /// No answer within the call's bound (1 s).
        Timeout => "timeout",
        /// The TLS handshake failed (an unknown CA, a certificate the server refused).
        Tls => "tls",
        /// Wrong user or password (`WRONGPASS`), or a password is needed (`NOAUTH`).
        Auth => "auth",
        /// The ACL user may not run a command the fleet needs (`NOPERM`).
        NoPerm => "noperm",
        /// Any other error answer (`READONLY`, `OOM`, `CLUSTERDOWN`, too many redirects, ...).
        Response => "response",
        /// An answer the scripts never give: not our Redis, or a bug.
        Malformed => "malformed",
    }
}

/// A fleet's shape: the values every lease and floor follow. The fleet's state in Redis carries
/// the values of the node that created it; every node adopts them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    pub reserve: f64,
    pub max_nodes: u64,
    pub lease: Duration,
    pub max_split: Duration,
}

/// `sentinel.fleet()` and the fleet metrics, as of one moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FleetStatus {
    pub mode: Mode,
    pub grant_units: f64,
    pub floor_units: f64,
    pub node_budget_units: f64,
    pub lease_remaining: Duration,
    /// Live nodes Redis counted at its last answer (`None` before any).
    pub live_nodes: Option<u64>,
    /// The fleet's shape in force: adopted from Redis, this node's own before any answer.
    pub settings: Settings,
    /// This node's own settings (they differ from `settings` during a rolling update).
    pub configured: Settings,
    /// All `maxNodes` static floors were taken when this node registered: its floor is 0 and
    /// its whole budget is a lease.
    pub beyond_max_nodes: bool,
    /// The fleet's expired or released units waiting to be settled, at the last answer.
    pub charged_units: Option<f64>,
    /// No grant may grow: before Redis answers, and while a fresh fleet's or a loss's hold lasts.
    pub growth_held: bool,
    /// The kind of the last failed Redis call; `None` once a call succeeds.
    pub redis_error: Option<ErrorKind>,
    /// Failed calls by kind, in [`ErrorKind::ALL`]'s order.
    pub errors: [u64; ErrorKind::COUNT],
}

/// What the node's logger hears of the fleet: each a change, never a repeat.
#[derive(Debug, Clone, PartialEq)]
pub enum FleetEvent {
    /// The kind of the failing calls changed (`None`: Redis answers again).
    RedisError(Option<ErrorKind>),
    /// This node saw Redis lose the fleet's state (or a failover, or a restart): no grant grows
    /// until the hold is over.
    StateLost,
    /// Every one of the fleet's `maxNodes` static floors is taken: this node has none, and its
    /// whole budget is leased from the pool.
    OverMaxNodes { live: u64, max_nodes: u64 },
    /// This node's `reserve`, `maxNodes` or `leaseSeconds` differ from the fleet's: it uses the
    /// fleet's.
    Adopted { fleet: Settings, own: Settings },
}
