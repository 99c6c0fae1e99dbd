//! One sentinel's whole state: evidence, ledger and lifecycle, with the operations the shell
//! performs on it. Every method takes `now`; none reads a clock.

use std::time::Duration;

use super::budget::lease::{FleetBudget, Lease};
use super::budget::BudgetSource;
use super::evidence::{Evidence, Outcome};
use super::fleet::Local;
use super::ledger::{new_usage, settlement, Ledger, Settlement};
use super::readiness::{evaluate, Readiness, ReadinessInputs, Reason, Status};
use super::readiness_holds::{HoldId, HoldName, ReadinessHolds, Released};
use super::refresh_on_demand::half_spent;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifecycle {
    Running,
    /// Readiness says `shutting_down`; refreshes and admission go on for in-flight work.
    Draining,
    /// No refresh starts, nothing is admitted.
    Closed,
    /// The refresh task stopped on a defect: nothing is admitted, readiness says
    /// `internal_error` (after `shutting_down`) until the sentinel is closed.
    Failed,
}

/// What an admission answers: the status the units were admitted on, whether they spent the
/// node budget (a status change the transition watcher must hear of), and whether they took the
/// ledger to half the node budget (a refresh on demand the refresh loop must hear of).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admitted {
    pub status: Status,
    pub spent_budget: bool,
    pub reached_half: bool,
}

/// What a settle or a charge did, whether it changed whether the node budget is spent (a
/// status change the transition watcher must hear of), and whether it took the ledger to half
/// the node budget (as [`Admitted`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Recorded {
    pub settlement: Settlement,
    pub spent_changed: bool,
    pub reached_half: bool,
}

/// Whose view of the readiness table: a probe's sees every rule; admission's leaves out draining
/// and the service's holds (both stop the routing of new traffic, not work that arrives).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum View {
    Probe,
    Admission,
}

/// What a refused admission answers: the reason, and the stale window of that moment (read with
/// the node budget the decision used, for the refusal's default `Retry-After`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub reason: Reason,
    pub stale_window: Duration,
}

/// Handed out when a refresh request is sent, handed back with its outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RefreshTicket {
    sent_at: Duration,
    ledger_mark: f64,
}

#[derive(Debug, Clone)]
pub struct SentinelState {
    budget: BudgetSource,
    evidence: Evidence,
    ledger: Ledger,
    lifecycle: Lifecycle,
    /// Whether a refresh has finished, with any outcome (the `/startup` latch).
    refreshed: bool,
    /// The service's own holds on readiness (`sentinel.hold(name)`).
    holds: ReadinessHolds,
}

impl SentinelState {
    /// A fresh state has no evidence: a restart always begins `not_ready`/`no_evidence`.
    pub fn new(budget: impl Into<BudgetSource>) -> Self {
        SentinelState {
            budget: budget.into(),
            evidence: Evidence::default(),
            ledger: Ledger::default(),
            lifecycle: Lifecycle::Running,
            refreshed: false,
            holds: ReadinessHolds::default(),
        }
    }

    /// Readiness (README, the readiness table), as of `now`.
    pub fn readiness(&self, now: Duration) -> Readiness {
        self.evaluate_with(now, View::Probe, self.budget.at(now))
    }

    /// Readiness for the node budget and window of this moment, read once by the caller.
    fn evaluate_with(
        &self,
        now: Duration,
        view: View,
        (node_budget, stale_window): (f64, Duration),
    ) -> Readiness {
        let probe = view == View::Probe;
        evaluate(ReadinessInputs {
            shutting_down: probe
                && matches!(self.lifecycle, Lifecycle::Draining | Lifecycle::Closed),
            failed: self.lifecycle == Lifecycle::Failed,
            held: probe && self.holds.any_open(),
            evidence: &self.evidence,
            budget_spent: self.ledger.is_spent(node_budget),
            no_budget: node_budget <= 0.0,
            stale_window,
            now,
        })
    }

    /// The tests' shorthand for [`SentinelState::try_admit`] (the admission rules, README): whether
    /// it admitted `units`.
    #[cfg(test)]
    pub fn admit(&mut self, units: f64, now: Duration) -> bool {
        self.try_admit(units, now).is_ok()
    }

    /// Admits `units` and answers the status they were admitted on (`ready` or `degraded`), or
    /// refuses with the reason (see [`SentinelState::refusal_reason`]), changing nothing.
    pub fn try_admit(&mut self, units: f64, now: Duration) -> Result<Admitted, Refusal> {
        self.admit_into(units, now, Ledger::add)
    }

    /// A reservation's admission (`reserve(units)`, `extend(units)`): the same rule and
    /// refusals as [`SentinelState::try_admit`], but the units are held until the reservation
    /// settles, whatever evidence arrives meanwhile.
    pub fn try_hold(&mut self, units: f64, now: Duration) -> Result<Admitted, Refusal> {
        self.admit_into(units, now, Ledger::hold)
    }

    fn admit_into(
        &mut self,
        units: f64,
        now: Duration,
        record: fn(&mut Ledger, f64),
    ) -> Result<Admitted, Refusal> {
        let (status, node_budget) = self.admission(units, now)?;
        let before = self.ledger.clone();
        record(&mut self.ledger, units);
        Ok(Admitted {
            status,
            spent_budget: self.ledger.is_spent(node_budget),
            reached_half: self.reached_half(&before, node_budget),
        })
    }

    /// Whether the ledger, `before` until a moment ago, has just reached half of `node_budget`
    /// (by the refresh-on-demand rule, [`half_spent`]).
    fn reached_half(&self, before: &Ledger, node_budget: f64) -> bool {
        let half = |ledger: &Ledger| half_spent(ledger.recorded(), ledger.held(), node_budget);
        !half(before) && half(&self.ledger)
    }

    /// The ledger's recorded units (what a valid answer can clear; see `Ledger`).
    pub fn recorded_units(&self) -> f64 {
        self.ledger.recorded()
    }

    /// A reservation holding `held` units, having recorded `recorded` so far, ends with `actual`
    /// units used in all: the unused part of the hold leaves the ledger now, the new usage
    /// (`actual − recorded`, overage included) is recorded now. Never refuses, closed or not:
    /// the work is done and must be counted.
    pub fn settle(&mut self, held: f64, recorded: f64, actual: f64, now: Duration) -> Recorded {
        self.record_with(now, |ledger| {
            (ledger.settle(held, new_usage(recorded, actual)), ())
        })
        .0
    }

    /// A reservation holding `held` units reports `units` of work already produced: they leave
    /// the hold and are recorded now (beyond the hold, as overage). Never refuses, closed or
    /// not. Answers what it did and the units the reservation still holds.
    pub fn record(&mut self, held: f64, units: f64, now: Duration) -> (Recorded, f64) {
        self.record_with(now, |ledger| {
            let (held_after, settlement) = ledger.record(held, units);
            (settlement, held_after)
        })
    }

    /// Usage spent without an admission (`charge(units)`): recorded now, all of it overage.
    /// Never refuses, closed or not.
    pub fn charge(&mut self, units: f64, now: Duration) -> Recorded {
        self.record_with(now, |ledger| {
            ledger.add(units);
            (settlement(0.0, units), ())
        })
        .0
    }

    /// Records usage with `record` (which answers its settlement and anything else its caller
    /// needs), and says what that changed.
    fn record_with<T>(
        &mut self,
        now: Duration,
        record: impl FnOnce(&mut Ledger) -> (Settlement, T),
    ) -> (Recorded, T) {
        let node_budget = self.budget.node_budget_at(now);
        let was_spent = self.ledger.is_spent(node_budget);
        let before = self.ledger.clone();
        let (settlement, out) = record(&mut self.ledger);
        let recorded = Recorded {
            settlement,
            spent_changed: was_spent != self.ledger.is_spent(node_budget),
            reached_half: self.reached_half(&before, node_budget),
        };
        (recorded, out)
    }

    /// Why `admit(units)` would refuse at `now`, or `None` when it would admit. Admission
    /// refuses when the sentinel is closed, when readiness without the draining rule does not
    /// admit (its reason), or when the units do not fit the node budget (`budget_exhausted`,
    /// even while readiness still says `verified`).
    pub fn refusal_reason(&self, units: f64, now: Duration) -> Option<Reason> {
        self.admission(units, now)
            .err()
            .map(|refusal| refusal.reason)
    }

    /// The status `units` would be admitted on, with the node budget it was decided on; the node
    /// budget and its window are read once, here, for the whole decision.
    fn admission(&self, units: f64, now: Duration) -> Result<(Status, f64), Refusal> {
        let budget = self.budget.at(now);
        let refuse = |reason| {
            Err(Refusal {
                reason,
                stale_window: budget.1,
            })
        };
        if self.lifecycle == Lifecycle::Closed {
            return refuse(Reason::ShuttingDown);
        }
        let readiness = self.evaluate_with(now, View::Admission, budget);
        if !readiness.status.admits() {
            return refuse(readiness.reason);
        }
        if !self.ledger.fits(units, budget.0) {
            return refuse(Reason::BudgetExhausted);
        }
        Ok((readiness.status, budget.0))
    }

    /// Call just before the refresh request goes out; `None` once closed (no refresh may start).
    pub fn refresh_sent(&self, now: Duration) -> Option<RefreshTicket> {
        (self.lifecycle != Lifecycle::Closed).then(|| RefreshTicket {
            sent_at: now,
            ledger_mark: self.ledger.mark(),
        })
    }

    /// The evidence rules (README): applies a refresh's outcome. A `valid` answer verifies the units admitted
    /// before its request was sent; those admitted while it was in flight stay unverified.
    pub fn refresh_answered(&mut self, ticket: RefreshTicket, outcome: Outcome) {
        if self.lifecycle == Lifecycle::Closed {
            return;
        }
        self.evidence.record(outcome, ticket.sent_at);
        self.refreshed = true;
        if outcome == Outcome::Valid {
            self.ledger.verified_up_to(ticket.ledger_mark);
        }
    }

    /// `true` for good once a refresh has finished, whatever its outcome (an `indeterminate`
    /// timeout included): the sentinel has started, even when the authority is down.
    pub fn has_refreshed(&self) -> bool {
        self.refreshed
    }

    /// The next moment at which readiness may change with no event but time passing (the
    /// evidence reaching the stale window, or a lease deadline shrinking the budget), if that
    /// moment is after `now`.
    pub fn next_expiry_after(&self, now: Duration) -> Option<Duration> {
        let evidence_expiry = self
            .evidence
            .verified_at()
            .map(|at| at + self.budget.stale_window_at(now))
            .filter(|expiry| *expiry > now);
        let budget_change = self.budget.next_change_after(now);
        match (evidence_expiry, budget_change) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// A new lease from the fleet (or none): the node budget is floor + its grant from now on.
    pub fn set_lease(&mut self, lease: Option<Lease>) {
        self.budget.set_lease(lease);
    }

    /// Keeps U (docs/fleet-protocol.md, Invariants): only what a charge covers leaves the lease.
    /// A lease of this node ended in Redis and was charged whole, grant and static floor: the
    /// units the ledger holds, up to that lease's grant + this node's floor (never more than
    /// Redis charged), need no reservation any more. Call before the answer's floor and lease
    /// are set.
    pub fn cover_ended_lease(&mut self) {
        if let Some(fleet) = self.budget.fleet() {
            let grant = fleet.lease().map_or(0.0, |lease| lease.grant_units);
            self.ledger.cover(fleet.floor_units() + grant);
        }
    }

    /// The fleet's answer set this node's static floor.
    pub fn set_fleet_floor(&mut self, floor_units: f64) {
        self.budget.set_floor(floor_units);
    }

    /// `sentinel.hold(name)`: readiness is `not_ready` / `held` until every hold is released;
    /// admission is left alone.
    pub fn hold_readiness(&mut self, name: HoldName, now: Duration) -> HoldId {
        self.holds.open(name, now)
    }

    /// Ends the hold `id`; `None` when it had already ended (releasing twice is a no-op).
    pub fn release_readiness_hold(&mut self, id: HoldId, now: Duration) -> Option<Released> {
        self.holds.release(id, now)
    }

    pub fn readiness_holds(&self) -> &ReadinessHolds {
        &self.holds
    }

    pub fn drain(&mut self) {
        if self.lifecycle == Lifecycle::Running {
            self.lifecycle = Lifecycle::Draining;
        }
    }

    pub fn close(&mut self) {
        self.lifecycle = Lifecycle::Closed;
    }

    /// The refresh task stopped on a defect: fail closed (no admission, `internal_error`).
    /// A closed sentinel stays closed.
    pub fn fail(&mut self) {
        if self.lifecycle != Lifecycle::Closed {
            self.lifecycle = Lifecycle::Failed;
        }
    }

    pub fn lifecycle(&self) -> Lifecycle {
        self.lifecycle
    }

    pub fn budget(&self) -> &BudgetSource {
        &self.budget
    }

    /// The node budget now (static, or a fleet's floor + usable grant).
    pub fn node_budget_units(&self, now: Duration) -> f64 {
        self.budget.node_budget_at(now)
    }

    /// w now.
    pub fn stale_window(&self, now: Duration) -> Duration {
        self.budget.stale_window_at(now)
    }

    pub fn exposure_units(&self) -> f64 {
        self.ledger.exposure()
    }

    /// The part of the exposure that open reservations hold.
    pub fn reserved_units(&self) -> f64 {
        self.ledger.held()
    }

    /// What a fleet node decides with: its lease, the grant units its ledger used (exposure
    /// beyond the floor), and the send time of its latest valid refresh. Empty without a fleet.
    pub fn fleet_local(&self) -> Local {
        let fleet = self.budget.fleet();
        let floor = fleet.map_or(0.0, FleetBudget::floor_units);
        Local {
            lease: fleet.and_then(|f| f.lease()),
            used_beyond_floor: (self.ledger.uncovered() - floor).max(0.0),
            floor_used: self.exposure_units().min(floor),
            last_valid_sent: self.verified_at(),
        }
    }

    /// The send time of the latest refresh that answered `valid` (the evidence time).
    pub fn verified_at(&self) -> Option<Duration> {
        self.evidence.verified_at()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::budget::fixed::seed_budget;
    use crate::rules::readiness::{Reason, Status};
    use proptest::prelude::*;

    fn seed_state() -> SentinelState {
        SentinelState::new(seed_budget())
    }

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    fn verified_at(state: &mut SentinelState, now: Duration) {
        let ticket = state.refresh_sent(now).unwrap();
        state.refresh_answered(ticket, Outcome::Valid);
    }

    /// A node budget of 200 units (b = 200 on one node, r = 20/s: a 10 s window).
    fn budget_of_200() -> SentinelState {
        let input = crate::rules::budget::fixed::BudgetInput {
            nodes: Some(1.0),
            ..crate::rules::budget::fixed::seed_input()
        };
        SentinelState::new(crate::rules::budget::fixed::compute_budget(&input).unwrap())
    }

    #[test]
    fn a_valid_answer_sent_before_a_settle_keeps_the_open_reservation() {
        let mut state = budget_of_200();
        verified_at(&mut state, ms(0));
        assert!(state.try_hold(100.0, ms(10)).is_ok());
        let ticket = state.refresh_sent(ms(20)).unwrap();
        assert!(state.try_hold(50.0, ms(30)).is_ok());
        let recorded = state.settle(100.0, 0.0, 0.0, ms(40));
        assert_eq!(recorded.settlement.refunded, 100.0);
        state.refresh_answered(ticket, Outcome::Valid);
        assert_eq!(
            (state.exposure_units(), state.reserved_units()),
            (50.0, 50.0)
        );
    }

    #[test]
    fn settled_usage_leaves_only_with_a_refresh_sent_after_the_settle() {
        let mut state = budget_of_200();
        verified_at(&mut state, ms(0));
        assert!(state.try_hold(60.0, ms(10)).is_ok());
        verified_at(&mut state, ms(20));
        assert_eq!(
            state.exposure_units(),
            60.0,
            "open: a valid answer leaves it"
        );
        assert!(state.try_hold(40.0, ms(30)).is_ok());
        state.settle(100.0, 0.0, 50.0, ms(40));
        assert_eq!(
            (state.exposure_units(), state.reserved_units()),
            (50.0, 0.0)
        );
        verified_at(&mut state, ms(50));
        assert_eq!(state.exposure_units(), 0.0);
    }

    #[test]
    fn overage_is_recorded_at_the_settle_and_may_spend_the_budget() {
        let mut state = budget_of_200();
        verified_at(&mut state, ms(0));
        assert!(state.try_hold(100.0, ms(10)).is_ok());
        let ticket = state.refresh_sent(ms(20)).unwrap();
        let recorded = state.settle(100.0, 0.0, 150.0, ms(30));
        assert_eq!(recorded.settlement.overage, 50.0);
        assert!(!recorded.spent_changed);
        state.refresh_answered(ticket, Outcome::Valid);
        assert_eq!(state.exposure_units(), 150.0, "recorded after the send");
        let charged = state.charge(60.0, ms(40));
        assert!(charged.spent_changed, "210 of 200: budget_exhausted");
        assert_eq!(state.readiness(ms(40)).reason, Reason::BudgetExhausted);
    }

    /// The reservations' worked example (docs/api.md), step by step, on a node budget of 200.
    #[test]
    fn a_stream_that_records_its_chunks_holds_only_what_it_has_not_produced() {
        let mut state = budget_of_200();
        verified_at(&mut state, ms(0));
        assert!(state.try_hold(40.0, ms(10)).is_ok(), "reserve 40");
        let (_, held) = state.record(40.0, 30.0, ms(20));
        assert_eq!((held, state.exposure_units()), (10.0, 40.0), "record 30");
        verified_at(&mut state, ms(30));
        assert_eq!(
            state.exposure_units(),
            10.0,
            "a refresh sent after the record clears it"
        );
        assert!(state.try_hold(30.0, ms(40)).is_ok(), "extend 30");
        let (_, held) = state.record(40.0, 35.0, ms(50));
        assert_eq!((held, state.exposure_units()), (5.0, 40.0), "record 35");
        let settled = state.settle(5.0, 65.0, 66.0, ms(60));
        assert_eq!(
            (settled.settlement.refunded, settled.settlement.overage),
            (4.0, 0.0),
            "settle at 66: 1 more recorded, 4 refunded"
        );
        assert_eq!(
            (state.exposure_units(), state.reserved_units()),
            (36.0, 0.0)
        );
    }

    #[test]
    fn a_record_past_the_hold_is_overage_and_may_spend_the_budget() {
        let mut state = budget_of_200();
        verified_at(&mut state, ms(0));
        assert!(state.try_hold(150.0, ms(10)).is_ok());
        let (recorded, held) = state.record(150.0, 210.0, ms(20));
        assert_eq!((held, recorded.settlement.overage), (0.0, 60.0));
        assert!(recorded.spent_changed, "210 of 200: budget_exhausted");
        state.close();
        let (recorded, _) = state.record(0.0, 5.0, ms(30));
        assert_eq!(recorded.settlement.overage, 5.0, "recorded after close too");
        assert_eq!(state.exposure_units(), 215.0);
    }

    #[test]
    fn reservations_are_refused_like_admissions_and_records_never_are() {
        let mut state = budget_of_200();
        assert_eq!(
            state.try_hold(1.0, ms(0)).unwrap_err().reason,
            Reason::NoEvidence
        );
        verified_at(&mut state, ms(0));
        assert!(state.try_hold(200.0, ms(1)).is_ok());
        assert_eq!(
            state.try_hold(0.5, ms(1)).unwrap_err().reason,
            Reason::BudgetExhausted
        );
        state.close();
        state.settle(200.0, 0.0, 20.0, ms(2));
        state.charge(5.0, ms(2));
        assert_eq!(state.exposure_units(), 25.0, "recorded after close too");
        assert!(state.try_hold(0.0, ms(3)).is_err());
    }

    #[test]
    fn nothing_is_admitted_before_the_first_valid() {
        let mut state = seed_state();
        assert!(!state.admit(1.0, ms(0)));
        assert_eq!(state.exposure_units(), 0.0);
    }

    #[test]
    fn admits_up_to_the_node_budget_then_reports_budget_exhausted() {
        let mut state = seed_state();
        verified_at(&mut state, ms(0));
        assert!(state.admit(60.0, ms(100)));
        assert!(
            !state.admit(41.0, ms(100)),
            "would pass the 100-unit node budget"
        );
        assert_eq!(state.exposure_units(), 60.0);
        assert!(state.admit(40.0, ms(100)));
        let readiness = state.readiness(ms(100));
        assert_eq!(
            (readiness.status, readiness.reason),
            (Status::Degraded, Reason::BudgetExhausted),
            "a spent budget refuses requests, not the pod"
        );
        assert_eq!(
            state.refusal_reason(0.5, ms(100)),
            Some(Reason::BudgetExhausted)
        );
        assert!(!state.admit(0.5, ms(100)));
    }

    #[test]
    fn admit_zero_on_a_spent_budget_fits_at_the_budget_not_past_it() {
        let mut state = seed_state();
        verified_at(&mut state, ms(0));
        assert!(state.admit(100.0, ms(1)));
        assert!(
            state.admit(0.0, ms(1)),
            "ledger + 0 ≤ node budget: zero units still fit"
        );
        state.charge(0.5, ms(2));
        assert_eq!(state.readiness(ms(2)).reason, Reason::BudgetExhausted);
        assert_eq!(
            state.refusal_reason(0.0, ms(2)),
            Some(Reason::BudgetExhausted),
            "past the budget (an overage) not even zero units fit"
        );
    }

    #[test]
    fn a_readiness_hold_is_held_for_probes_and_leaves_admission_alone() {
        let mut state = seed_state();
        let cache = HoldName::parse("cache").unwrap();
        let before_evidence = state.hold_readiness(cache, ms(0));
        assert_eq!(state.readiness(ms(0)).reason, Reason::Held);
        assert_eq!(
            state.refusal_reason(1.0, ms(0)),
            Some(Reason::NoEvidence),
            "admission sees through the hold, as through draining"
        );
        verified_at(&mut state, ms(0));
        let readiness = state.readiness(ms(10));
        assert_eq!(
            (readiness.status, readiness.reason),
            (Status::NotReady, Reason::Held)
        );
        let refused = state.try_admit(1.0, ms(10));
        assert_eq!(
            refused.map(|a| a.status),
            Ok(Status::Ready),
            "admitted on the status admission sees"
        );
        let second = state.hold_readiness(cache, ms(20));
        assert!(state
            .release_readiness_hold(before_evidence, ms(30))
            .is_some());
        assert!(state
            .release_readiness_hold(before_evidence, ms(30))
            .is_none());
        assert_eq!(state.readiness(ms(30)).reason, Reason::Held);
        state.release_readiness_hold(second, ms(40));
        assert_eq!(state.readiness(ms(40)).reason, Reason::Verified);
        state.hold_readiness(cache, ms(50));
        state.drain();
        assert_eq!(state.readiness(ms(50)).reason, Reason::ShuttingDown);
    }

    #[test]
    fn reaching_half_the_node_budget_is_told_once_at_the_crossing() {
        let mut state = seed_state(); // node budget 100
        verified_at(&mut state, ms(0));
        let reached =
            |state: &mut SentinelState, units| state.try_admit(units, ms(1)).unwrap().reached_half;
        assert!(!reached(&mut state, 49.0));
        assert!(reached(&mut state, 1.0), "49 → 50: the crossing");
        assert!(!reached(&mut state, 1.0), "already past half");
        verified_at(&mut state, ms(2));
        assert!(
            !state.try_hold(60.0, ms(3)).unwrap().reached_half,
            "held units alone: no refresh could clear them"
        );
        assert!(
            state.try_admit(20.0, ms(3)).unwrap().reached_half,
            "20 recorded: half of the 40 the reservation leaves"
        );
        verified_at(&mut state, ms(4));
        let settled = state.settle(60.0, 0.0, 10.0, ms(4));
        assert!(!settled.reached_half);
        assert!(
            state.charge(45.0, ms(5)).reached_half,
            "10 → 55: a charge too"
        );
    }

    #[test]
    fn any_finished_refresh_latches_has_refreshed_even_an_indeterminate_one() {
        let mut state = seed_state();
        assert!(!state.has_refreshed());
        let ticket = state.refresh_sent(ms(0)).unwrap();
        assert!(
            !state.has_refreshed(),
            "a refresh in flight has not finished"
        );
        state.refresh_answered(ticket, Outcome::Indeterminate);
        assert!(state.has_refreshed());
        assert_eq!(state.readiness(ms(1)).status, Status::NotReady);
        verified_at(&mut state, ms(2));
        state.drain();
        assert!(state.has_refreshed(), "a latch: nothing unsets it");
    }

    #[test]
    fn a_request_larger_than_the_node_budget_is_always_refused() {
        let mut state = seed_state();
        verified_at(&mut state, ms(0));
        assert!(!state.admit(100.5, ms(1)));
        assert_eq!(state.exposure_units(), 0.0);
    }

    #[test]
    fn units_admitted_while_a_valid_refresh_was_in_flight_stay_in_the_ledger() {
        let mut state = seed_state();
        verified_at(&mut state, ms(0));
        assert!(state.admit(30.0, ms(1000)));
        let ticket = state.refresh_sent(ms(2000)).unwrap();
        assert!(state.admit(20.0, ms(2100)));
        state.refresh_answered(ticket, Outcome::Valid);
        assert_eq!(state.exposure_units(), 20.0);
        assert_eq!(state.readiness(ms(2200)).evidence_age, Some(ms(200)));
    }

    #[test]
    fn degraded_still_admits_and_denial_refuses_at_once() {
        let mut state = seed_state();
        verified_at(&mut state, ms(0));
        let ticket = state.refresh_sent(ms(1000)).unwrap();
        state.refresh_answered(ticket, Outcome::Indeterminate);
        assert_eq!(state.readiness(ms(1500)).status, Status::Degraded);
        assert!(state.admit(1.0, ms(1500)));
        let ticket = state.refresh_sent(ms(2000)).unwrap();
        state.refresh_answered(ticket, Outcome::InvalidCredential);
        assert!(!state.admit(1.0, ms(2000)));
        assert_eq!(state.readiness(ms(2000)).reason, Reason::InvalidCredential);
    }

    #[test]
    fn window_running_out_stops_admission() {
        let mut state = seed_state();
        verified_at(&mut state, ms(0));
        assert!(state.admit(1.0, ms(4999)));
        assert!(!state.admit(1.0, ms(5000)));
        assert_eq!(state.next_expiry_after(ms(4999)), Some(ms(5000)));
        assert_eq!(state.next_expiry_after(ms(5000)), None);
    }

    #[test]
    fn draining_reports_shutting_down_but_still_admits_and_refreshes() {
        let mut state = seed_state();
        verified_at(&mut state, ms(0));
        state.drain();
        let readiness = state.readiness(ms(10));
        assert_eq!(
            (readiness.status, readiness.reason),
            (Status::NotReady, Reason::ShuttingDown)
        );
        assert!(state.admit(1.0, ms(10)));
        assert!(state.refresh_sent(ms(10)).is_some());
    }

    #[test]
    fn closing_stops_admission_and_refreshes_and_ignores_late_answers() {
        let mut state = seed_state();
        verified_at(&mut state, ms(0));
        let in_flight = state.refresh_sent(ms(10)).unwrap();
        state.close();
        state.close();
        assert!(!state.admit(1.0, ms(20)));
        assert!(state.refresh_sent(ms(20)).is_none());
        state.refresh_answered(in_flight, Outcome::InvalidCredential);
        assert_eq!(state.readiness(ms(20)).reason, Reason::ShuttingDown);
        assert_eq!(state.lifecycle(), Lifecycle::Closed);
    }

    #[test]
    fn a_failed_refresh_task_fails_closed_until_closed() {
        let mut state = seed_state();
        verified_at(&mut state, ms(0));
        state.drain();
        state.fail();
        assert_eq!(state.readiness(ms(1)).reason, Reason::InternalError);
        assert_eq!(
            state.refusal_reason(1.0, ms(1)),
            Some(Reason::InternalError)
        );
        assert!(!state.admit(1.0, ms(1)));
        assert_eq!(state.exposure_units(), 0.0);
        state.close();
        state.fail();
        assert_eq!(state.readiness(ms(2)).reason, Reason::ShuttingDown);
        assert_eq!(state.lifecycle(), Lifecycle::Closed);
    }

    #[test]
    fn refusal_reason_names_what_admission_sees_even_while_draining() {
        let mut state = seed_state();
        assert_eq!(state.refusal_reason(1.0, ms(0)), Some(Reason::NoEvidence));
        verified_at(&mut state, ms(0));
        assert_eq!(state.refusal_reason(100.0, ms(1)), None);
        assert!(state.admit(60.0, ms(1)));
        assert_eq!(
            state.refusal_reason(41.0, ms(2)),
            Some(Reason::BudgetExhausted),
            "readiness still says verified, but 41 more units do not fit"
        );
        assert_eq!(state.readiness(ms(2)).reason, Reason::Verified);
        state.drain();
        assert_eq!(
            state.refusal_reason(1.0, ms(5000)),
            Some(Reason::EvidenceTooOld)
        );
        state.close();
        assert_eq!(
            state.refusal_reason(1.0, ms(10)),
            Some(Reason::ShuttingDown)
        );
    }

    #[test]
    fn a_refusal_carries_the_window_its_decision_read() {
        let mut state = fleet_state(0.2); // floor 10 units: window 0.5 s
        state.set_lease(Some(Lease {
            grant_units: 90.0,
            deadline: ms(3000),
        }));
        let refused = |state: &mut SentinelState, units, at| state.try_admit(units, ms(at));
        assert_eq!(
            refused(&mut state, 1.0, 1),
            Err(Refusal {
                reason: Reason::NoEvidence,
                stale_window: ms(5000)
            })
        );
        verified_at(&mut state, ms(2));
        assert_eq!(
            refused(&mut state, 101.0, 3).map_err(|r| r.reason),
            Err(Reason::BudgetExhausted)
        );
        state.close();
        assert_eq!(
            refused(&mut state, 1.0, 3000),
            Err(Refusal {
                reason: Reason::ShuttingDown,
                stale_window: ms(500)
            }),
            "closed, past the deadline: the floor's window"
        );
    }

    fn fleet_state(reserve: f64) -> SentinelState {
        use crate::rules::budget::lease::{example_shape, FleetBudget, FleetShape};
        SentinelState::new(BudgetSource::Fleet(FleetBudget::new(FleetShape {
            reserve,
            ..example_shape()
        })))
    }

    #[test]
    fn a_fleet_node_runs_on_floor_plus_grant_until_the_lease_deadline() {
        let mut state = fleet_state(0.2); // floor 10 units: window 0.5 s
        verified_at(&mut state, ms(0));
        assert_eq!(state.node_budget_units(ms(1)), 10.0);
        state.set_lease(Some(Lease {
            grant_units: 90.0,
            deadline: ms(3000),
        }));
        assert_eq!(state.node_budget_units(ms(1)), 100.0);
        assert_eq!(state.stale_window(ms(1)), ms(5000));
        assert!(state.admit(60.0, ms(100)));
        assert_eq!(
            state.next_expiry_after(ms(100)),
            Some(ms(3000)),
            "the deadline comes first"
        );
        let readiness = state.readiness(ms(3000));
        assert_eq!(
            (readiness.status, readiness.reason),
            (Status::NotReady, Reason::EvidenceTooOld),
            "at the deadline the window falls back to the floor's 0.5 s"
        );
        assert!(!state.admit(1.0, ms(3000)));
    }

    #[test]
    fn no_floor_and_no_grant_is_no_fleet_lease() {
        let mut state = fleet_state(0.0);
        assert_eq!(state.readiness(ms(0)).reason, Reason::NoEvidence);
        verified_at(&mut state, ms(0));
        assert_eq!(state.readiness(ms(1)).reason, Reason::NoFleetLease);
        assert_eq!(state.refusal_reason(0.0, ms(1)), Some(Reason::NoFleetLease));
        state.set_lease(Some(Lease {
            grant_units: 50.0,
            deadline: ms(10_000),
        }));
        assert_eq!(state.readiness(ms(2)).reason, Reason::Verified);
        assert!(state.admit(50.0, ms(2)));
        assert!(!state.admit(0.5, ms(3)));
    }

    /// One step of a random interleaving for the property test.
    #[derive(Debug, Clone)]
    enum Step {
        Admit(f64),
        Send,
        Answer(Outcome),
        Advance(u64),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            4 => (0.0f64..40.0).prop_map(Step::Admit),
            1 => Just(Step::Send),
            1 => prop::sample::select(Outcome::ALL.to_vec()).prop_map(Step::Answer),
            2 => (0u64..3000).prop_map(Step::Advance),
        ]
    }

    proptest! {
        /// The admission guarantee (README): units admitted after the current evidence time never exceed the
        /// node budget, and a refused admit changes nothing.
        #[test]
        fn exposure_never_exceeds_the_node_budget(steps in prop::collection::vec(step(), 1..200)) {
            let mut state = seed_state();
            let node_budget = state.node_budget_units(Duration::ZERO);
            let mut now = Duration::ZERO;
            let mut in_flight: Option<RefreshTicket> = None;
            // Independent model: every admission with its time.
            let mut admissions: Vec<(Duration, f64)> = Vec::new();
            let mut evidence_time: Option<Duration> = None;
            for step in steps {
                match step {
                    Step::Admit(units) => {
                        let before = state.clone();
                        if state.admit(units, now) {
                            admissions.push((now, units));
                        } else {
                            prop_assert_eq!(state.exposure_units(), before.exposure_units());
                            prop_assert_eq!(state.readiness(now), before.readiness(now));
                        }
                    }
                    Step::Send => {
                        if in_flight.is_none() {
                            // Order in time what the mutex orders in the shell: admissions
                            // before the send are strictly earlier, those after strictly later.
                            now += Duration::from_nanos(1);
                            in_flight = state.refresh_sent(now);
                            now += Duration::from_nanos(1);
                        }
                    }
                    Step::Answer(outcome) => {
                        if let Some(ticket) = in_flight.take() {
                            state.refresh_answered(ticket, outcome);
                            if outcome == Outcome::Valid {
                                evidence_time = Some(ticket.sent_at);
                            }
                        }
                    }
                    Step::Advance(millis) => now += Duration::from_millis(millis),
                }
                let exposure: f64 = admissions
                    .iter()
                    .filter(|(at, _)| evidence_time.is_some_and(|t| *at >= t))
                    .map(|(_, units)| units)
                    .sum();
                prop_assert!(exposure <= node_budget + 1e-9, "exposure {} > {}", exposure, node_budget);
                prop_assert!((state.exposure_units() - exposure).abs() < 1e-6,
                    "ledger {} != model {}", state.exposure_units(), exposure);
            }
        }
    }
}
