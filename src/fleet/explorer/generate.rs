//! Where schedules come from: a seeded generator that mostly follows the node tasks' own
//! cadence (renew when due, refresh a third of the window in) and mixes in what nobody planned:
//! calls that land late or never, answers lost, links cut one way, crashes, joins past
//! `maxNodes`, nodes with other settings, silences of the authority that begin right after
//! every node verified, every way Redis can lose or rewind the fleet's state, and split brains.

use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::action::{Action, Cut, Fate};
use super::world::World;
use crate::numbers::millis_u64;
use crate::rules::budget::lease::FleetShape;

/// Which parts of the world a batch of runs explores: everything, or one kind of trouble alone
/// (to show which kind a counterexample needs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Profile {
    /// Nodes with another `leaseSeconds` (a rolling update), `reserve` / `maxNodes`, or b.
    pub(crate) mixed: Mixed,
    /// Up to 3 × maxNodes nodes alive at once (else at most maxNodes).
    pub(crate) crowd: bool,
    /// The key lost, failovers, restarts, Redis's clock stepped.
    pub(crate) redis_faults: bool,
    /// Links cut, calls late or lost, answers lost, crashes.
    pub(crate) network_faults: bool,
    /// Split brains (two primaries taking the fleet's writes at once) lasting up to this long.
    pub(crate) splits: Option<Duration>,
    /// The `maxSplitSeconds` every node of a run is configured with: the longest split the
    /// fleet promises to ride out.
    pub(crate) max_split: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mixed {
    None,
    Lease,
    Floors,
    Ceiling,
    Any,
}

impl Profile {
    pub(crate) const EVERYTHING: Profile = Profile {
        mixed: Mixed::Any,
        crowd: true,
        redis_faults: true,
        network_faults: true,
        // Splits within the configured bound, beside every other kind of trouble.
        splits: Some(Duration::from_secs(12)),
        max_split: Duration::from_secs(12),
    };
    pub(crate) const CALM: Profile = Profile {
        mixed: Mixed::None,
        crowd: false,
        redis_faults: false,
        network_faults: false,
        splits: None,
        max_split: Duration::ZERO,
    };
    /// Split brains alone, up to 12 s, on fleets configured for 12 s (the default): the promise.
    pub(crate) const SPLITS: Profile = Profile {
        splits: Some(Duration::from_secs(12)),
        max_split: Duration::from_secs(12),
        ..Profile::CALM
    };
    /// Split brains alone, up to 30 s, on fleets configured for 12 s: the negative control,
    /// where a split longer than the bound must be found to break the ceiling.
    pub(crate) const LONG_SPLITS: Profile = Profile {
        splits: Some(Duration::from_secs(30)),
        max_split: Duration::from_secs(12),
        ..Profile::CALM
    };
}

pub(super) struct Generator {
    rng: StdRng,
    profile: Profile,
    configs: Vec<FleetShape>,
    /// Actions queued to run next, popped from the end.
    queued: Vec<Action>,
    silent_until: Option<Duration>,
    /// The split under way ends then; the nodes that stayed with the old primary.
    split_until: Option<Duration>,
    split_stay: Vec<usize>,
    /// Per node: its link is cut until then.
    cut_until: Vec<Option<Duration>>,
    /// Per node: its process is paused (its tasks do nothing) until then.
    paused_until: Vec<Duration>,
}

/// A shape for a run: small r (windows longer than a lease, so a lease freed early is spent on
/// evidence still young), short leases (many lapse in a run).
fn base_shape(rng: &mut StdRng) -> FleetShape {
    FleetShape {
        fleet_ceiling_units: f64::from(rng.random_range(10..=100u32)) * 10.0,
        max_units_per_second: f64::from(rng.random_range(2..=20u32)),
        max_nodes: rng.random_range(1..=5),
        reserve: [0.0, 0.1, 0.25, 0.5, 0.9][rng.random_range(0..5)],
        lease: Duration::from_secs(rng.random_range(5..=12)),
        // The profile's (`Generator::new`).
        max_split: Duration::ZERO,
        max_stale: None,
    }
}

/// Another node's settings in a mixed fleet (a rolling update): one field differs.
fn variant(rng: &mut StdRng, base: &FleetShape, mixed: Mixed) -> FleetShape {
    let mut shape = *base;
    let which = match mixed {
        Mixed::Lease => 0,
        Mixed::Floors => rng.random_range(1..3),
        Mixed::Ceiling => 3,
        Mixed::None | Mixed::Any => rng.random_range(0..4),
    };
    match which {
        0 => shape.lease = Duration::from_secs(rng.random_range(5..=60)),
        1 => shape.reserve = [0.0, 0.25, 0.5, 0.9][rng.random_range(0..4)],
        2 => shape.max_nodes = rng.random_range(1..=8),
        _ => shape.fleet_ceiling_units = f64::from(rng.random_range(10..=100u32)) * 10.0,
    }
    shape
}

impl Generator {
    pub(super) fn new(seed: u64, profile: Profile) -> Self {
        let mut rng = StdRng::seed_from_u64(seed);
        let base = base_shape(&mut rng);
        let mut configs = vec![base];
        let mix = match profile.mixed {
            Mixed::None => false,
            Mixed::Any => rng.random_bool(0.4),
            _ => true,
        };
        if mix {
            configs.push(variant(&mut rng, &base, profile.mixed));
        }
        // Set after the draws, so a profile's max_split never shifts a seed's schedule.
        for config in &mut configs {
            config.max_split = profile.max_split;
        }
        Generator {
            rng,
            profile,
            configs,
            queued: Vec::new(),
            silent_until: None,
            split_until: None,
            split_stay: Vec::new(),
            cut_until: Vec::new(),
            paused_until: Vec::new(),
        }
    }

    pub(super) fn configs(&self) -> &[FleetShape] {
        &self.configs
    }

    fn fate(&mut self, odd: bool) -> Fate {
        let rng = &mut self.rng;
        if !odd {
            return Fate {
                land_ms: Some(rng.random_range(0..5)),
                answer_ms: Some(rng.random_range(0..5)),
            };
        }
        let land_ms = match rng.random_range(0..3) {
            0 => None,
            1 => Some(rng.random_range(900..6_000)),
            _ => Some(rng.random_range(0..5)),
        };
        let answer_ms = match rng.random_range(0..3) {
            0 => None,
            1 => Some(rng.random_range(500..2_000)),
            _ => Some(rng.random_range(0..5)),
        };
        Fate { land_ms, answer_ms }
    }

    /// Time passes: up to the next renewal due among the nodes that run (so their tasks keep
    /// their cadence), now and then much longer (every node's process stalls at once).
    fn wait(&mut self, world: &World, awake: &[usize]) -> Action {
        let lease = millis_u64(self.configs[0].lease);
        let next_due = awake
            .iter()
            .filter_map(|&i| world.renewal_due_in(i))
            .min()
            .map_or(u64::MAX, |d| millis_u64(d) + 1);
        let ms = match self.rng.random_range(0..1000) {
            0..=2 => self.rng.random_range(0..=lease * 2),
            3..=100 => self.rng.random_range(0..2_000).min(next_due),
            _ => self.rng.random_range(0..300).min(next_due),
        };
        // Not past a split's end: the nodes that stayed may be cut off as it ends.
        let ms = self.split_until.map_or(ms, |until| {
            ms.min(millis_u64(until.saturating_sub(world.now())))
        });
        Action::Wait(u32::try_from(ms).unwrap_or(u32::MAX))
    }

    fn lease(&self) -> Duration {
        self.configs
            .iter()
            .map(|c| c.lease)
            .max()
            .unwrap_or_default()
    }

    /// The next action for `world` as it stands.
    pub(super) fn next(&mut self, world: &World) -> Action {
        if let Some(action) = self.queued.pop() {
            return action;
        }
        let now = world.now();
        if self.silent_until.is_some_and(|until| now >= until) {
            self.silent_until = None;
            return Action::AuthorityUp;
        }
        let n = world.nodes.len();
        self.cut_until.resize(n, None);
        self.paused_until.resize(n, Duration::ZERO);
        if self.split_until.is_some_and(|until| now >= until) {
            if let Some(cut) = self.after_split(world) {
                return cut;
            }
        }
        let live: Vec<usize> = (0..n).filter(|&i| world.nodes[i].alive).collect();
        if let Some(&node) = live
            .iter()
            .find(|&&i| self.cut_until[i].is_some_and(|t| now >= t))
        {
            self.cut_until[node] = None;
            return Action::Link { node, cut: None };
        }
        let max_nodes = self.configs.iter().map(|c| c.max_nodes).min().unwrap_or(1) as usize;
        let most = if self.profile.crowd {
            3 * max_nodes
        } else {
            max_nodes
        };
        if live.is_empty() || (live.len() < most && self.rng.random_bool(0.005)) {
            return self.join();
        }
        let awake: Vec<usize> = live
            .iter()
            .copied()
            .filter(|&i| now >= self.paused_until[i])
            .collect();
        if let Some(action) = self.due_task(world, &awake) {
            return action;
        }
        if self.rng.random_bool(0.4) {
            return self.wait(world, &awake);
        }
        let node = live[self.rng.random_range(0..live.len())];
        self.random_action(world, node, &live)
    }

    /// What the node tasks would do now: renew when due (a cut node's renewal sometimes gets
    /// through a brief reconnect), refresh a third of the window in.
    fn due_task(&mut self, world: &World, awake: &[usize]) -> Option<Action> {
        let due: Vec<usize> = awake
            .iter()
            .copied()
            .filter(|&i| world.renewal_due(i))
            .collect();
        if !due.is_empty() && self.rng.random_bool(0.95) {
            let node = due[self.rng.random_range(0..due.len())];
            let odd = self.profile.network_faults && self.rng.random_bool(0.05);
            let fate = self.fate(odd);
            let renew = Action::Renew {
                node,
                fate,
                jitter: self.rng.random(),
            };
            if self.cut_until[node].is_some() && self.rng.random_bool(0.3) {
                // Gets through once: the link heals for this one call.
                self.queued.push(Action::Link {
                    node,
                    cut: Some(Cut::Both),
                });
                self.queued.push(renew);
                return Some(Action::Link { node, cut: None });
            }
            return Some(renew);
        }
        let node = *awake.get(self.rng.random_range(0..awake.len().max(1)))?;
        if world.refresh_pending(node) && self.rng.random_bool(0.5) {
            return Some(Action::RefreshAnswer(node));
        }
        if world.refresh_due(node) && self.rng.random_bool(0.3) {
            return Some(Action::RefreshSend(node));
        }
        None
    }

    fn random_action(&mut self, world: &World, node: usize, live: &[usize]) -> Action {
        let silent = !world.authority_up();
        let units = self.rng.random_range(1..=20);
        let network = self.profile.network_faults;
        let redis = self.profile.redis_faults;
        let lease = self.lease();
        let now = world.now();
        match self.rng.random_range(0..1000) {
            0..=399 if silent => Action::Spend { node, units },
            0..=449 => Action::Admit { node, units },
            // Refreshes out of the regular cadence: on demand (the ledger at half the budget),
            // or a pause cut short before a lease deadline.
            450..=474 => Action::RefreshSend(node),
            475..=499 => Action::RefreshAnswer(node),
            500..=539 if network => {
                let fate = self.fate(true);
                Action::Renew {
                    node,
                    fate,
                    jitter: self.rng.random(),
                }
            }
            540..=579 if network => {
                if self.rng.random_bool(0.3) {
                    return self.partition_healing_in_stages(now, node, live);
                }
                // Cut off for a fifth of a lease to a lease and a half, one way or both;
                // sometimes several nodes at once.
                let cut = [Cut::Requests, Cut::Answers, Cut::Both][self.rng.random_range(0..3)];
                let until = now + lease.mul_f64(self.rng.random_range(0.2..1.5));
                for &other in live {
                    if other != node && self.rng.random_bool(0.5) {
                        self.cut_until[other] = Some(until);
                        self.queued.push(Action::Link {
                            node: other,
                            cut: Some(cut),
                        });
                    }
                }
                self.cut_until[node] = Some(until);
                Action::Link {
                    node,
                    cut: Some(cut),
                }
            }
            580..=589 if network => {
                self.paused_until[node] = now + lease.mul_f64(self.rng.random_range(0.1..1.5));
                Action::Wait(0)
            }
            590..=594 if network => Action::Crash(node),
            595..=599 => {
                let odd = network && self.rng.random_bool(0.3);
                Action::Close {
                    node,
                    fate: self.fate(odd),
                }
            }
            600..=609 if !silent => self.silence(world, live),
            610..=613 if redis => Action::LoseKey,
            614..=615 if redis => Action::Snapshot,
            616 if redis => Action::Failover,
            617 if redis => Action::Restart,
            618 if redis => Action::ReplicaLink(self.rng.random_bool(0.5)),
            619 if redis => Action::ServerClockStep(self.rng.random_range(-7_200_000..=7_200_000)),
            // Ten times a failover's odds: about one split a run, where any is explored.
            620..=629 if self.split_until.is_none() => match self.profile.splits {
                Some(longest) => self.split(now, longest, live),
                None => Action::Admit { node, units },
            },
            _ => Action::Admit { node, units },
        }
    }

    /// A partition that heals in stages: every node is cut off, the others for less than half
    /// a lease, `node` for more (its renewals sometimes get through a brief reconnect).
    fn partition_healing_in_stages(
        &mut self,
        now: Duration,
        node: usize,
        live: &[usize],
    ) -> Action {
        let lease = self.lease();
        for &other in live {
            if other != node {
                self.cut_until[other] = Some(now + lease.mul_f64(self.rng.random_range(0.1..0.35)));
                self.queued.push(Action::Link {
                    node: other,
                    cut: Some(Cut::Both),
                });
            }
        }
        self.cut_until[node] = Some(now + lease.mul_f64(self.rng.random_range(0.6..1.0)));
        Action::Link {
            node,
            cut: Some(Cut::Both),
        }
    }

    /// A split brain of a tenth of `longest` to all of it (the world ends it then): each live
    /// node stays with the old primary at even odds, and with two or more alive at least one is
    /// on each side (a split that leaves one side empty is a failover).
    fn split(&mut self, now: Duration, longest: Duration, live: &[usize]) -> Action {
        let ms = millis_u64(longest.mul_f64(self.rng.random_range(0.1..=1.0)));
        self.split_until = Some(now + Duration::from_millis(ms));
        self.split_stay.clear();
        let mut stay: Vec<usize> = live
            .iter()
            .copied()
            .filter(|_| self.rng.random_bool(0.5))
            .collect();
        if live.len() >= 2 {
            if stay.is_empty() {
                stay.push(live[self.rng.random_range(0..live.len())]);
            } else if stay.len() == live.len() {
                stay.remove(self.rng.random_range(0..stay.len()));
            }
        }
        self.split_stay.clone_from(&stay);
        Action::Split {
            stay,
            ms: u32::try_from(ms).unwrap_or(u32::MAX),
        }
    }

    /// The split has ended (the world ends it on its own). The partition behind it often
    /// outlasts it: each node that stayed with the old primary is, at even odds, cut off from the
    /// new one for a fifth of a lease to a lease and a half (it keeps its grant to the deadline
    /// its last renewal on the old primary set); the first cut is the action.
    fn after_split(&mut self, world: &World) -> Option<Action> {
        self.split_until = None;
        let lease = self.lease();
        let now = world.now();
        for node in std::mem::take(&mut self.split_stay) {
            if world.nodes.get(node).is_some_and(|n| n.alive) && self.rng.random_bool(0.5) {
                self.cut_until[node] = Some(now + lease.mul_f64(self.rng.random_range(0.2..1.5)));
                self.queued.push(Action::Link {
                    node,
                    cut: Some(Cut::Both),
                });
            }
        }
        self.queued.pop()
    }

    fn join(&mut self) -> Action {
        Action::Join {
            config: self.rng.random_range(0..self.configs.len()),
            rate_ppm: self.rng.random_range(-10_000..=10_000),
        }
    }

    /// The authority goes silent for up to four leases, often right after every live node
    /// verified (empty ledgers, young evidence: each can spend its whole budget after the cut).
    fn silence(&mut self, world: &World, live: &[usize]) -> Action {
        let lease = self
            .configs
            .iter()
            .map(|c| c.lease)
            .max()
            .unwrap_or_default();
        let length = lease.mul_f64(self.rng.random_range(0.2..4.0));
        self.silent_until = Some(world.now() + length);
        if self.rng.random_bool(0.5) {
            // Popped from the end: the answers come after the sends, the cut after both.
            self.queued.push(Action::AuthorityDown);
            for &node in live {
                self.queued.push(Action::RefreshAnswer(node));
            }
            for &node in live {
                self.queued.push(Action::RefreshSend(node));
            }
            return self.queued.pop().expect("queued");
        }
        Action::AuthorityDown
    }
}
