//! The admission rules (README): the units this node admitted after its evidence time (its unverified exposure).

use std::fmt;

/// Units admitted on evidence nobody has verified since.
///
/// A successful refresh clears only the units admitted *before its request was sent*: those
/// admitted while it was in flight are not covered by its answer and stay.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ledger {
    exposure: f64,
    /// Of the oldest units, how many a fleet charge already covers (a lease that ended in Redis
    /// was charged whole): they need no reservation. A valid answer takes the oldest units
    /// first, so it is taken as taking these first (the reservation errs on the large side).
    covered: f64,
}

/// What JavaScript passed as `units` (to `admit`, `refusalReason`, or as the admission guard's
/// fixed `units`), as far as the rule needs to see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UnitsArgument {
    /// Not passed, or `undefined`.
    Absent,
    Number(f64),
    /// Anything else, by its `typeof` (`null` as "null").
    Other(&'static str),
}

/// Why a `units` argument is refused before any state is looked at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UnitsError {
    pub given: UnitsArgument,
}

impl fmt::Display for UnitsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("units: must be a finite number ≥ 0 (got ")?;
        match self.given {
            UnitsArgument::Number(value) => write!(f, "{}", super::JsNumber(value))?,
            UnitsArgument::Other(type_name) => f.write_str(type_name)?,
            UnitsArgument::Absent => f.write_str("undefined")?,
        }
        f.write_str(")")
    }
}

impl std::error::Error for UnitsError {}

/// The units rule (docs/api.md: `admit(units = 1)`): absent means 1; otherwise a finite
/// number ≥ 0.
pub fn units(given: UnitsArgument) -> Result<f64, UnitsError> {
    match given {
        UnitsArgument::Absent => Ok(1.0),
        UnitsArgument::Number(units) if units.is_finite() && units >= 0.0 => Ok(units),
        _ => Err(UnitsError { given }),
    }
}

impl Ledger {
    pub fn exposure(&self) -> f64 {
        self.exposure
    }

    /// True when admitting `units` more keeps the exposure within the node budget.
    /// A request larger than the whole budget never fits.
    pub fn fits(&self, units: f64, node_budget: f64) -> bool {
        self.exposure + units <= node_budget
    }

    /// Readiness rule 6: the node budget is spent.
    pub fn is_spent(&self, node_budget: f64) -> bool {
        self.exposure >= node_budget
    }

    pub fn add(&mut self, units: f64) {
        self.exposure += units;
    }

    /// The exposure at the moment a refresh request is sent; hand it back to
    /// [`Ledger::verified_up_to`] if that refresh answers `valid`.
    pub fn mark(&self) -> f64 {
        self.exposure
    }

    /// A `valid` answer covers everything admitted up to its send `mark`; later units stay.
    pub fn verified_up_to(&mut self, mark: f64) {
        // max(0): float rounding must never turn exposure into credit.
        self.exposure = (self.exposure - mark).max(0.0);
        self.covered = (self.covered - mark).max(0.0);
    }

    /// A fleet charge covers `units` of the oldest units (at most the exposure).
    pub fn cover(&mut self, units: f64) {
        self.covered = self.covered.max(units.min(self.exposure));
    }

    /// The exposure a fleet charge does not cover.
    pub fn uncovered(&self) -> f64 {
        (self.exposure - self.covered).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_one_when_absent_else_a_finite_number_not_below_zero() {
        use UnitsArgument::{Absent, Number, Other};
        assert_eq!(units(Absent), Ok(1.0));
        assert_eq!(units(Number(0.0)), Ok(0.0));
        assert_eq!(units(Number(2.5)), Ok(2.5));
        for bad in [-1.0, -0.5, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let err = units(Number(bad)).unwrap_err();
            // NaN ≠ NaN: compare the bits of what the error says was given.
            assert!(
                matches!(err.given, Number(v) if v.to_bits() == bad.to_bits()),
                "{bad}"
            );
        }
        assert!(units(Other("string")).is_err());
    }

    #[test]
    fn one_message_names_what_was_given() {
        let message = |given| units(given).unwrap_err().to_string();
        assert_eq!(
            message(UnitsArgument::Number(-1.0)),
            "units: must be a finite number ≥ 0 (got -1)"
        );
        assert_eq!(
            message(UnitsArgument::Number(f64::NAN)),
            "units: must be a finite number ≥ 0 (got NaN)"
        );
        assert_eq!(
            message(UnitsArgument::Other("null")),
            "units: must be a finite number ≥ 0 (got null)"
        );
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
    fn covered_units_are_the_oldest_and_leave_first() {
        let mut ledger = Ledger::default();
        ledger.add(50.0);
        ledger.cover(80.0);
        assert_eq!(ledger.uncovered(), 0.0, "at most the exposure is covered");
        ledger.add(10.0);
        assert_eq!(ledger.uncovered(), 10.0);
        ledger.verified_up_to(30.0);
        assert_eq!((ledger.exposure(), ledger.uncovered()), (30.0, 10.0));
        ledger.verified_up_to(25.0);
        assert_eq!((ledger.exposure(), ledger.uncovered()), (5.0, 5.0));
    }

    #[test]
    fn valid_answer_keeps_units_admitted_while_in_flight() {
        let mut ledger = Ledger::default();
        ledger.add(30.0);
        let mark = ledger.mark();
        ledger.add(12.0); // admitted while the refresh was in flight
        ledger.verified_up_to(mark);
        assert_eq!(ledger.exposure(), 12.0);
    }
}
