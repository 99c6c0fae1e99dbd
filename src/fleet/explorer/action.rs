//! The explorer's schedules as data: every choice a run makes is an [`Action`], so a failing run
//! replays exactly and can be shrunk by deleting actions. An action that no longer applies (its
//! node crashed, or was never born in a shrunk trace) does nothing.

use std::fmt;

/// Which way a node's link to Redis is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// Requests do not reach Redis.
    Requests,
    /// Requests land, answers are lost.
    Answers,
    Both,
}

/// What happens to one renewal or release on the network: after how many ms it lands in Redis
/// and after how many more its answer is back (`None`: never).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fate {
    pub(super) land_ms: Option<u32>,
    pub(super) answer_ms: Option<u32>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Action {
    /// Real time passes; calls land and answers arrive on the way, in time order.
    Wait(u32),
    /// A node starts with configuration `config` (an index into the run's list) and a
    /// monotonic clock running at 1 + `rate_ppm` / 10⁶ of real time.
    Join {
        config: usize,
        rate_ppm: i32,
    },
    /// kill -9: no release; its lease ends in Redis.
    Crash(usize),
    /// `close()`: admission stops, the release goes out.
    Close {
        node: usize,
        fate: Fate,
    },
    Admit {
        node: usize,
        units: u32,
    },
    /// Admits `units` at a time until refused: traffic at full rate, the case the ceiling is for.
    Spend {
        node: usize,
        units: u32,
    },
    /// A refresh request goes out (its outcome is the authority's at this moment).
    RefreshSend(usize),
    RefreshAnswer(usize),
    /// The lease task's step: give back a share above the fair one, then renew.
    Renew {
        node: usize,
        fate: Fate,
        jitter: u16,
    },
    Link {
        node: usize,
        cut: Option<Cut>,
    },
    AuthorityDown,
    AuthorityUp,
    /// The fleet's key vanishes (`DEL`, `FLUSHDB`, eviction).
    LoseKey,
    /// A replica that stops (or resumes) replicating: a failover to it later misses writes.
    ReplicaLink(bool),
    /// A copy of the key as it is now, for a restart from an old snapshot later.
    Snapshot,
    /// The primary dies; the replica takes over with what it has, under another server id.
    Failover,
    /// A split brain of `ms` real time: the replica is promoted with what it has, under another
    /// server id, while the old primary goes on taking the writes of the nodes in `stay` (the
    /// partition or a stale Sentinel view keeps them its clients); every other node, and every
    /// node that joins, reaches the new one. A call lands on the primary its node reaches when
    /// it lands. After `ms` the old primary is fenced and demoted to a replica of the new one
    /// (what it took since the split is dropped) and every node reaches the new one. The end is
    /// part of the action, so a shrunk trace never holds a longer split than was generated.
    /// Nothing during a split.
    Split {
        stay: Vec<usize>,
        ms: u32,
    },
    /// Redis restarts from the last snapshot (or empty, without one).
    Restart,
    /// Redis's wall clock steps (NTP, a VM resume): only key expiry reads it.
    ServerClockStep(i64),
}

impl Fate {
    /// Lands after 1 ms, answered 1 ms later: a healthy network.
    pub(crate) const PROMPT: Fate = Fate {
        land_ms: Some(1),
        answer_ms: Some(1),
    };
}

impl fmt::Display for Fate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.land_ms, self.answer_ms) {
            (None, _) => write!(f, "lost on the way"),
            (Some(land), None) => write!(f, "lands after {land} ms, answer lost"),
            (Some(land), Some(back)) => write!(f, "lands after {land} ms, answer {back} ms later"),
        }
    }
}
