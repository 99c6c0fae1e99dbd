//! A fleet budget's decisions, with no I/O: what one node asks Redis for, how it reads the
//! answers, when it renews, when it may grow and when it has seen Redis lose state
//! ([`FleetNode`]). The lease task in `crate::fleet` only sends what this asks and hands back
//! what Redis answered; the randomized simulation (`crate::fleet::simulation`) drives this same
//! type against a real Redis, on a fake clock.
//!
//! How the fleet stays under b whatever Redis does (docs/fleet.md):
//! - a fleet's whole state is one Redis key, so eviction or `DEL` loses all of it or none;
//! - leases expire on the *fleet clock*, which only advances by what the nodes' monotonic clocks
//!   measured (never Redis's `TIME`): a step of the server's clock cannot free a lease early;
//! - charges settle by number: a valid refresh sent after a node received the answer that
//!   listed them settles them, with no clock compared at all;
//! - a lost or stale state (a missing key, an older version, another server, a node's lease
//!   missing) holds growth for leaseSeconds + 2 s on the node's own clock and until a valid
//!   refresh sent after that settles the fleet;
//! - growth is used only once `WAIT` says every connected replica has it.

mod failures;
mod memory;
mod node;
mod reply;
mod request;
mod status;

#[cfg(test)]
mod tests;

pub use node::{Confirm, FleetNode, Local};
pub use reply::FleetReply;
pub use request::{ReleaseRequest, RenewRequest};
pub use status::{ErrorKind, FleetEvent, FleetStatus, Mode};
