//! A fleet budget's decisions, with no I/O: what one node asks Redis for, how it reads the
//! answers, when it renews, when it may grow and when it has seen Redis lose state
//! ([`FleetNode`]). `rules::fleet_exchange` runs each exchange on this and the node's sentinel
//! state together; the lease task in `crate::fleet` only sends what it asks and hands back what
//! Redis answered, and the explorer and the simulation call the same functions.
//!
//! How the fleet stays under b whatever Redis does (docs/fleet.md):
//! - a fleet's whole state is one Redis key, so eviction or `DEL` loses all of it or none;
//! - a lease ends only when some node measured a whole lease on its own monotonic clock since it
//!   saw the state at a version as new as the lease's (never by Redis's clock): no step or lag
//!   of any clock ends a lease before its holder's deadline;
//! - the fleet's shape (`reserve`, `maxNodes`, `leaseSeconds`) is the state's, adopted by every
//!   node; nodes beyond `maxNodes` have no static floor;
//! - charges settle by number: a valid refresh sent after a node received the answer that
//!   listed them settles them, with no clock compared at all;
//! - a lost or stale state (a missing key, another lineage, an older version, another server, a
//!   node's lease missing) holds growth for the longest leaseSeconds the node knew × 1.03 + 2 s
//!   on its own clock and until a valid refresh sent after that settles the fleet;
//! - growth is used only once `WAIT` says every connected replica has it.

mod failures;
mod memory;
mod node;
mod reply;
mod request;
mod status;

#[cfg(test)]
mod tests;

pub use memory::growth_hold;
pub use node::{Confirm, FleetNode, Local};
#[cfg(test)]
pub use reply::example_reply;
pub use reply::{FleetReply, Grant};
pub use request::{ReleaseRequest, RenewRequest, Seen};
pub use status::{ErrorKind, FleetEvent, FleetStatus, Mode, Settings};
