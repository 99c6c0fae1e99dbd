//! Refresh on demand (README, The refresh cadence): when the ledger reaches half the node
//! budget after a `valid` answer, the next refresh starts at once instead of after its pause, so
//! that traffic above r renews the evidence (and clears the ledger) before the budget is spent.
//! After any other outcome the usual pause applies: a failing or rate-limiting authority is
//! never hammered. At most [`MAX_DEMAND_REFRESHES`] start in any [`DEMAND_PERIOD`].

use std::time::Duration;

use super::evidence::Outcome;

/// At most this many demand refreshes start in any [`DEMAND_PERIOD`].
pub const MAX_DEMAND_REFRESHES: usize = 10;

/// The sliding period of the demand refreshes' limit: one second.
pub const DEMAND_PERIOD: Duration = Duration::from_secs(1);

/// Whether the ledger has reached half the node budget: the point at which a refresh is wanted
/// now. Only recorded units (plain admissions, settled usage) can be cleared by a refresh; the
/// units open reservations hold stay whatever it answers. So the rule reads "the clearable units
/// reach half of the room the open reservations leave": recorded ≥ (node budget − held) / 2.
/// Without reservations that is exactly "the ledger reaches half the node budget"; with them,
/// it implies it (recorded + held ≥ (node budget + held) / 2), and a long stream holding half
/// the budget does not make every answer start the next refresh at once. An empty ledger never
/// has (a node budget of 0, a fleet node without a lease, asks nothing of the authority).
pub fn half_spent(recorded_units: f64, held_units: f64, node_budget_units: f64) -> bool {
    recorded_units > 0.0 && recorded_units >= (node_budget_units - held_units) / 2.0
}

/// What the decision reads, at one moment between two refreshes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DemandInputs {
    /// The ledger's recorded units: what a valid answer can clear.
    pub recorded_units: f64,
    /// The units open reservations hold: no answer clears them.
    pub held_units: f64,
    pub node_budget_units: f64,
    /// The outcome of the refresh that ended last (`None` before any).
    pub last_outcome: Option<Outcome>,
    /// The refresh breaker (`refresh.breaker`) is open.
    pub breaker_open: bool,
}

/// The start times of the latest demand refreshes: at most [`MAX_DEMAND_REFRESHES`] a period.
#[derive(Debug, Clone, Default)]
pub struct DemandLimit {
    /// A ring of the latest starts, `next` the slot of the oldest once it is full.
    starts: [Option<Duration>; MAX_DEMAND_REFRESHES],
    next: usize,
}

impl DemandLimit {
    /// The earliest moment, not before `now`, at which one more demand refresh keeps the limit.
    pub fn earliest(&self, now: Duration) -> Duration {
        match self.starts[self.next] {
            Some(oldest) => now.max(oldest + DEMAND_PERIOD),
            None => now,
        }
    }

    /// A demand refresh started at `at`.
    pub fn started(&mut self, at: Duration) {
        self.starts[self.next] = Some(at);
        self.next = (self.next + 1) % MAX_DEMAND_REFRESHES;
    }

    /// When the next refresh should start on demand, given the inputs of `now`: `None` when
    /// it should not (the ledger under half the node budget, a last outcome other than `valid`,
    /// an open breaker); else now, or later when the limit says so.
    pub fn due(&self, inputs: &DemandInputs, now: Duration) -> Option<Duration> {
        let wanted = half_spent(
            inputs.recorded_units,
            inputs.held_units,
            inputs.node_budget_units,
        ) && inputs.last_outcome == Some(Outcome::Valid)
            && !inputs.breaker_open;
        wanted.then(|| self.earliest(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    /// Node budget 500: half spent at 250.
    fn spent(exposure_units: f64) -> DemandInputs {
        DemandInputs {
            recorded_units: exposure_units,
            held_units: 0.0,
            node_budget_units: 500.0,
            last_outcome: Some(Outcome::Valid),
            breaker_open: false,
        }
    }

    #[test]
    fn due_at_once_from_half_the_node_budget_after_a_valid_answer() {
        let limit = DemandLimit::default();
        assert_eq!(limit.due(&spent(249.9), ms(5)), None);
        assert_eq!(limit.due(&spent(250.0), ms(5)), Some(ms(5)));
        assert_eq!(limit.due(&spent(600.0), ms(5)), Some(ms(5)), "overage too");
    }

    #[test]
    fn never_after_another_outcome_or_before_any() {
        let limit = DemandLimit::default();
        for outcome in [
            None,
            Some(Outcome::Indeterminate),
            Some(Outcome::InvalidCredential),
            Some(Outcome::CapabilityMissing),
        ] {
            let inputs = DemandInputs {
                last_outcome: outcome,
                ..spent(400.0)
            };
            assert_eq!(limit.due(&inputs, ms(5)), None, "{outcome:?}");
        }
    }

    #[test]
    fn never_while_the_breaker_is_open() {
        let inputs = DemandInputs {
            breaker_open: true,
            ..spent(400.0)
        };
        assert_eq!(DemandLimit::default().due(&inputs, ms(5)), None);
    }

    #[test]
    fn an_empty_ledger_wants_nothing_even_on_a_budget_of_zero() {
        assert!(!half_spent(0.0, 0.0, 0.0));
        assert!(half_spent(0.5, 0.0, 0.0));
        assert!(!half_spent(0.0, 0.0, 10.0));
    }

    #[test]
    fn held_units_alone_want_nothing_a_refresh_could_not_clear() {
        // A stream holding 300 of 500: no answer clears its units, so they start nothing…
        assert!(!half_spent(0.0, 300.0, 500.0));
        assert!(!half_spent(99.0, 300.0, 500.0));
        // …and recorded units do once they reach half of the 200 left.
        assert!(half_spent(100.0, 300.0, 500.0));
        // Held past the budget (it shrank): any recorded unit is worth clearing.
        assert!(half_spent(1.0, 600.0, 500.0));
    }

    #[test]
    fn at_most_ten_start_in_any_second() {
        let mut limit = DemandLimit::default();
        let mut now = ms(1000);
        let mut starts = Vec::new();
        // Always wanted: take each refresh as soon as the limit allows, for 5 s.
        loop {
            let at = limit.due(&spent(400.0), now).unwrap();
            if at >= ms(6000) {
                break;
            }
            limit.started(at);
            starts.push(at);
            now = at + ms(1);
        }
        for (i, start) in starts.iter().enumerate() {
            let in_period = starts[i..]
                .iter()
                .take_while(|t| **t < *start + DEMAND_PERIOD)
                .count();
            assert!(
                in_period <= MAX_DEMAND_REFRESHES,
                "{in_period} from {start:?}"
            );
        }
        assert_eq!(
            &starts[..10],
            (0..10).map(|i| ms(1000 + i)).collect::<Vec<_>>()
        );
        assert_eq!(
            starts[10],
            ms(2000),
            "the 11th waits for the 1st to leave the period"
        );
        assert_eq!(starts.len(), 50, "ten a second, no fewer");
    }
}
