//! The readiness table (README): readiness, evaluated at the moment it is read.

use std::time::Duration;

use super::evidence::{Denial, Evidence};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    Ready,
    Degraded,
    NotReady,
}

impl Status {
    pub const ALL: [Status; 3] = [Status::Ready, Status::Degraded, Status::NotReady];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ready => "ready",
            Status::Degraded => "degraded",
            Status::NotReady => "not_ready",
        }
    }

    /// 200 for `ready` and `degraded` (still serving), 503 for `not_ready`.
    pub fn http_status(self) -> u16 {
        match self {
            Status::Ready | Status::Degraded => 200,
            Status::NotReady => 503,
        }
    }

    /// This status's position in [`Status::ALL`].
    pub fn index(self) -> usize {
        match self {
            Status::Ready => 0,
            Status::Degraded => 1,
            Status::NotReady => 2,
        }
    }

    /// May the node take billable work in this status (README, Admission)?
    pub fn admits(self) -> bool {
        self != Status::NotReady
    }
}

/// Low-cardinality reason codes, one per rule of the readiness table (README).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    ShuttingDown,
    InvalidCredential,
    CapabilityMissing,
    NoEvidence,
    EvidenceTooOld,
    BudgetExhausted,
    RefreshIndeterminate,
    Verified,
    /// A fleet node with neither a floor nor a usable grant (reserve 0, no lease): checked right
    /// after `no_evidence`.
    NoFleetLease,
    /// Not a rule of the table: the refresh task stopped on a defect (a panic), so the evidence
    /// can only age. Checked right after shutting down; the node fails closed.
    InternalError,
    /// The service holds its own readiness (`sentinel.hold(name)`): checked after the denials,
    /// before `no_evidence`. Listed last so that the earlier reasons keep their numbers.
    Held,
}

impl Reason {
    /// Every reason, once, in declaration order: the one list that numbers them (the metrics'
    /// labels, the codes of the admission guard's native call); a test holds the typings'
    /// `ReadinessReason` (generated from bindings/types.rs) to the same list.
    pub const ALL: [Reason; 11] = [
        Reason::ShuttingDown,
        Reason::InvalidCredential,
        Reason::CapabilityMissing,
        Reason::NoEvidence,
        Reason::EvidenceTooOld,
        Reason::BudgetExhausted,
        Reason::RefreshIndeterminate,
        Reason::Verified,
        Reason::NoFleetLease,
        Reason::InternalError,
        Reason::Held,
    ];

    /// The one status each reason goes with: a reason never appears with another.
    pub fn status(self) -> Status {
        match self {
            Reason::Verified => Status::Ready,
            // A spent budget refuses requests, not the pod (README, Readiness).
            Reason::RefreshIndeterminate | Reason::BudgetExhausted => Status::Degraded,
            Reason::ShuttingDown
            | Reason::InvalidCredential
            | Reason::CapabilityMissing
            | Reason::NoEvidence
            | Reason::EvidenceTooOld
            | Reason::NoFleetLease
            | Reason::InternalError
            | Reason::Held => Status::NotReady,
        }
    }

    /// The reasons a refused admission can carry: every `not_ready` reason but `held` (a hold,
    /// like draining, leaves admission alone), and `budget_exhausted` (units that do not fit).
    pub fn is_refusal(self) -> bool {
        !matches!(
            self,
            Reason::Verified | Reason::RefreshIndeterminate | Reason::Held
        )
    }

    /// This reason's position in [`Reason::ALL`].
    pub fn index(self) -> usize {
        Reason::ALL.iter().position(|r| *r == self).unwrap_or(0)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Reason::ShuttingDown => "shutting_down",
            Reason::InvalidCredential => "invalid_credential",
            Reason::CapabilityMissing => "capability_missing",
            Reason::NoEvidence => "no_evidence",
            Reason::EvidenceTooOld => "evidence_too_old",
            Reason::BudgetExhausted => "budget_exhausted",
            Reason::RefreshIndeterminate => "refresh_indeterminate",
            Reason::Verified => "verified",
            Reason::NoFleetLease => "no_fleet_lease",
            Reason::InternalError => "internal_error",
            Reason::Held => "held",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Readiness {
    pub status: Status,
    pub reason: Reason,
    /// `None` while there is no evidence.
    pub evidence_age: Option<Duration>,
}

/// Everything readiness depends on, at one moment.
#[derive(Debug, Clone, Copy)]
pub struct ReadinessInputs<'a> {
    /// Draining or closed (rule 1). Admission passes `false` while draining.
    pub shutting_down: bool,
    /// The refresh task stopped on a defect: `not_ready`/`internal_error`, right after rule 1.
    pub failed: bool,
    /// The service holds readiness (rule 3b). Admission passes `false`: holds leave it alone.
    pub held: bool,
    pub evidence: &'a Evidence,
    /// The ledger has reached the node budget (rule 6).
    pub budget_spent: bool,
    /// The node budget is 0: a fleet node with no floor and no usable grant.
    pub no_budget: bool,
    pub stale_window: Duration,
    pub now: Duration,
}

/// The readiness table (README): the first rule that matches decides.
pub fn evaluate(inputs: ReadinessInputs<'_>) -> Readiness {
    let evidence_age = inputs.evidence.age(inputs.now);
    let reason = decide(&inputs, evidence_age);
    Readiness {
        status: reason.status(),
        reason,
        evidence_age,
    }
}

fn decide(inputs: &ReadinessInputs<'_>, age: Option<Duration>) -> Reason {
    if inputs.shutting_down {
        return Reason::ShuttingDown;
    }
    if inputs.failed {
        return Reason::InternalError;
    }
    match inputs.evidence.denial() {
        Some(Denial::InvalidCredential) => return Reason::InvalidCredential,
        Some(Denial::CapabilityMissing) => return Reason::CapabilityMissing,
        None => {}
    }
    if inputs.held {
        return Reason::Held;
    }
    match age {
        None => Reason::NoEvidence,
        Some(_) if inputs.no_budget => Reason::NoFleetLease,
        // At exactly age = w the node is not ready: at the maximum rate the budget is spent at w.
        Some(age) if age >= inputs.stale_window => Reason::EvidenceTooOld,
        // Degraded, not not_ready: a burst above r must not pull every pod at once; the evidence
        // going stale (above) is what withdraws a node whose authority is silent.
        Some(_) if inputs.budget_spent => Reason::BudgetExhausted,
        Some(_) if inputs.evidence.consecutive_indeterminate() > 0 => Reason::RefreshIndeterminate,
        Some(_) => Reason::Verified,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::evidence::Outcome;

    const W: Duration = Duration::from_secs(5);

    /// The typings' `ReadinessReason` is generated from bindings/types.rs, whose `From<Reason>`
    /// the compiler holds to every variant; this holds its strings and order to `Reason::ALL`.
    #[test]
    fn the_typings_name_every_reason_in_order() {
        let typings = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/binding.d.ts"))
            .expect("binding.d.ts is readable");
        let union = typings
            .lines()
            .find_map(|l| l.strip_prefix("export type ReadinessReason = "))
            .expect("binding.d.ts declares ReadinessReason");
        let named: Vec<&str> = union.split(" | ").map(|s| s.trim_matches('\'')).collect();
        let ours: Vec<&str> = Reason::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(named, ours);
    }

    fn at(seconds: f64) -> Duration {
        Duration::from_secs_f64(seconds)
    }

    fn read(evidence: &Evidence, now: Duration) -> Readiness {
        read_with(evidence, now, false, false)
    }

    fn read_with(
        evidence: &Evidence,
        now: Duration,
        shutting_down: bool,
        budget_spent: bool,
    ) -> Readiness {
        evaluate(inputs(evidence, now, shutting_down, budget_spent))
    }

    fn inputs(
        evidence: &Evidence,
        now: Duration,
        shutting_down: bool,
        budget_spent: bool,
    ) -> ReadinessInputs<'_> {
        ReadinessInputs {
            shutting_down,
            failed: false,
            held: false,
            evidence,
            budget_spent,
            no_budget: false,
            stale_window: W,
            now,
        }
    }

    fn read_held(evidence: &Evidence, now: Duration) -> Readiness {
        evaluate(ReadinessInputs {
            held: true,
            ..inputs(evidence, now, false, false)
        })
    }

    fn evidence_of(steps: &[(Outcome, f64)]) -> Evidence {
        let mut evidence = Evidence::default();
        for &(outcome, sent) in steps {
            evidence.record(outcome, at(sent));
        }
        evidence
    }

    #[test]
    fn rule1_shutting_down_beats_everything() {
        let evidence = evidence_of(&[(Outcome::InvalidCredential, 0.0)]);
        let readiness = read_with(&evidence, at(1.0), true, true);
        assert_eq!(
            (readiness.status, readiness.reason),
            (Status::NotReady, Reason::ShuttingDown)
        );
    }

    #[test]
    fn rule2_and_3_denials_beat_young_evidence() {
        let revoked = evidence_of(&[(Outcome::Valid, 0.0), (Outcome::InvalidCredential, 1.0)]);
        assert_eq!(read(&revoked, at(1.0)).reason, Reason::InvalidCredential);
        let downgraded = evidence_of(&[(Outcome::Valid, 0.0), (Outcome::CapabilityMissing, 1.0)]);
        let readiness = read(&downgraded, at(1.0));
        assert_eq!(
            (readiness.status, readiness.reason),
            (Status::NotReady, Reason::CapabilityMissing)
        );
        assert_eq!(
            readiness.evidence_age,
            Some(at(1.0)),
            "age is still reported"
        );
    }

    #[test]
    fn rule4_no_evidence_before_the_first_valid() {
        let readiness = read(&Evidence::default(), at(100.0));
        assert_eq!(
            readiness,
            Readiness {
                status: Status::NotReady,
                reason: Reason::NoEvidence,
                evidence_age: None
            }
        );
        let only_failures =
            evidence_of(&[(Outcome::Indeterminate, 0.0), (Outcome::Indeterminate, 1.0)]);
        assert_eq!(read(&only_failures, at(2.0)).reason, Reason::NoEvidence);
    }

    #[test]
    fn rule5_not_ready_at_exactly_the_window() {
        let evidence = evidence_of(&[(Outcome::Valid, 1.0)]);
        assert_eq!(read(&evidence, at(5.999)).status, Status::Ready);
        let at_window = read(&evidence, at(6.0));
        assert_eq!(
            (at_window.status, at_window.reason),
            (Status::NotReady, Reason::EvidenceTooOld)
        );
        assert_eq!(at_window.evidence_age, Some(W));
    }

    #[test]
    fn rule3b_a_hold_comes_after_the_denials_and_before_no_evidence() {
        let denied = evidence_of(&[(Outcome::InvalidCredential, 0.0)]);
        assert_eq!(
            read_held(&denied, at(1.0)).reason,
            Reason::InvalidCredential
        );
        let held = read_held(&Evidence::default(), at(1.0));
        assert_eq!(
            (held.status, held.reason, held.status.http_status()),
            (Status::NotReady, Reason::Held, 503)
        );
        let young = evidence_of(&[(Outcome::Valid, 0.0)]);
        let readiness = read_held(&young, at(1.0));
        assert_eq!(
            (readiness.reason, readiness.evidence_age),
            (Reason::Held, Some(at(1.0))),
            "held beats verified; the age is still reported"
        );
        let shutting_down = evaluate(ReadinessInputs {
            held: true,
            ..inputs(&young, at(1.0), true, false)
        });
        assert_eq!(shutting_down.reason, Reason::ShuttingDown);
    }

    #[test]
    fn rule6_a_spent_budget_is_degraded_not_not_ready_and_beats_indeterminate() {
        let evidence = evidence_of(&[(Outcome::Valid, 0.0), (Outcome::Indeterminate, 1.0)]);
        let readiness = read_with(&evidence, at(1.0), false, true);
        assert_eq!(
            (readiness.status, readiness.reason),
            (Status::Degraded, Reason::BudgetExhausted)
        );
        assert_eq!(readiness.status.http_status(), 200, "the pod stays routed");
        let stale = read_with(&evidence, at(5.0), false, true);
        assert_eq!(
            (stale.status, stale.reason),
            (Status::NotReady, Reason::EvidenceTooOld),
            "stale evidence still withdraws the node"
        );
    }

    #[test]
    fn rule7_timeout_after_a_success_is_degraded_with_the_age_of_the_success() {
        // Success sent at 0; a refresh sent at 2 s times out; read at 3 s.
        let evidence = evidence_of(&[(Outcome::Valid, 0.0), (Outcome::Indeterminate, 2.0)]);
        let readiness = read(&evidence, at(3.0));
        assert_eq!(readiness.status, Status::Degraded);
        assert_eq!(readiness.reason, Reason::RefreshIndeterminate);
        assert_eq!(readiness.evidence_age, Some(at(3.0)));
        assert_eq!(readiness.status.http_status(), 200);
    }

    #[test]
    fn rule8_ready_when_verified_and_young() {
        let evidence = evidence_of(&[(Outcome::Valid, 0.0)]);
        let readiness = read(&evidence, at(0.5));
        assert_eq!(
            (readiness.status, readiness.reason),
            (Status::Ready, Reason::Verified)
        );
        assert_eq!(readiness.status.http_status(), 200);
    }

    #[test]
    fn indeterminate_after_a_denial_keeps_the_denial() {
        let evidence = evidence_of(&[
            (Outcome::Valid, 0.0),
            (Outcome::InvalidCredential, 1.0),
            (Outcome::Indeterminate, 2.0),
        ]);
        assert_eq!(read(&evidence, at(2.5)).reason, Reason::InvalidCredential);
    }

    #[test]
    fn valid_after_a_denial_clears_it() {
        let evidence = evidence_of(&[(Outcome::CapabilityMissing, 0.0), (Outcome::Valid, 1.0)]);
        assert_eq!(read(&evidence, at(1.5)).status, Status::Ready);
    }

    #[test]
    fn restart_with_an_empty_cache_has_no_evidence() {
        // A restarted process starts from `Evidence::default()`: nothing survives it.
        let restarted = Evidence::default();
        assert_eq!(read(&restarted, at(0.0)).reason, Reason::NoEvidence);
    }

    #[test]
    fn every_reason_is_listed_once_and_indexed_by_its_place() {
        for (i, reason) in Reason::ALL.iter().enumerate() {
            assert_eq!(reason.index(), i, "{reason:?}");
            assert_eq!(
                *reason as usize, i,
                "{reason:?}: ALL is in declaration order"
            );
        }
        let names: std::collections::HashSet<_> = Reason::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(names.len(), Reason::ALL.len());
    }

    #[test]
    fn each_reason_goes_with_one_status_and_held_is_no_refusal() {
        let with = |status| {
            Reason::ALL
                .into_iter()
                .filter(|r| r.status() == status)
                .map(Reason::as_str)
                .collect::<Vec<_>>()
        };
        assert_eq!(with(Status::Ready), ["verified"]);
        assert_eq!(
            with(Status::Degraded),
            ["budget_exhausted", "refresh_indeterminate"]
        );
        assert_eq!(with(Status::NotReady).len(), 8);
        let refusals: Vec<_> = Reason::ALL
            .into_iter()
            .filter(|r| !r.is_refusal())
            .map(Reason::as_str)
            .collect();
        assert_eq!(refusals, ["refresh_indeterminate", "verified", "held"]);
    }

    #[test]
    fn status_codes_and_strings() {
        assert_eq!(Status::NotReady.http_status(), 503);
        assert_eq!(Status::NotReady.as_str(), "not_ready");
        assert_eq!(
            Reason::RefreshIndeterminate.as_str(),
            "refresh_indeterminate"
        );
    }
}
