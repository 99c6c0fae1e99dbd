//! The explorer's checker. It knows nothing of leases, charges or scripts: only what each live
//! node could spend now (its node budget, by its own clock) and what every node admitted. It
//! checks the fleet's promises at every step:
//!
//! - **budgets**: Σ node budgets (floor + usable grant) of the live nodes that have reached
//!   Redis ≤ the largest b among live nodes, at every instant;
//! - **the ceiling**: while the authority is silent (from the cut T), the units admitted after T
//!   by all nodes, dead ones included, ≤ b (the largest b of a node alive since T);
//! - **what is left**: during the silence, those units plus what the live nodes that still
//!   admit could spend now ≤ b: a promise about to break fails here before it is broken.
//!
//! Two floors are outside the ceiling by design (docs/fleet-protocol.md bounds them), and each is
//! added to the bound, once per node: the floor of a node that has never reached Redis, and the
//! static floor of a node cut off from Redis past its lease deadline while more nodes are alive
//! than the fleet's `maxNodes` (Redis may have given its floor to another node).

use std::collections::BTreeMap;
use std::fmt;

const EPSILON: f64 = 1e-6;

/// What the checker sees of one live node at one instant.
#[derive(Debug, Clone, Copy)]
pub(super) struct NodeView {
    pub(super) id: usize,
    pub(super) b: f64,
    pub(super) reached_redis: bool,
    /// A floor Redis does not count (see the module's doc), else 0.
    pub(super) uncounted_floor: f64,
    pub(super) node_budget: f64,
    /// Readiness admits (evidence young enough).
    pub(super) can_admit: bool,
    /// node budget − ledger, at least 0.
    pub(super) unspent: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Violation(pub(crate) String);

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The silence being checked.
#[derive(Debug, Clone, Default)]
struct Silence {
    ceiling: f64,
    admitted: f64,
    /// Floors Redis did not count, by node, the largest seen.
    uncounted: BTreeMap<usize, f64>,
}

impl Silence {
    fn bound(&self) -> f64 {
        self.ceiling + self.uncounted.values().sum::<f64>() + EPSILON
    }
}

#[derive(Debug, Clone, Default)]
pub(super) struct Checker {
    silence: Option<Silence>,
    /// The largest share of its bound any silence reached (a checker that never came close
    /// tested little).
    pub(super) worst: f64,
}

impl Checker {
    /// The authority stops answering now; `b` is the largest b among live nodes.
    pub(super) fn cut(&mut self, b: f64) {
        self.silence = Some(Silence {
            ceiling: b,
            ..Silence::default()
        });
    }

    pub(super) fn heal(&mut self) {
        self.silence = None;
    }

    /// A node with ceiling `b` started: during a silence it may raise the ceiling (mixed b).
    pub(super) fn joined(&mut self, b: f64) {
        if let Some(silence) = &mut self.silence {
            silence.ceiling = silence.ceiling.max(b);
        }
    }

    /// During a silence: the units admitted since it began. A schedule measures how far past b
    /// it went with this, after a violation that stopped the checks.
    pub(super) fn admitted_since_cut(&self) -> Option<f64> {
        self.silence.as_ref().map(|s| s.admitted)
    }

    /// Some node admitted `units`.
    pub(super) fn admitted(&mut self, units: f64) {
        if let Some(silence) = &mut self.silence {
            silence.admitted += units;
        }
    }

    pub(super) fn check(&mut self, nodes: &[NodeView]) -> Result<(), Violation> {
        let reached = nodes.iter().filter(|n| n.reached_redis);
        let budgets: f64 = reached.clone().map(|n| n.node_budget).sum();
        let uncounted: f64 = reached.map(|n| n.uncounted_floor).sum();
        let b = nodes.iter().map(|n| n.b).fold(0.0, f64::max);
        if budgets > b + uncounted + EPSILON {
            return Err(Violation(format!(
                "budgets: the live nodes' budgets sum to {budgets:.3} > b = {b} (+ {uncounted:.3} \
                 of floors Redis does not count)"
            )));
        }
        let Some(silence) = &mut self.silence else {
            return Ok(());
        };
        // A floor Redis stopped counting may already have been spent (before the node stopped
        // admitting); one never counted matters only while the node admits.
        let uncounted = nodes
            .iter()
            .filter(|n| n.uncounted_floor > 0.0 && (n.reached_redis || n.can_admit));
        for node in uncounted {
            let floor = silence.uncounted.entry(node.id).or_default();
            *floor = floor.max(node.uncounted_floor);
        }
        let bound = silence.bound();
        self.worst = self.worst.max(silence.admitted / bound);
        if silence.admitted > bound {
            return Err(Violation(format!(
                "ceiling: {:.3} units admitted since the authority went silent > {bound:.3}",
                silence.admitted
            )));
        }
        let left: f64 = nodes
            .iter()
            .filter(|n| n.can_admit)
            .map(|n| n.unspent)
            .sum();
        if silence.admitted + left > bound {
            return Err(Violation(format!(
                "what is left: {:.3} admitted since the silence began + {left:.3} the live nodes \
                 can still spend > {bound:.3}",
                silence.admitted
            )));
        }
        Ok(())
    }
}
