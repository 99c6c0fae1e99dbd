//! What the checker is shown after every step: each live node's budget, what it could still spend,
//! and the floors Redis does not count (docs/fleet-protocol.md bounds them).

use super::{Node, World};
use crate::fleet::explorer::checker::{NodeView, Violation};
use crate::rules::budget::lease::lease_deadline;
use crate::rules::readiness::Status;

impl World {
    /// A static floor Redis stopped counting: while more nodes are alive than `max_nodes`, node
    /// `n`'s floor when it is cut off past its lease deadline, Redis lost the state since its
    /// last answer, or it is on the old side of a split brain (Redis may have given that floor
    /// to another node: the promoted copy does not know of a slot the old primary gave since).
    pub(super) fn floor_no_longer_counted(
        &self,
        n: &Node,
        old_side: bool,
        alive: u64,
        max_nodes: u64,
    ) -> f64 {
        let local = n.clock.at(self.now);
        let Some(answered_at) = n.answered_at else {
            return 0.0;
        };
        let settings = n.fleet.status(local, None).settings;
        let cut_off = local >= lease_deadline(answered_at, settings.lease);
        if (cut_off || n.answered_before_loss || old_side) && alive > max_nodes {
            n.fleet.floor_units()
        } else {
            0.0
        }
    }

    /// The invariants, at this instant.
    pub(super) fn check(&mut self) -> Result<(), Violation> {
        if let Some(violation) = self.ended_early.take() {
            return Err(violation);
        }
        let now = self.now;
        let alive = self.nodes.iter().filter(|n| n.alive).count() as u64;
        // The fewest floors any live node's settings allow: after a loss, a node with its own
        // settings may create the state anew (a rollout that lowers maxNodes below the nodes
        // alive is more nodes than maxNodes).
        let max_nodes = self
            .nodes
            .iter()
            .filter(|n| n.alive)
            .map(|n| {
                let status = n.fleet.status(n.clock.at(now), None);
                status.settings.max_nodes.min(status.configured.max_nodes)
            })
            .min()
            .unwrap_or(u64::MAX);
        for i in 0..self.nodes.len() {
            let old_side = self.on_old_primary(i);
            let floor = self.floor_no_longer_counted(&self.nodes[i], old_side, alive, max_nodes);
            let node = &mut self.nodes[i];
            node.uncounted = node.uncounted.max(floor);
        }
        let views: Vec<NodeView> = self
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.alive)
            .map(|(id, n)| {
                let local = n.clock.at(now);
                let budget = n.state.node_budget_units(local);
                NodeView {
                    id,
                    b: n.shape.fleet_ceiling_units,
                    reached_redis: n.reached_redis,
                    // A node that has never reached Redis uses a floor Redis never counted.
                    uncounted_floor: if n.reached_redis {
                        n.uncounted.max(n.spent_unreached)
                    } else {
                        n.shape.floor_units()
                    },
                    node_budget: budget,
                    can_admit: n.state.readiness(local).status != Status::NotReady,
                    unspent: (budget - n.state.exposure_units()).max(0.0),
                }
            })
            .collect();
        self.checker.check(&views)
    }
}
