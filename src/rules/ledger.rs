//! The admission rules (README): the units this node admitted after its evidence time (its unverified exposure).

use std::fmt;

/// Units admitted on evidence nobody has verified since.
///
/// A successful refresh clears only the units admitted *before its request was sent*: those
/// admitted while it was in flight are not covered by its answer and stay.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ledger {
    unverified: f64,
}

/// Why an `admit(units)` argument is refused before any state is looked at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UnitsError {
    pub value: f64,
}

impl fmt::Display for UnitsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "units: must be a finite number ≥ 0 (got {})",
            super::JsNumber(self.value)
        )
    }
}

impl std::error::Error for UnitsError {}

/// `units` must be a finite number ≥ 0.
pub fn check_units(units: f64) -> Result<f64, UnitsError> {
    if units.is_finite() && units >= 0.0 {
        Ok(units)
    } else {
        Err(UnitsError { value: units })
    }
}

impl Ledger {
    pub fn unverified(&self) -> f64 {
        self.unverified
    }

    /// True when admitting `units` more keeps the exposure within the node budget.
    /// A request larger than the whole budget never fits.
    pub fn fits(&self, units: f64, node_budget: f64) -> bool {
        self.unverified + units <= node_budget
    }

    /// Readiness rule 6: the node budget is spent.
    pub fn is_spent(&self, node_budget: f64) -> bool {
        self.unverified >= node_budget
    }

    pub fn add(&mut self, units: f64) {
        self.unverified += units;
    }

    /// The exposure at the moment a refresh request is sent; hand it back to
    /// [`Ledger::verified_up_to`] if that refresh answers `valid`.
    pub fn mark(&self) -> f64 {
        self.unverified
    }

    /// A `valid` answer covers everything admitted up to its send `mark`; later units stay.
    pub fn verified_up_to(&mut self, mark: f64) {
        // max(0): float rounding must never turn exposure into credit.
        self.unverified = (self.unverified - mark).max(0.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_must_be_finite_and_not_negative() {
        assert_eq!(check_units(0.0), Ok(0.0));
        assert_eq!(check_units(2.5), Ok(2.5));
        for bad in [-1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(check_units(bad).is_err(), "{bad}");
        }
        assert!(check_units(-0.5)
            .unwrap_err()
            .to_string()
            .starts_with("units:"));
    }

    #[test]
    fn fits_up_to_exactly_the_budget() {
        let mut ledger = Ledger::default();
        ledger.add(99.0);
        assert!(ledger.fits(1.0, 100.0));
        assert!(!ledger.fits(1.5, 100.0));
        assert!(!Ledger::default().fits(100.5, 100.0));
    }

    #[test]
    fn valid_answer_keeps_units_admitted_while_in_flight() {
        let mut ledger = Ledger::default();
        ledger.add(30.0);
        let mark = ledger.mark();
        ledger.add(12.0); // admitted while the refresh was in flight
        ledger.verified_up_to(mark);
        assert_eq!(ledger.unverified(), 12.0);
    }
}
