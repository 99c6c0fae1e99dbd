//! The answers of the fleet scripts (`src/fleet/*.lua`), read into types. Every script answers
//! the common fields; a renewal adds its grant. Numbers travel as strings (Lua would truncate
//! them to integers).

use crate::numbers::saturating_u64;

/// The fields every script answers with (`common.lua`, `reply`).
#[derive(Debug, Clone, PartialEq)]
pub struct FleetReply {
    /// The fleet's lineage: new whenever Redis had no state for the fleet.
    pub fleet_id: String,
    /// Bumped by every write: a Redis showing an older one than a node saw has lost writes.
    pub version: u64,
    /// New at creation and at every loss Redis was shown; charges settle within one epoch.
    pub epoch: String,
    /// Growth is held (a fresh fleet, or a loss) until a node ends the hold.
    pub held: bool,
    /// The fleet's clock, ms: advanced only by what the nodes' monotonic clocks saw pass.
    pub clock_ms: f64,
    /// Live leases after this call.
    pub live_nodes: u64,
    /// The `maxNodes` the live fleet agreed on.
    pub fleet_max_nodes: u64,
    /// Units waiting to be settled.
    pub charged_units: f64,
    /// Every charge so far has a number up to this one: a valid refresh sent after this answer
    /// arrived may settle them.
    pub charges_through: u64,
    /// Replicas connected to the primary when the script ran (`WAIT` confirms growth with them).
    pub replicas: u64,
    /// This call found the state lost, replaced, or written on another server.
    pub loss: bool,
}

/// What a renewal adds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grant {
    /// The units Redis now reserves for this node.
    pub grant_units: f64,
    /// This node's max-min fair share of what is not charged.
    pub target_units: f64,
    /// The renewal was older than one Redis already applied (or the node has released): nothing
    /// changed for this node.
    pub stale: bool,
    /// This node's `reserve` or `maxNodes` differ from the live fleet's: no growth.
    pub mismatch: bool,
}

/// An answer the scripts never give (not our Redis, or a bug).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MalformedReply;

/// The fields, read one at a time.
struct Fields<'a>(&'a [String]);

impl Fields<'_> {
    fn text(&self, i: usize) -> Result<String, MalformedReply> {
        self.0.get(i).cloned().ok_or(MalformedReply)
    }

    fn number(&self, i: usize) -> Result<f64, MalformedReply> {
        self.0
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .filter(|v| v.is_finite())
            .ok_or(MalformedReply)
    }

    fn whole(&self, i: usize) -> Result<u64, MalformedReply> {
        self.number(i).map(saturating_u64)
    }

    fn flag(&self, i: usize) -> Result<bool, MalformedReply> {
        match self.0.get(i).map(String::as_str) {
            Some("1") => Ok(true),
            Some("0") => Ok(false),
            _ => Err(MalformedReply),
        }
    }
}

/// How many fields the common part has; a renewal's grant follows.
const COMMON: usize = 11;

impl FleetReply {
    /// Reads the common fields (a release's whole answer).
    pub fn parse(fields: &[String]) -> Result<Self, MalformedReply> {
        let f = Fields(fields);
        Ok(FleetReply {
            fleet_id: f.text(0)?,
            version: f.whole(1)?,
            epoch: f.text(2)?,
            held: f.flag(3)?,
            clock_ms: f.number(4)?,
            live_nodes: f.whole(5)?,
            fleet_max_nodes: f.whole(6)?,
            charged_units: f.number(7)?.max(0.0),
            charges_through: f.whole(8)?,
            replicas: f.whole(9)?,
            loss: f.flag(10)?,
        })
    }

    /// Reads a renewal's answer: the common fields, then the grant.
    pub fn parse_renewal(fields: &[String]) -> Result<(Self, Grant), MalformedReply> {
        let reply = Self::parse(fields)?;
        let f = Fields(fields);
        let grant = Grant {
            grant_units: f.number(COMMON)?.max(0.0),
            target_units: f.number(COMMON + 1)?.max(0.0),
            stale: f.flag(COMMON + 2)?,
            mismatch: f.flag(COMMON + 3)?,
        };
        Ok((reply, grant))
    }
}

#[cfg(test)]
pub fn fields(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| (*v).to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renewal_answer_is_read_and_garbage_is_refused() {
        let (reply, grant) = FleetReply::parse_renewal(&fields(&[
            "f1", "7", "e1", "1", "1234.5", "3", "4", "12.5", "9", "1", "0", "40", "50", "0", "1",
        ]))
        .unwrap();
        assert_eq!(
            (
                reply.version,
                reply.held,
                reply.charges_through,
                reply.replicas
            ),
            (7, true, 9, 1)
        );
        assert_eq!((reply.clock_ms, reply.charged_units), (1234.5, 12.5));
        assert_eq!(
            (
                grant.grant_units,
                grant.target_units,
                grant.stale,
                grant.mismatch
            ),
            (40.0, 50.0, false, true)
        );
        assert_eq!(FleetReply::parse(&fields(&["x"])), Err(MalformedReply));
        let nan = fields(&["f", "1", "e", "0", "NaN", "1", "1", "0", "0", "0", "0"]);
        assert_eq!(FleetReply::parse(&nan), Err(MalformedReply));
        let bad_flag = fields(&["f", "1", "e", "2", "0", "1", "1", "0", "0", "0", "0"]);
        assert_eq!(FleetReply::parse(&bad_flag), Err(MalformedReply));
    }
}
