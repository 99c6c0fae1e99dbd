//! Random but plausible calls of the fleet scripts, for the cross-check and the speed test: six
//! nodes renew and release with increasing seqs (now and then a late one), random wants and
//! keeps, and echo the fleet id, version and epoch of their last answer; now and then the state
//! is lost, a snapshot is taken, Redis fails over to it, or the stored server id changes.
//!
//! The scripts' ARGV layouts live in [`Trace::renew_argv`] and [`Trace::release_argv`] only:
//! when renew.lua or release.lua change their arguments, those two functions change with them.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The shape most calls agree on (now and then a node disagrees).
const B: u32 = 200;
const LEASE_MS: u32 = 5000;
pub(crate) const NODES: usize = 6;

/// What a node last heard from the fleet: id, version, epoch.
#[derive(Clone, Default)]
struct Known {
    id: String,
    version: String,
    epoch: String,
}

#[derive(Default)]
struct Node {
    seq: u64,
    /// The last seq Redis answered, and the fleet version of that answer.
    acked: u64,
    acked_version: String,
    known: Known,
}

/// One step of a trace.
pub(crate) enum Step {
    Renew {
        node: usize,
        argv: Vec<String>,
    },
    Release {
        node: usize,
        argv: Vec<String>,
    },
    /// The key is lost (DEL, eviction, FLUSHDB).
    Lose,
    /// A copy of the key is kept, for a later failover.
    Snapshot,
    /// The key goes back to the last copy (a failover to a replica that missed writes).
    FailOver,
    /// The stored server id no longer matches (the state was written by another server).
    ForeignServer(String),
}

pub(crate) struct Trace {
    rng: StdRng,
    nodes: Vec<Node>,
    ids: u64,
    /// Scales the odd cases (late seqs, forgetful nodes, odd shapes, leases seen ended): 1 as
    /// drawn, 0 for a calm fleet that only renews.
    chaos: f64,
}

/// A number a node never heard is 0.
fn or_zero(number: &str) -> String {
    if number.is_empty() { "0" } else { number }.to_owned()
}

pub(crate) fn node_name(node: usize) -> String {
    format!("n{}", node + 1)
}

impl Trace {
    pub(crate) fn new(seed: u64) -> Self {
        Self::with(seed, NODES, 1.0)
    }

    pub(crate) fn with(seed: u64, nodes: usize, chaos: f64) -> Self {
        let nodes = (0..nodes).map(|_| Node::default()).collect();
        Trace {
            rng: StdRng::seed_from_u64(seed),
            nodes,
            ids: 0,
            chaos,
        }
    }

    /// True with probability `p`, scaled by the chaos.
    fn odd(&mut self, p: f64) -> bool {
        self.rng.random_bool(p * self.chaos)
    }

    pub(crate) fn next_step(&mut self) -> Step {
        let roll = self.rng.random_range(0..100);
        let node = self.rng.random_range(0..self.nodes.len());
        match roll {
            0 => Step::Lose,
            1..=3 => Step::Snapshot,
            4 => Step::FailOver,
            5 => Step::ForeignServer(self.fresh_id()),
            6..=15 => Step::Release {
                node,
                argv: self.release_argv(node),
            },
            _ => Step::Renew {
                node,
                argv: self.renew_argv(node),
            },
        }
    }

    /// Takes in a node's answer (fleet id, version, epoch first); an error reply teaches nothing.
    pub(crate) fn observe(&mut self, node: usize, reply: &Result<Vec<String>, String>) {
        if let Ok([id, version, epoch, ..]) = reply.as_deref() {
            let node = &mut self.nodes[node];
            node.acked = node.seq;
            node.acked_version.clone_from(version);
            let known = Known {
                id: id.clone(),
                version: version.clone(),
                epoch: epoch.clone(),
            };
            node.known = known;
        }
    }

    fn fresh_id(&mut self) -> String {
        self.ids += 1;
        format!("id{}", self.ids)
    }

    /// The next seq, or now and then a late (repeated or older) one.
    fn seq(&mut self, node: usize) -> String {
        let late = self.odd(0.1);
        let seq = &mut self.nodes[node].seq;
        if late {
            return seq.saturating_sub(self.rng.random_range(0..3)).to_string();
        }
        *seq += 1;
        seq.to_string()
    }

    /// A number of units: whole or with a fraction (grants and charges are floats).
    fn units(&mut self, max: u32) -> String {
        let whole = self.rng.random_range(0..=max);
        if self.rng.random_bool(0.3) {
            format!("{whole}.{}", self.rng.random_range(1..10))
        } else {
            whole.to_string()
        }
    }

    /// What the node knows (now and then forgotten, as by a restarted node) and the seen-state
    /// report `seen id, seen epoch, seen version, seen age` (age -1: none; with chaos, often a whole lease).
    fn known_and_seen(&mut self, node: usize) -> (Known, [String; 4]) {
        let forget = self.odd(0.05);
        let known = if forget {
            Known::default()
        } else {
            self.nodes[node].known.clone()
        };
        let age = if self.odd(0.3) {
            self.rng.random_range(LEASE_MS..2 * LEASE_MS).to_string()
        } else if self.rng.random_bool(0.5) {
            self.rng.random_range(0..LEASE_MS).to_string()
        } else {
            "-1".to_owned()
        };
        let seen = [
            known.id.clone(),
            known.epoch.clone(),
            or_zero(&known.version),
            age,
        ];
        (known, seen)
    }

    /// `none` with probability `p_none`, else [`Self::units`] up to `max`.
    fn units_or(&mut self, p_none: f64, none: &str, max: u32) -> String {
        if self.rng.random_bool(p_none) {
            none.to_owned()
        } else {
            self.units(max)
        }
    }

    /// renew.lua's ARGV, in its order.
    pub(crate) fn renew_argv(&mut self, node: usize) -> Vec<String> {
        let seq = self.seq(node);
        let (want, keep) = (self.units_or(0.2, "-1", 150), self.units_or(0.5, "0", 50));
        let floor_used = self.units_or(0.7, "0", 20);
        let b = if self.odd(0.1) { B / 2 } else { B };
        let (reserve, max_nodes) = if self.odd(0.05) {
            ("0.25", "4")
        } else {
            ("0.1", "3")
        };
        // The static floor the node counts on: b's reserve shared by max_nodes, or none.
        let floor = if self.rng.random_bool(0.8) {
            "6.666666666666667"
        } else {
            "0"
        };
        let (known, [seen_id, seen_epoch, seen_version, seen_age]) = self.known_and_seen(node);
        let settle = if self.rng.random_bool(0.6) {
            0
        } else {
            self.rng.random_range(1..8)
        };
        let end_hold = if self.rng.random_bool(0.3) {
            known.epoch.clone()
        } else {
            String::new()
        };
        let acked = &self.nodes[node];
        let acked_version = if known.id.is_empty() {
            ""
        } else {
            &acked.acked_version
        };
        let acked_version = or_zero(acked_version);
        vec![
            node_name(node),
            seq,
            want,
            keep,
            floor_used,
            b.to_string(),
            reserve.into(),
            max_nodes.into(),
            LEASE_MS.to_string(),
            known.id,
            or_zero(&known.version),
            known.epoch,
            acked.acked.to_string(),
            acked_version,
            seen_id,
            seen_epoch,
            seen_version,
            seen_age,
            settle.to_string(),
            end_hold,
            self.fresh_id(),
            "3600000".into(),
            floor.into(),
            self.max_split_ms(),
        ]
    }

    /// release.lua's ARGV, in its order.
    fn release_argv(&mut self, node: usize) -> Vec<String> {
        let seq = self.seq(node);
        let (used, floor_used) = (self.units(60), self.units_or(0.7, "0", 6));
        let (known, [seen_id, seen_epoch, seen_version, seen_age]) = self.known_and_seen(node);
        vec![
            node_name(node),
            seq,
            used,
            known.id,
            seen_id,
            seen_epoch,
            seen_version,
            seen_age,
            "3600000".into(),
            floor_used,
            or_zero(&known.version),
            self.fresh_id(),
            self.max_split_ms(),
        ]
    }

    /// A node's maxSplitSeconds in ms: mostly none, now and then a few seconds (a fleet's
    /// first call sets it; a state without one adopts the caller's).
    fn max_split_ms(&mut self) -> String {
        ["0", "0", "1000", "5000"][self.rng.random_range(0..4)].into()
    }
}

/// The speed an explorer gets: renewals on a fleet of ten leases, in this build's profile (the
/// script calls only; drawing their arguments is the explorer's cost). `--nocapture` shows it.
#[test]
fn renewals_on_ten_leases_keep_every_lease_and_print_their_speed() {
    const LEASES: usize = 10;
    const CALLS: u32 = 10_000;
    let mut redis = super::LuaRedis::new();
    let mut trace = Trace::with(1, LEASES, 0.0);
    let mut spent = std::time::Duration::ZERO;
    let mut renew = |trace: &mut Trace, node: usize| {
        let argv = trace.renew_argv(node);
        let start = std::time::Instant::now();
        let reply = redis.eval(super::RENEW_SCRIPT, &["{fleet}"], &argv);
        spent += start.elapsed();
        trace.observe(node, &reply);
        reply.expect("a renewal")
    };
    for node in 0..LEASES {
        renew(&mut trace, node);
    }
    let mut last = Vec::new();
    for call in 0..CALLS {
        last = renew(&mut trace, usize::try_from(call).unwrap() % LEASES);
    }
    let per_second = f64::from(CALLS + 10) / spent.as_secs_f64();
    println!("renew.lua on {LEASES} leases: {per_second:.0} calls/s");
    let leases = redis
        .hash("{fleet}")
        .keys()
        .filter(|field| field.starts_with("n:"))
        .count();
    assert_eq!(
        leases, LEASES,
        "the fleet kept its leases (last reply {last:?})"
    );
    // The rate is printed, never asserted: a timed assertion fails on a loaded machine (it did,
    // with five builds sharing two cores). bench/fleet.mjs measures the real scripts' cost.
}
