//! What the `logger` option hears: which events make a line, at which level, with which message
//! and fields. Plain data; bindings/logger.rs hands each line to the JavaScript logger as
//! `logger[level](fields, message)`.
//!
//! Lines carry codes only (status, reason, outcome, age, duration): never the credential, the
//! URL, or what the authority answered.

use std::time::Duration;

use crate::closed_list::closed_list;
use crate::numbers::u64_as_f64;
use crate::rules::cadence::shortest_calm_default_window;
use crate::rules::fleet::FleetEvent;
use crate::rules::readiness_holds::{HoldName, Released};
use crate::rules::{
    BudgetSource, CadencePlan, JsNumber, JsType, Outcome, Readiness, Reason, RefreshCause, Status,
    Verdict,
};

closed_list! {
    /// The tasks a sentinel runs (the refresher's), named for logs.
    pub enum Task {
        Refresh => "refresh",
        Transitions => "transitions",
    }
}

closed_list! {
    /// A line's level; its string is the logger's method for it (pino-style: `logger.warn(...)`).
    pub enum Level {
        Info => "info",
        Warn => "warn",
        Error => "error",
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
    /// A readiness hold's name (`sentinel.hold(name)`): the service's own words, checked.
    Hold(HoldName),
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

/// A refresh that concluded `verdict` after `took`: a line unless it proved the credential
/// valid. `indeterminate` (no proof either way) warns, with its `cause` (and, for a value
/// `inspect` should not have answered, that value's type); a refusal is an error.
pub fn refreshed(verdict: Verdict, took: Duration) -> Option<Line> {
    let outcome = verdict.outcome();
    let level = match outcome {
        Outcome::Valid => return None,
        Outcome::Indeterminate => Level::Warn,
        Outcome::InvalidCredential | Outcome::CapabilityMissing => Level::Error,
    };
    let mut message = format!("spend-sentinel: refresh {}", outcome.as_str());
    let mut fields = vec![
        ("event", Field::Text("spend_sentinel.refresh")),
        ("outcome", Field::Text(outcome.as_str())),
    ];
    if let Some(cause) = verdict.cause() {
        fields.push(("cause", Field::Text(cause.as_str())));
        match verdict {
            Verdict::BadValue(kind) => {
                fields.push(("valueType", Field::Text(kind.as_str())));
                message += &format!(" ({}: {})", cause.as_str(), kind.as_str());
            }
            _ => message += &format!(" ({})", cause.as_str()),
        }
    }
    fields.push(("durationMs", Field::Milliseconds(took)));
    Some(Line {
        level,
        message,
        fields,
    })
}

/// The `process.emitWarning` text for a sentinel without a logger whose `inspect` answered a
/// value of type `kind` (shown once per sentinel). Names the type, never the value: a string
/// answered by mistake could be anything, a secret included.
pub fn inspect_value_warning(kind: JsType) -> String {
    let (what, hint) = match kind {
        JsType::Undefined => (
            "undefined",
            " Does it return (or resolve with) the outcome?",
        ),
        JsType::Null => ("null", ""),
        JsType::Boolean => ("a boolean", " Answer 'valid' rather than true."),
        JsType::Number => ("a number", ""),
        JsType::BigInt => ("a bigint", ""),
        JsType::String => (
            "a string",
            " The outcomes are exact, lower-case strings (the one answered is not shown).",
        ),
        JsType::Symbol => ("a symbol", ""),
        JsType::Object => (
            "an object",
            " Answer the outcome string itself, not an object holding it.",
        ),
        JsType::Function => ("a function", ""),
    };
    let outcomes: Vec<String> = Outcome::ALL
        .iter()
        .map(|o| format!("'{}'", o.as_str()))
        .collect();
    format!(
        "spend-sentinel: authority.inspect() answered {what}, not one of the outcomes {}: the \
         refresh proves nothing (indeterminate, cause {}).{hint} Shown once; a `logger` option \
         logs every refresh's cause.",
        outcomes.join(", "),
        RefreshCause::InspectBadValue.as_str()
    )
}

/// `sentinel.hold(name)` opened a hold: readiness is `not_ready` / `held` until it is released.
/// Info: the service asked for it (the transition line, when the status changes, warns).
pub fn hold_opened(name: HoldName, open_named: usize) -> Line {
    Line {
        level: Level::Info,
        message: format!("spend-sentinel: hold {name} opened; readiness is not_ready (held) until every hold is released"),
        fields: vec![
            ("event", Field::Text("spend_sentinel.hold")),
            ("name", Field::Hold(name)),
            ("openHolds", Field::Number(count(open_named))),
        ],
    }
}

/// A hold was released (once: releasing again makes no line), with how long it was open.
pub fn hold_released(released: &Released) -> Line {
    Line {
        level: Level::Info,
        message: format!("spend-sentinel: hold {} released", released.name),
        fields: vec![
            ("event", Field::Text("spend_sentinel.hold_released")),
            ("name", Field::Hold(released.name)),
            ("openHolds", Field::Number(count(released.still_open))),
            ("heldSeconds", Field::Seconds(released.open_for)),
        ],
    }
}

/// A count as a field value (far below 2^53: exact).
fn count(n: usize) -> f64 {
    u64_as_f64(u64::try_from(n).unwrap_or(u64::MAX))
}

/// At construction, with default refresh pauses: one `warn` line when they may ask the authority
/// more than once a second at the smallest window the node runs with (its floor's, in a fleet),
/// so a window too short for its rate is no silent load on the billing API. `None` otherwise.
pub fn busy_cadence(plan: &CadencePlan, budget: &BudgetSource) -> Option<Line> {
    let window = budget.smallest_stale_window();
    let cadence = plan.at(window);
    if !cadence.busier_than_calm() {
        return None;
    }
    let calls = cadence.calls_per_second(Duration::ZERO);
    let raise = match budget {
        BudgetSource::Static(_) => {
            "raise budget.unverifiedUnits or lower budget.maxUnitsPerSecond (node budget / r)"
        }
        BudgetSource::Fleet(_) => {
            "raise budget.unverifiedUnits or budget.fleet.reserve, or lower budget.fleet.maxNodes \
             or budget.maxUnitsPerSecond (the floor, b × reserve / maxNodes, over r)"
        }
    };
    let ms = |d: Duration| JsNumber((d.as_secs_f64() * 1000.0).round());
    Some(Line {
        level: Level::Warn,
        message: format!(
            "spend-sentinel: the default refresh cadence asks the authority up to {} times a \
             second (a pause of {}–{} ms after each refresh, for a {} s stale window); a window \
             of at least {} s keeps it to one call a second: {raise}, or set \
             refresh.minIntervalMs and refresh.maxIntervalMs",
            JsNumber((calls * 100.0).round() / 100.0),
            ms(cadence.min_interval),
            ms(cadence.max_interval),
            JsNumber(window.as_secs_f64()),
            JsNumber(shortest_calm_default_window().as_secs_f64()),
        ),
        fields: vec![
            ("event", Field::Text("spend_sentinel.cadence")),
            ("callsPerSecond", Field::Number(calls)),
            ("staleWindowSeconds", Field::Seconds(window)),
            ("minIntervalMs", Field::Milliseconds(cadence.min_interval)),
            ("maxIntervalMs", Field::Milliseconds(cadence.max_interval)),
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
                 {} maxNodes {} leaseSeconds {} maxSplitSeconds {}; this node: {} {} {} {}): \
                 this node uses the fleet's",
                fleet.reserve,
                fleet.max_nodes,
                fleet.lease.as_secs_f64(),
                fleet.max_split.as_secs_f64(),
                own.reserve,
                own.max_nodes,
                own.lease.as_secs_f64(),
                own.max_split.as_secs_f64()
            ),
            vec![
                ("reserve", Field::Number(fleet.reserve)),
                ("maxNodes", Field::Number(u64_as_f64(fleet.max_nodes))),
                ("leaseSeconds", Field::Number(fleet.lease.as_secs_f64())),
                (
                    "maxSplitSeconds",
                    Field::Number(fleet.max_split.as_secs_f64()),
                ),
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
        let methods = Level::ALL.map(Level::as_str);
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
            (Status::Degraded, Reason::BudgetExhausted),
            (Status::NotReady, Reason::Held),
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
        assert_eq!(refreshed(Verdict::Valid, Duration::from_millis(3)), None);
    }

    #[test]
    fn an_indeterminate_refresh_warns_with_its_cause_and_a_refusal_is_an_error() {
        use crate::rules::evidence::Denial;
        let took = Duration::from_millis(42);
        let line = refreshed(Verdict::Indeterminate(RefreshCause::Http5xx), took).unwrap();
        assert_eq!(line.level, Level::Warn);
        assert_eq!(
            line.message,
            "spend-sentinel: refresh indeterminate (http_5xx)"
        );
        assert_eq!(
            line.fields,
            [
                ("event", Field::Text("spend_sentinel.refresh")),
                ("outcome", Field::Text("indeterminate")),
                ("cause", Field::Text("http_5xx")),
                ("durationMs", Field::Milliseconds(took)),
            ]
        );
        for denial in [Denial::InvalidCredential, Denial::CapabilityMissing] {
            let verdict = Verdict::Denied(denial);
            let line = refreshed(verdict, took).unwrap();
            assert_eq!(line.level, Level::Error, "{denial:?}");
            assert_eq!(
                line.fields,
                [
                    ("event", Field::Text("spend_sentinel.refresh")),
                    ("outcome", Field::Text(verdict.outcome().as_str())),
                    ("durationMs", Field::Milliseconds(took)),
                ]
            );
        }
    }

    #[test]
    fn a_bad_inspect_value_logs_its_type() {
        let took = Duration::from_millis(1);
        let line = refreshed(Verdict::BadValue(JsType::Boolean), took).unwrap();
        assert_eq!(
            line.message,
            "spend-sentinel: refresh indeterminate (inspect_bad_value: boolean)"
        );
        assert_eq!(field(&line, "cause"), Field::Text("inspect_bad_value"));
        assert_eq!(field(&line, "valueType"), Field::Text("boolean"));
    }

    #[test]
    fn the_inspect_value_warning_names_the_type_and_the_outcomes() {
        let warning = inspect_value_warning(JsType::Object);
        assert!(
            warning.starts_with("spend-sentinel: authority.inspect() answered an object, not one of the outcomes 'valid', 'invalid_credential', 'capability_missing', 'indeterminate': "),
            "{warning}"
        );
        assert!(warning.contains("cause inspect_bad_value"), "{warning}");
        assert!(warning.contains("not an object holding it"), "{warning}");
        for kind in [
            JsType::Undefined,
            JsType::Null,
            JsType::Boolean,
            JsType::String,
        ] {
            let warning = inspect_value_warning(kind);
            assert!(
                warning.contains(&format!("answered {}", kind.as_str()))
                    || warning.contains(&format!("answered a {}", kind.as_str())),
                "{warning}"
            );
        }
    }

    #[test]
    fn holds_log_their_name_at_info_when_opened_and_released() {
        let name = HoldName::parse("model-backend").unwrap();
        let opened = hold_opened(name, 2);
        assert_eq!(opened.level, Level::Info);
        assert!(
            opened.message.contains("hold model-backend opened"),
            "{}",
            opened.message
        );
        assert_eq!(
            opened.fields,
            [
                ("event", Field::Text("spend_sentinel.hold")),
                ("name", Field::Hold(name)),
                ("openHolds", Field::Number(2.0)),
            ]
        );
        let released = hold_released(&Released {
            name,
            open_for: Duration::from_millis(1500),
            still_open: 1,
        });
        assert_eq!(released.level, Level::Info);
        assert_eq!(
            released.message,
            "spend-sentinel: hold model-backend released"
        );
        assert_eq!(
            field(&released, "heldSeconds"),
            Field::Seconds(Duration::from_millis(1500))
        );
        assert_eq!(field(&released, "openHolds"), Field::Number(1.0));
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
            max_split: Duration::from_secs(12),
        };
        let adopted = fleet_event(&FleetEvent::Adopted {
            fleet: settings(0.25, 4, 30),
            own: settings(0.5, 4, 60),
        });
        assert_eq!(adopted.level, Level::Warn);
        assert!(
            adopted
                .message
                .contains("reserve 0.25 maxNodes 4 leaseSeconds 30 maxSplitSeconds 12; this node: 0.5 4 60 12"),
            "{}",
            adopted.message
        );
        assert_eq!(field(&adopted, "leaseSeconds"), Field::Number(30.0));
    }

    #[test]
    fn default_pauses_that_ask_more_than_once_a_second_make_one_warning() {
        use crate::rules::budget::fixed::{compute_budget, seed_input, BudgetInput};
        use crate::rules::budget::lease::{example_shape, FleetBudget};
        let fixed = |b: f64| -> BudgetSource {
            let input = BudgetInput {
                fleet_ceiling_units: b,
                nodes: None,
                ..seed_input()
            };
            compute_budget(&input).unwrap().into()
        };
        // r = 20: 50 units is a 2.5 s window, pauses of 0.75–1.25 s, one call a second.
        assert_eq!(busy_cadence(&CadencePlan::Scaled, &fixed(50.0)), None);
        let line = busy_cadence(&CadencePlan::Scaled, &fixed(40.0)).unwrap(); // 2 s
        assert_eq!(line.level, Level::Warn);
        assert_eq!(field(&line, "event"), Field::Text("spend_sentinel.cadence"));
        assert_eq!(field(&line, "callsPerSecond"), Field::Number(1.25));
        assert_eq!(
            field(&line, "staleWindowSeconds"),
            Field::Seconds(Duration::from_secs(2))
        );
        assert!(
            line.message.contains(
                "up to 1.25 times a second (a pause of 600–1000 ms after each refresh, for a 2 s \
                 stale window); a window of at least 2.5 s keeps it to one call a second: raise \
                 budget.unverifiedUnits"
            ),
            "{}",
            line.message
        );
        // A fleet is judged on its floor's window: 12.5 units at r = 20, 0.625 s.
        let fleet = BudgetSource::Fleet(FleetBudget::new(example_shape()));
        let line = busy_cadence(&CadencePlan::Scaled.for_fleet(), &fleet).unwrap();
        assert_eq!(field(&line, "callsPerSecond"), Field::Number(4.0));
        assert!(
            line.message.contains("budget.fleet.reserve"),
            "{}",
            line.message
        );
    }
}
