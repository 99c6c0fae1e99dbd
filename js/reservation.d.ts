// Reservations (js/reservation.js): units held before work whose size is known only after it,
// settled to the measured figure afterwards. `reserve` is added to the addon's `Sentinel` class
// in JavaScript, so its typing is added here, by declaration merging with the generated class.

/**
 * Units held by `sentinel.reserve(units)` until `settle(actualUnits)`. Held units stay in the
 * node's ledger whatever evidence arrives (the work they pay for is still running); settling
 * refunds the unused part at once and records the used part, overage included, as usage of
 * that moment. A small JavaScript object: no native handle, nothing to close but `settle`.
 */
export declare class Reservation {
  private constructor();
  /** The units held now (0 once settled). */
  readonly heldUnits: number;
  /** Whether `settle` (or `release`) has ended it. */
  readonly settled: boolean;
  /**
   * Admits `units` more (default 1) under the same rule as `admit`, held by this reservation:
   * `true` when admitted; `false` when refused (stop producing: what was produced is held).
   * Throws a `TypeError` (`ERR_SPEND_SENTINEL_SETTLED`) once settled, or
   * (`ERR_SPEND_SENTINEL_UNITS`) unless `units` is a finite number ≥ 0; either changes nothing.
   */
  extend(units?: number): boolean;
  /**
   * Ends the reservation with the units actually used (required, a finite number ≥ 0): the
   * unused part leaves the ledger now (refunded); the used part is recorded now and leaves only
   * with a valid answer to a refresh sent later. Above the held units, the excess is recorded
   * all the same, as overage. After the sentinel closed it records without error. Throws a
   * `TypeError` (`ERR_SPEND_SENTINEL_SETTLED`) when already settled, or
   * (`ERR_SPEND_SENTINEL_UNITS`) for a bad `actualUnits`; either changes nothing.
   */
  settle(actualUnits: number): void;
  /** `settle(0)`; does nothing once settled, so `finally { reservation.release() }` is safe. */
  release(): void;
}

declare module '../binding' {
  interface Sentinel {
    /**
     * Admits `units` (default 1) exactly as `admit(units)` would and returns a `Reservation`
     * holding them until it settles; `null` where `admit` would have answered `false`
     * (`refusalReason(units)` says why). Throws a `TypeError` (`ERR_SPEND_SENTINEL_UNITS`)
     * unless `units` is a finite number ≥ 0.
     */
    reserve(units?: number): Reservation | null;
  }
}
