//! The evidence rules (docs/http-adapter.md): what each refresh outcome does to the evidence.

use std::time::Duration;

use super::breaker::CallOutcome;
use crate::closed_list::closed_list;

closed_list! {
    /// The result of one refresh (docs/http-adapter.md).
    pub enum Outcome {
        Valid => "valid",
        InvalidCredential => "invalid_credential",
        CapabilityMissing => "capability_missing",
        /// No proof either way: timeout, network error, 5xx, 429, malformed answer...
        Indeterminate => "indeterminate",
    }
}

impl Outcome {
    /// For `refresh.breaker`: a definitive answer, "no" included, shows the authority works;
    /// only an inconclusive refresh is a failure.
    pub fn as_call_outcome(self) -> CallOutcome {
        match self {
            Outcome::Indeterminate => CallOutcome::Failure,
            _ => CallOutcome::Success,
        }
    }
}

/// A definitive "no" from the authority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denial {
    InvalidCredential,
    CapabilityMissing,
}

/// What this node knows about its credential, as of the last refreshes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evidence {
    /// Send time of the last `valid` refresh (conservative: the answer describes a later moment).
    verified_at: Option<Duration>,
    denial: Option<Denial>,
    consecutive_indeterminate: u32,
}

impl Evidence {
    /// Applies one refresh outcome, per docs/http-adapter.md. `sent_at` is when its request was sent.
    pub fn record(&mut self, outcome: Outcome, sent_at: Duration) {
        match outcome {
            Outcome::Valid => {
                self.verified_at = Some(sent_at);
                self.denial = None;
                self.consecutive_indeterminate = 0;
            }
            Outcome::InvalidCredential => self.deny(Denial::InvalidCredential),
            Outcome::CapabilityMissing => self.deny(Denial::CapabilityMissing),
            // An ambiguous failure never erases known-good evidence nor a known denial.
            Outcome::Indeterminate => {
                self.consecutive_indeterminate = self.consecutive_indeterminate.saturating_add(1)
            }
        }
    }

    fn deny(&mut self, denial: Denial) {
        self.denial = Some(denial);
        self.consecutive_indeterminate = 0;
    }

    /// now − evidence time; `None` before the first `valid`.
    pub fn age(&self, now: Duration) -> Option<Duration> {
        self.verified_at.map(|at| now.saturating_sub(at))
    }

    pub fn verified_at(&self) -> Option<Duration> {
        self.verified_at
    }

    pub fn denial(&self) -> Option<Denial> {
        self.denial
    }

    pub fn consecutive_indeterminate(&self) -> u32 {
        self.consecutive_indeterminate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T1: Duration = Duration::from_secs(1);
    const T2: Duration = Duration::from_secs(2);

    #[test]
    fn valid_sets_the_time_to_the_send_time_and_clears_everything() {
        let mut evidence = Evidence::default();
        evidence.record(Outcome::InvalidCredential, T1);
        evidence.record(Outcome::Indeterminate, T1);
        evidence.record(Outcome::Valid, T2);
        assert_eq!(evidence.verified_at(), Some(T2));
        assert_eq!(evidence.denial(), None);
        assert_eq!(evidence.consecutive_indeterminate(), 0);
    }

    #[test]
    fn denial_keeps_the_evidence_time_and_resets_the_indeterminate_count() {
        for (outcome, denial) in [
            (Outcome::InvalidCredential, Denial::InvalidCredential),
            (Outcome::CapabilityMissing, Denial::CapabilityMissing),
        ] {
            let mut evidence = Evidence::default();
            evidence.record(Outcome::Valid, T1);
            evidence.record(Outcome::Indeterminate, T2);
            evidence.record(outcome, T2);
            assert_eq!(evidence.verified_at(), Some(T1));
            assert_eq!(evidence.denial(), Some(denial));
            assert_eq!(evidence.consecutive_indeterminate(), 0);
        }
    }

    #[test]
    fn indeterminate_keeps_evidence_and_denial_and_counts_up() {
        let mut evidence = Evidence::default();
        evidence.record(Outcome::Valid, T1);
        evidence.record(Outcome::CapabilityMissing, T1);
        for n in 1..=1000 {
            evidence.record(Outcome::Indeterminate, T2);
            assert_eq!(evidence.consecutive_indeterminate(), n);
        }
        assert_eq!(evidence.verified_at(), Some(T1));
        assert_eq!(evidence.denial(), Some(Denial::CapabilityMissing));
    }

    #[test]
    fn age_is_measured_from_the_send_time() {
        let mut evidence = Evidence::default();
        assert_eq!(evidence.age(T2), None);
        evidence.record(Outcome::Valid, T1);
        assert_eq!(
            evidence.age(Duration::from_millis(3500)),
            Some(Duration::from_millis(2500))
        );
    }
}
