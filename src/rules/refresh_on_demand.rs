//! Refresh on demand (README, The refresh cadence): when the units a `valid` answer could clear
//! reach half of what the open reservations leave of the node budget, after a `valid` answer,
//! the next refresh starts at once instead of after its pause, so that traffic above r renews
//! the evidence (and clears the ledger) before the budget is spent. After any other outcome the
//! usual pause applies: a failing or rate-limiting authority is never hammered. A refresh on
//! demand starts no sooner than [`DEMAND_SPACING`] after the previous refresh started: evenly
//! spaced, never a burst (a burst of ten answered together clears no more than one would, then
//! leaves the rest of the second with no refresh to clear what streams go on recording).

use std::time::Duration;

use super::evidence::Outcome;

/// A refresh on demand starts at least this long after the previous refresh started: at most
/// ten a second, evenly spaced.
pub const DEMAND_SPACING: Duration = Duration::from_millis(100);

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
    /// When the previous refresh started (of any cause).
    pub previous_start: Duration,
}

/// When the next refresh should start on demand, given the inputs of `now`: `None` when it
/// should not (the clearable units under half of what the holds leave, a last outcome other
/// than `valid`, an open breaker); else now, or [`DEMAND_SPACING`] after the previous start
/// when that is later.
pub fn demand_due(inputs: &DemandInputs, now: Duration) -> Option<Duration> {
    let wanted = half_spent(
        inputs.recorded_units,
        inputs.held_units,
        inputs.node_budget_units,
    ) && inputs.last_outcome == Some(Outcome::Valid)
        && !inputs.breaker_open;
    wanted.then(|| now.max(inputs.previous_start + DEMAND_SPACING))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    /// Node budget 500: half spent at 250; the previous refresh started long ago.
    fn spent(exposure_units: f64) -> DemandInputs {
        DemandInputs {
            recorded_units: exposure_units,
            held_units: 0.0,
            node_budget_units: 500.0,
            last_outcome: Some(Outcome::Valid),
            breaker_open: false,
            previous_start: Duration::ZERO,
        }
    }

    #[test]
    fn due_at_once_from_half_the_node_budget_after_a_valid_answer() {
        let now = ms(500);
        assert_eq!(demand_due(&spent(249.9), now), None);
        assert_eq!(demand_due(&spent(250.0), now), Some(now));
        assert_eq!(demand_due(&spent(600.0), now), Some(now), "overage too");
    }

    #[test]
    fn never_after_another_outcome_or_before_any() {
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
            assert_eq!(demand_due(&inputs, ms(500)), None, "{outcome:?}");
        }
    }

    #[test]
    fn never_while_the_breaker_is_open() {
        let inputs = DemandInputs {
            breaker_open: true,
            ..spent(400.0)
        };
        assert_eq!(demand_due(&inputs, ms(500)), None);
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
    fn no_sooner_than_100_ms_after_the_previous_start_whatever_its_cause() {
        let after = |previous: u64, now: u64| {
            let inputs = DemandInputs {
                previous_start: ms(previous),
                ..spent(400.0)
            };
            demand_due(&inputs, ms(now))
        };
        assert_eq!(after(1000, 1030), Some(ms(1100)), "30 ms in: waits 70 more");
        assert_eq!(after(1000, 1100), Some(ms(1100)));
        assert_eq!(
            after(1000, 1250),
            Some(ms(1250)),
            "long enough ago: at once"
        );
    }

    #[test]
    fn always_wanted_gives_evenly_spaced_starts_never_a_burst() {
        // Each refresh answers at once and the ledger is always past half: ten a second, each
        // exactly 100 ms after the previous, none closer.
        let mut previous_start = ms(1000);
        let mut starts = vec![previous_start];
        while previous_start < ms(2000) {
            let inputs = DemandInputs {
                previous_start,
                ..spent(400.0)
            };
            previous_start = demand_due(&inputs, previous_start + ms(1)).unwrap();
            starts.push(previous_start);
        }
        let gaps: Vec<_> = starts
            .windows(2)
            .map(|w| w[1].saturating_sub(w[0]))
            .collect();
        assert_eq!(gaps, vec![DEMAND_SPACING; 10]);
    }
}
