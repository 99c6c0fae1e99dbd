//! What the `logger` option hears: which events make a line, at which level, with which message
//! and fields. Plain data; bindings/logger.rs hands each line to the JavaScript logger as
//! `logger[level](fields, message)`.
//!
//! Lines carry codes only (status, reason, outcome, age, duration): never the credential, the
//! URL, or what the authority answered.

use std::time::Duration;

use crate::numbers::u64_as_f64;
use crate::rules::fleet::FleetEvent;
use crate::rules::{Outcome, Readiness, Reason, Status};

/// The tasks a sentinel runs (the refresher's), named for logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    Refresh,
    Transitions,
}

impl Task {
    pub fn as_str(self) -> &'static str {
        match self {
            Task::Refresh => "refresh",
            Task::Transitions => "transitions",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warn,
    Error,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::Info, Level::Warn, Level::Error];

    /// The logger's method for this level (pino-style).
    pub fn method(self) -> &'static str {
        match self {
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        }
    }
}

/// A field's value; durations stay durations so the binding shows them as it shows readiness.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Field {
    Text(&'static str),
    Seconds(Duration),
    Milliseconds(Duration),
    Number(f64),
    Null,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub level: Level,
    pub message: String,
    /// In the order they are set on the fields object.
    pub fields: Vec<(&'static str, Field)>,
}

/// A status change. Back to `ready` is good news; a credential the authority refused (or a tier
/// without the meter) needs a person; anything else may pass by itself.
pub fn transition(from: Status, now: &Readiness) -> Line {
    let level = match (now.status, now.reason) {
        (Status::Ready, _) => Level::Info,
        (_, Reason::InvalidCredential | Reason::CapabilityMissing) => Level::Error,
        _ => Level::Warn,
    };
    Line {
        level,
        message: format!(
            "spend-sentinel: {} -> {} ({})",
            from.as_str(),
            now.status.as_str(),
            now.reason.as_str()
        ),
        fields: vec![
            ("event", Field::Text("spend_sentinel.transition")),
            ("from", Field::Text(from.as_str())),
            ("to", Field::Text(now.status.as_str())),
            ("reason", Field::Text(now.reason.as_str())),
            (
                "evidenceAgeSeconds",
                now.evidence_age.map_or(Field::Null, Field::Seconds),
            ),
        ],
    }
}

/// A refresh that answered `outcome` after `took`: a line unless it proved the credential valid.
/// `indeterminate` (no proof either way) warns; a refusal is an error.
pub fn refreshed(outcome: Outcome, took: Duration) -> Option<Line> {
    let level = match outcome {
        Outcome::Valid => return None,
        Outcome::Indeterminate => Level::Warn,
        Outcome::InvalidCredential | Outcome::CapabilityMissing => Level::Error,
    };
    Some(Line {
        level,
        message: format!("spend-sentinel: refresh {}", outcome.as_str()),
        fields: vec![
            ("event", Field::Text("spend_sentinel.refresh")),
            ("outcome", Field::Text(outcome.as_str())),
            ("durationMs", Field::Milliseconds(took)),
        ],
    })
}

/// A task of the sentinel panicked (a defect); the sentinel now fails closed.
pub fn task_failed(task: Task) -> Line {
    Line {
        level: Level::Error,
        message: format!(
            "spend-sentinel: the {} task stopped on an internal error; failing closed",
            task.as_str()
        ),
        fields: vec![
            ("event", Field::Text("spend_sentinel.internal_error")),
            ("task", Field::Text(task.as_str())),
        ],
    }
}

/// A change in the fleet. A Redis that cannot be used, a node beyond `maxNodes` and settings that
/// differ from the fleet's need a person (error); a lost state passes by itself (warn); Redis
/// answering again is good news (info). One line per change, never one per retry.
pub fn fleet_event(event: &FleetEvent) -> Line {
    let (level, message, mut fields) = match event {
        FleetEvent::RedisError(Some(kind)) => (
            Level::Error,
            format!(
                "spend-sentinel: fleet Redis calls fail ({}); running on the floor once the \
                 grant's deadline passes",
                kind.as_str()
            ),
            vec![("redisError", Field::Text(kind.as_str()))],
        ),
        FleetEvent::RedisError(None) => (
            Level::Info,
            "spend-sentinel: fleet Redis answers again".to_owned(),
            vec![("redisError", Field::Null)],
        ),
        FleetEvent::StateLost => (
            Level::Warn,
            "spend-sentinel: Redis lost the fleet's state, failed over or restarted; no grant \
             grows until leaseSeconds × 1.03 + 2 s have passed and a valid refresh settled the \
             fleet"
                .to_owned(),
            Vec::new(),
        ),
        FleetEvent::OverMaxNodes { live, max_nodes } => (
            Level::Error,
            format!(
                "spend-sentinel: {live} live fleet nodes and every static floor of maxNodes \
                 {max_nodes} taken: this node has no floor, its whole budget is leased from the \
                 pool and lapses with the lease; raise budget.fleet.maxNodes"
            ),
            vec![
                ("liveNodes", Field::Number(u64_as_f64(*live))),
                ("maxNodes", Field::Number(u64_as_f64(*max_nodes))),
            ],
        ),
        FleetEvent::Adopted { fleet, own } => (
            Level::Warn,
            format!(
                "spend-sentinel: budget.fleet settings differ from the fleet's in Redis (reserve \
                 {} maxNodes {} leaseSeconds {}; this node: {} {} {}): this node uses the \
                 fleet's",
                fleet.reserve,
                fleet.max_nodes,
                fleet.lease.as_secs_f64(),
                own.reserve,
                own.max_nodes,
                own.lease.as_secs_f64()
            ),
            vec![
                ("reserve", Field::Number(fleet.reserve)),
                ("maxNodes", Field::Number(u64_as_f64(fleet.max_nodes))),
                ("leaseSeconds", Field::Number(fleet.lease.as_secs_f64())),
            ],
        ),
    };
    fields.insert(0, ("event", Field::Text("spend_sentinel.fleet")));
    Line {
        level,
        message,
        fields,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readiness(status: Status, reason: Reason, age_ms: Option<u64>) -> Readiness {
        Readiness {
            status,
            reason,
            evidence_age: age_ms.map(Duration::from_millis),
        }
    }

    fn field(line: &Line, name: &str) -> Field {
        let found = line.fields.iter().find(|(key, _)| *key == name);
        found.expect("the field is set").1
    }

    #[test]
    fn the_level_methods_are_the_pino_names() {
        let methods = Level::ALL.map(Level::method);
        assert_eq!(methods, ["info", "warn", "error"]);
    }

    #[test]
    fn becoming_ready_logs_at_info() {
        let now = readiness(Status::Ready, Reason::Verified, Some(1500));
        let line = transition(Status::NotReady, &now);
        assert_eq!(line.level, Level::Info);
        assert_eq!(
            line.message,
            "spend-sentinel: not_ready -> ready (verified)"
        );
    }

    #[test]
    fn a_refused_credential_or_capability_logs_at_error() {
        for reason in [Reason::InvalidCredential, Reason::CapabilityMissing] {
            let line = transition(Status::Ready, &readiness(Status::NotReady, reason, None));
            assert_eq!(line.level, Level::Error, "{reason:?}");
        }
    }

    #[test]
    fn other_changes_log_at_warn() {
        let cases = [
            (Status::Degraded, Reason::RefreshIndeterminate),
            (Status::NotReady, Reason::EvidenceTooOld),
            (Status::NotReady, Reason::BudgetExhausted),
            (Status::NotReady, Reason::InternalError),
            (Status::NotReady, Reason::ShuttingDown),
        ];
        for (status, reason) in cases {
            let line = transition(Status::Ready, &readiness(status, reason, Some(10)));
            assert_eq!(line.level, Level::Warn, "{status:?} {reason:?}");
        }
    }

    #[test]
    fn a_transition_carries_its_codes_and_the_evidence_age() {
        let now = readiness(Status::Degraded, Reason::RefreshIndeterminate, Some(2500));
        let line = transition(Status::Ready, &now);
        assert_eq!(
            line.fields,
            [
                ("event", Field::Text("spend_sentinel.transition")),
                ("from", Field::Text("ready")),
                ("to", Field::Text("degraded")),
                ("reason", Field::Text("refresh_indeterminate")),
                (
                    "evidenceAgeSeconds",
                    Field::Seconds(Duration::from_millis(2500))
                ),
            ]
        );
        let none = readiness(Status::NotReady, Reason::NoEvidence, None);
        let line = transition(Status::NotReady, &none);
        assert_eq!(field(&line, "evidenceAgeSeconds"), Field::Null);
    }

    #[test]
    fn a_valid_refresh_makes_no_line() {
        assert_eq!(refreshed(Outcome::Valid, Duration::from_millis(3)), None);
    }

    #[test]
    fn an_indeterminate_refresh_warns_and_a_refusal_is_an_error() {
        let took = Duration::from_millis(42);
        let line = refreshed(Outcome::Indeterminate, took).unwrap();
        assert_eq!(line.level, Level::Warn);
        assert_eq!(line.message, "spend-sentinel: refresh indeterminate");
        assert_eq!(field(&line, "durationMs"), Field::Milliseconds(took));
        for outcome in [Outcome::InvalidCredential, Outcome::CapabilityMissing] {
            let line = refreshed(outcome, took).unwrap();
            assert_eq!(line.level, Level::Error, "{outcome:?}");
            assert_eq!(field(&line, "outcome"), Field::Text(outcome.as_str()));
            assert_eq!(field(&line, "event"), Field::Text("spend_sentinel.refresh"));
        }
    }

    #[test]
    fn a_failed_task_is_an_error_naming_the_task() {
        let line = task_failed(Task::Transitions);
        assert_eq!(line.level, Level::Error);
        assert_eq!(
            line.message,
            "spend-sentinel: the transitions task stopped on an internal error; failing closed"
        );
        assert_eq!(
            line.fields,
            [
                ("event", Field::Text("spend_sentinel.internal_error")),
                ("task", Field::Text("transitions")),
            ]
        );
    }

    #[test]
    fn fleet_changes_make_one_line_each_at_the_level_they_need() {
        use crate::rules::fleet::ErrorKind;
        let failing = fleet_event(&FleetEvent::RedisError(Some(ErrorKind::NoPerm)));
        assert_eq!(failing.level, Level::Error);
        assert!(failing.message.contains("(noperm)"), "{}", failing.message);
        assert_eq!(field(&failing, "redisError"), Field::Text("noperm"));
        assert_eq!(
            field(&failing, "event"),
            Field::Text("spend_sentinel.fleet")
        );
        let back = fleet_event(&FleetEvent::RedisError(None));
        assert_eq!(
            (back.level, field(&back, "redisError")),
            (Level::Info, Field::Null)
        );
        assert_eq!(fleet_event(&FleetEvent::StateLost).level, Level::Warn);
        let over = fleet_event(&FleetEvent::OverMaxNodes {
            live: 6,
            max_nodes: 4,
        });
        assert_eq!(over.level, Level::Error);
        assert_eq!(field(&over, "liveNodes"), Field::Number(6.0));
        assert!(over.message.contains("maxNodes 4"), "{}", over.message);
        let settings = |reserve, max_nodes, lease| crate::rules::fleet::Settings {
            reserve,
            max_nodes,
            lease: Duration::from_secs(lease),
        };
        let adopted = fleet_event(&FleetEvent::Adopted {
            fleet: settings(0.25, 4, 30),
            own: settings(0.5, 4, 60),
        });
        assert_eq!(adopted.level, Level::Warn);
        assert!(
            adopted
                .message
                .contains("reserve 0.25 maxNodes 4 leaseSeconds 30; this node: 0.5 4 60"),
            "{}",
            adopted.message
        );
        assert_eq!(field(&adopted, "leaseSeconds"), Field::Number(30.0));
    }
}
