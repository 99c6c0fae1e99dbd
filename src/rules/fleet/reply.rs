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
    /// Live leases after this call.
    pub live_nodes: u64,
    /// The fleet's shape, set by the node that created the state: every node adopts it.
    pub fleet_max_nodes: u64,
    pub fleet_reserve: f64,
    pub fleet_lease_ms: u64,
    /// The fleet's maxSplitSeconds, in ms (0 from a state written before it existed: see
    /// renew.lua).
    pub fleet_max_split_ms: u64,
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
    /// This node's lease had ended in Redis (expired and charged whole): the grant units it
    /// used are covered by that charge.
    pub ended: bool,
    /// The node holds one of the `maxNodes` static floors. Without one (more nodes than
    /// `maxNodes`), its floor is part of its lease and lapses with it.
    pub slot: bool,
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
const COMMON: usize = 13;

impl FleetReply {
    /// Reads the common fields (a release's whole answer).
    pub fn parse(fields: &[String]) -> Result<Self, MalformedReply> {
        let f = Fields(fields);
        Ok(FleetReply {
            fleet_id: f.text(0)?,
            version: f.whole(1)?,
            epoch: f.text(2)?,
            held: f.flag(3)?,
            live_nodes: f.whole(4)?,
            fleet_max_nodes: f.whole(5)?,
            fleet_reserve: f.number(6)?,
            fleet_lease_ms: f.whole(7)?,
            charged_units: f.number(8)?.max(0.0),
            charges_through: f.whole(9)?,
            replicas: f.whole(10)?,
            loss: f.flag(11)?,
            fleet_max_split_ms: f.whole(12)?,
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
            slot: f.flag(COMMON + 3)?,
            ended: f.flag(COMMON + 4)?,
        };
        Ok((reply, grant))
    }
}

/// An answer for tests: fleet "f1" at version 1, epoch "e1", not held, two live nodes, the
/// example shape's settings (reserve 0.25, maxNodes 4, 30 s leases, no split).
#[cfg(test)]
pub fn example_reply() -> FleetReply {
    FleetReply {
        fleet_id: "f1".into(),
        version: 1,
        epoch: "e1".into(),
        held: false,
        live_nodes: 2,
        fleet_max_nodes: 4,
        fleet_reserve: 0.25,
        fleet_lease_ms: 30_000,
        fleet_max_split_ms: 0,
        charged_units: 0.0,
        charges_through: 0,
        replicas: 0,
        loss: false,
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
            "f1", "7", "e1", "1", "3", "4", "0.25", "30000", "12.5", "9", "1", "0", "12000", "40",
            "50", "0", "1", "0",
        ]))
        .unwrap();
        assert_eq!(reply.fleet_max_split_ms, 12_000);
        assert_eq!(
            (
                reply.version,
                reply.held,
                reply.charges_through,
                reply.replicas
            ),
            (7, true, 9, 1)
        );
        assert_eq!(
            (
                reply.fleet_reserve,
                reply.fleet_lease_ms,
                reply.charged_units
            ),
            (0.25, 30_000, 12.5)
        );
        assert_eq!(
            (
                grant.grant_units,
                grant.target_units,
                grant.stale,
                grant.slot
            ),
            (40.0, 50.0, false, true)
        );
        assert_eq!(FleetReply::parse(&fields(&["x"])), Err(MalformedReply));
        let nan = fields(&[
            "f", "1", "e", "0", "1", "1", "NaN", "5000", "0", "0", "0", "0",
        ]);
        assert_eq!(FleetReply::parse(&nan), Err(MalformedReply));
        let bad_flag = fields(&[
            "f", "1", "e", "2", "1", "1", "0.1", "5000", "0", "0", "0", "0",
        ]);
        assert_eq!(FleetReply::parse(&bad_flag), Err(MalformedReply));
    }
}
