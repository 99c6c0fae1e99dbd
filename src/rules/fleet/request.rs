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
    /// The static floor the node uses, and what it used of it: a node Redis gives no static
    /// floor keeps that in its lease; one that had none and gets one gives that much of its lease back.
    pub floor_units: f64,
    pub floor_used: f64,
    /// What the node last saw: fleet id, version and epoch ("", 0, "" before any answer).
    pub known: Known,
    /// The seq of the last renewal Redis answered (0: none). A lease older than that is a loss.
    pub acked_seq: u64,
    /// The version that renewal wrote (0: none): a missing lease written at or before a version
    /// Redis swept has ended, anything else missing is a loss.
    pub acked_version: u64,
    /// The newest state this node saw a whole lease ago or longer: leases not renewed since end.
    pub seen: Option<Seen>,
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
    /// What the node used of its static floor: its slot is free for another node now.
    pub floor_used: f64,
    pub known: Known,
    pub seen: Option<Seen>,
}

/// A report that this node saw the fleet's state at `version` (of that lineage and epoch) at
/// least `age` ago on its own monotonic clock.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    pub fleet_id: String,
    pub epoch: String,
    pub version: u64,
    pub age: Duration,
}

/// What a node knows of the fleet's identity from its last answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Known {
    pub fleet_id: String,
    pub version: u64,
    pub epoch: String,
}
