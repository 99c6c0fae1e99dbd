//! What a node sends with each script call, as data: `crate::fleet::scripts` turns these into
//! the scripts' arguments, in the order the scripts read them.

use std::time::Duration;

/// One renewal: it also advances the fleet's clock, settles what a valid refresh verified and
/// may end a hold.
#[derive(Debug, Clone, PartialEq)]
pub struct RenewRequest {
    /// Grows with every call of this node: Redis drops a renewal older than one it applied.
    pub seq: u64,
    /// Units beyond the floor this node can use (r × maxStaleSeconds − floor); `None`: no limit.
    pub want: Option<f64>,
    /// What the node caps itself at while this call is in flight: the least Redis must keep
    /// reserving for it (at least the grant units it has used).
    pub keep: f64,
    /// The grant the node could use when it sent this (before capping itself at `keep`).
    pub held_units: f64,
    /// What the node last saw: fleet id, version and epoch ("", 0, "" before any answer).
    pub known: Known,
    /// The seq of the last renewal Redis answered (0: none). A lease older than that is a loss.
    pub acked_seq: u64,
    /// The fleet clock (ms) Redis may advance to: the clock of the node's last answer plus what
    /// its own monotonic clock saw pass since (a lower bound). `None`: no recent answer.
    pub clock_to_ms: Option<f64>,
    /// Charges numbered up to this one were made before a valid refresh was sent: they settle.
    pub settle_through: u64,
    /// The hold of this epoch may end: the node's hold timer ran out before a valid refresh was
    /// sent (`None`: nothing to end).
    pub end_hold: Option<String>,
    /// Monotonic send time: the lease deadline counts from it.
    pub sent_at: Duration,
}

/// The release on close: the unused grant returns to the pool, the used part stays charged.
#[derive(Debug, Clone, PartialEq)]
pub struct ReleaseRequest {
    pub seq: u64,
    /// Grant units the node admitted that no valid refresh has covered yet.
    pub used_units: f64,
    pub known: Known,
    pub clock_to_ms: Option<f64>,
}

/// What a node knows of the fleet's identity from its last answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Known {
    pub fleet_id: String,
    pub version: u64,
    pub epoch: String,
}
