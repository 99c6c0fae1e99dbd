//! The admission rules (README): the units this node admitted after its evidence time (its
//! unverified exposure), and the units its open reservations hold.

use std::fmt;

/// Units admitted on evidence nobody has verified since, in two parts that leave differently.
///
/// - **Recorded** units (plain admissions, settled usage, charges): a `valid` answer clears
///   only those recorded *before its request was sent*; those recorded while it was in flight
///   are not covered by its answer and stay.
/// - **Held** units (open reservations): the work they pay for is still running, so no answer
///   clears them; they leave when the reservation reports work already produced (`record`,
///   recorded at that moment) or settles, which refunds the unused part at once and records
///   the new usage at that moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ledger {
    recorded: f64,
    held: f64,
    /// Of the oldest units, how many a fleet charge already covers (a lease that ended in Redis
    /// was charged whole): they need no reservation. A valid answer takes the oldest units
    /// first, so it is taken as taking these first (the reservation errs on the large side).
    covered: f64,
}

/// What settling a reservation did: the part of its held units given back, and the part of the
/// actual units beyond what it held. At most one of the two is above zero.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Settlement {
    pub refunded: f64,
    pub overage: f64,
}

/// The settling rule: a reservation that held `held` units and used `actual` refunds
/// `held − actual` when it used less, and records `actual − held` as overage when it used more.
pub fn settlement(held: f64, actual: f64) -> Settlement {
    Settlement {
        refunded: (held - actual).max(0.0),
        overage: (actual - held).max(0.0),
    }
}

/// The usage a settle adds: `actual` is the reservation's whole usage, and the `recorded` part
/// was recorded already (by `record`). Settling below what was recorded takes nothing back:
/// recorded usage was spent and stands.
pub fn new_usage(recorded: f64, actual: f64) -> f64 {
    (actual - recorded).max(0.0)
}

/// What reporting `units` of produced work does to a reservation holding `held`: the settling
/// rule applied to the produced part, except that what it would refund stays held (the work
/// goes on). Answers the units still held, and the settlement (overage only).
pub fn recording(held: f64, units: f64) -> (f64, Settlement) {
    let settled = settlement(held, units);
    let overage = Settlement {
        refunded: 0.0,
        ..settled
    };
    (settled.refunded, overage)
}

/// What JavaScript passed as `units` (to `admit`, `refusalReason`, `reserve`, `extend`,
/// `settle`, `charge`, or as the admission guard's fixed `units`), as far as the rule needs to
/// see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UnitsArgument {
    /// Not passed, or `undefined`.
    Absent,
    Number(f64),
    /// Anything else, by its `typeof` (`null` as "null").
    Other(&'static str),
}

/// Why a units argument is refused before any state is looked at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UnitsError {
    /// The argument's name in the message: `units`, or `actualUnits` for `settle`.
    pub argument: &'static str,
    pub given: UnitsArgument,
}

impl fmt::Display for UnitsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: must be a finite number ≥ 0 (got ", self.argument)?;
        match self.given {
            UnitsArgument::Number(value) => write!(f, "{}", super::JsNumber(value))?,
            UnitsArgument::Other(type_name) => f.write_str(type_name)?,
            UnitsArgument::Absent => f.write_str("undefined")?,
        }
        f.write_str(")")
    }
}

impl std::error::Error for UnitsError {}

/// The units rule of the admitting calls (docs/api.md: `admit(units = 1)`, `reserve`,
/// `extend`): absent means 1; otherwise a finite number ≥ 0.
pub fn units(given: UnitsArgument) -> Result<f64, UnitsError> {
    match given {
        UnitsArgument::Absent => Ok(1.0),
        other => measured_units("units", other),
    }
}

/// The units rule of the recording calls (`settle(actualUnits)`, `charge(units)`): they record
/// work already done, so there is no default to guess; a finite number ≥ 0 is required.
pub fn measured_units(argument: &'static str, given: UnitsArgument) -> Result<f64, UnitsError> {
    match given {
        UnitsArgument::Number(units) if units.is_finite() && units >= 0.0 => Ok(units),
        _ => Err(UnitsError { argument, given }),
    }
}

impl Ledger {
    /// Everything in the ledger: recorded and held.
    pub fn exposure(&self) -> f64 {
        self.recorded + self.held
    }

    /// The recorded units: what a `valid` answer to a refresh sent now would clear.
    pub fn recorded(&self) -> f64 {
        self.recorded
    }

    /// The units open reservations hold.
    pub fn held(&self) -> f64 {
        self.held
    }

    /// True when admitting `units` more keeps the exposure within the node budget.
    /// A request larger than the whole budget never fits.
    pub fn fits(&self, units: f64, node_budget: f64) -> bool {
        self.exposure() + units <= node_budget
    }

    /// Readiness rule 6: the node budget is spent.
    pub fn is_spent(&self, node_budget: f64) -> bool {
        self.exposure() >= node_budget
    }

    /// A plain admission, or usage recorded without one (a charge): recorded now.
    pub fn add(&mut self, units: f64) {
        self.recorded += units;
    }

    /// A reservation admitted (or extended by) `units`: held until it settles.
    pub fn hold(&mut self, units: f64) {
        self.held += units;
    }

    /// A reservation holding `held` units settled at `actual`: they leave the held units, and
    /// `actual` is recorded now (a refresh already in flight does not clear it).
    pub fn settle(&mut self, held: f64, actual: f64) -> Settlement {
        self.release_held(held);
        self.recorded += actual;
        // A refund can take the ledger below what a charge covered; covering less errs safe.
        self.covered = self.covered.min(self.exposure());
        settlement(held, actual)
    }

    /// `units` of one reservation's hold leave the held units.
    fn release_held(&mut self, units: f64) {
        // The caller releases only what its reservation holds (js/reservation.js keeps the count
        // and the settled flag); more would take units other reservations hold.
        debug_assert!(
            units <= self.held * (1.0 + 1e-9) + 1e-9,
            "releasing {units} of {}",
            self.held
        );
        // max(0): float rounding must never turn held units into credit.
        self.held = (self.held - units).max(0.0);
    }

    /// A reservation holding `held` units reports `units` already produced: they leave the held
    /// units and are recorded now, so a `valid` answer to a refresh sent after this clears them,
    /// exactly as settled usage. Answers the units the reservation still holds.
    pub fn record(&mut self, held: f64, units: f64) -> (f64, Settlement) {
        let (held_after, settlement) = recording(held, units);
        self.release_held(held - held_after);
        self.recorded += units;
        (held_after, settlement)
    }

    /// The recorded units at the moment a refresh request is sent; hand it back to
    /// [`Ledger::verified_up_to`] if that refresh answers `valid`. Right for one refresh in
    /// flight at a time, which is how the refresh loop runs (each refresh is sent after the
    /// previous one answered): a mark assumes nothing was cleared between its send and answer.
    pub fn mark(&self) -> f64 {
        self.recorded
    }

    /// A `valid` answer covers what was recorded up to its send `mark`; later units stay, and
    /// held units always stay.
    pub fn verified_up_to(&mut self, mark: f64) {
        // max(0): float rounding must never turn exposure into credit.
        self.recorded = (self.recorded - mark).max(0.0);
        self.covered = (self.covered - mark).max(0.0);
    }

    /// A fleet charge covers `units` of the oldest units (at most the exposure).
    pub fn cover(&mut self, units: f64) {
        self.covered = self.covered.max(units.min(self.exposure()));
    }

    /// The exposure a fleet charge does not cover.
    pub fn uncovered(&self) -> f64 {
        (self.exposure() - self.covered).max(0.0)
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
    fn measured_units_have_no_default_and_name_their_argument() {
        use UnitsArgument::{Absent, Number};
        assert_eq!(measured_units("actualUnits", Number(0.0)), Ok(0.0));
        let message = |given| {
            measured_units("actualUnits", given)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            message(Absent),
            "actualUnits: must be a finite number ≥ 0 (got undefined)"
        );
        assert_eq!(
            message(Number(-2.0)),
            "actualUnits: must be a finite number ≥ 0 (got -2)"
        );
    }

    #[test]
    fn settling_refunds_the_unused_part_or_records_the_overage() {
        assert_eq!(
            settlement(100.0, 40.0),
            Settlement {
                refunded: 60.0,
                overage: 0.0
            }
        );
        assert_eq!(
            settlement(100.0, 150.0),
            Settlement {
                refunded: 0.0,
                overage: 50.0
            }
        );
        assert_eq!(settlement(5.0, 5.0), Settlement::default());
    }

    #[test]
    fn held_units_survive_a_valid_answer_and_settled_usage_counts_from_the_settle() {
        let mut ledger = Ledger::default();
        ledger.hold(60.0);
        let before_settle = ledger.mark();
        ledger.verified_up_to(before_settle);
        assert_eq!(ledger.exposure(), 60.0, "held units stay");
        let in_flight = ledger.mark();
        ledger.settle(60.0, 50.0);
        assert_eq!((ledger.held(), ledger.exposure()), (0.0, 50.0));
        ledger.verified_up_to(in_flight);
        assert_eq!(ledger.exposure(), 50.0, "sent before the settle: stays");
        let after = ledger.mark();
        ledger.verified_up_to(after);
        assert_eq!(ledger.exposure(), 0.0);
    }

    #[test]
    fn recorded_work_leaves_the_hold_and_counts_from_the_record() {
        // Node budget 200, the contract's example: reserve 40; record 30; a refresh sent after
        // that answers valid; extend 30; record 35; settle at 66.
        let mut ledger = Ledger::default();
        ledger.hold(40.0);
        let (held, recorded) = ledger.record(40.0, 30.0);
        assert_eq!((held, recorded), (10.0, Settlement::default()));
        assert_eq!((ledger.held(), ledger.exposure()), (10.0, 40.0));
        let after_record = ledger.mark();
        ledger.verified_up_to(after_record);
        assert_eq!(
            ledger.exposure(),
            10.0,
            "the recorded 30 cleared, the held 10 stay"
        );
        ledger.hold(30.0);
        let (held, _) = ledger.record(40.0, 35.0);
        assert_eq!((held, ledger.exposure()), (5.0, 40.0));
        let settled = ledger.settle(held, new_usage(65.0, 66.0));
        assert_eq!(
            settled,
            Settlement {
                refunded: 4.0,
                overage: 0.0
            }
        );
        assert_eq!((ledger.held(), ledger.exposure()), (0.0, 36.0));
    }

    #[test]
    fn a_record_sent_after_a_refresh_is_not_cleared_by_its_answer() {
        let mut ledger = Ledger::default();
        ledger.hold(50.0);
        let in_flight = ledger.mark();
        ledger.record(50.0, 20.0);
        ledger.verified_up_to(in_flight);
        assert_eq!((ledger.held(), ledger.exposure()), (30.0, 50.0));
    }

    #[test]
    fn work_recorded_beyond_the_hold_is_overage() {
        let mut ledger = Ledger::default();
        ledger.hold(10.0);
        let (held, settlement) = ledger.record(10.0, 25.0);
        assert_eq!(
            (held, settlement.overage, settlement.refunded),
            (0.0, 15.0, 0.0)
        );
        assert_eq!((ledger.held(), ledger.exposure()), (0.0, 25.0));
    }

    #[test]
    fn settling_below_what_was_recorded_takes_nothing_back() {
        assert_eq!(new_usage(30.0, 10.0), 0.0);
        assert_eq!(new_usage(30.0, 30.0), 0.0);
        assert_eq!(new_usage(30.0, 31.5), 1.5);
        let mut ledger = Ledger::default();
        ledger.hold(40.0);
        let (held, _) = ledger.record(40.0, 30.0);
        let settled = ledger.settle(held, new_usage(30.0, 10.0));
        assert_eq!((settled.refunded, ledger.exposure()), (10.0, 30.0));
    }

    #[test]
    fn a_refund_never_leaves_more_covered_than_the_ledger_holds() {
        let mut ledger = Ledger::default();
        ledger.hold(80.0);
        ledger.cover(80.0);
        ledger.settle(80.0, 10.0);
        assert_eq!((ledger.exposure(), ledger.uncovered()), (10.0, 0.0));
        ledger.add(5.0);
        assert_eq!(ledger.uncovered(), 5.0);
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
