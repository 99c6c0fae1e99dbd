// Reservations (js/reservation.js): units held before work whose size is known only after it,
// settled to the measured figure afterwards. `reserve` is added to the addon's `Sentinel` class
// in JavaScript, so its typing is added here, by declaration merging with the generated class.

/**
 * Units held by `sentinel.reserve(units)` until `settle(actualUnits)`. Held units stay in the
 * node's ledger whatever evidence arrives (the work they pay for is still running). A stream
 * reports what it has produced with `record(units)`: those units leave the hold and become usage
 * of that moment, which the next valid refresh clears, so a stream that records each chunk and
 * extends one chunk ahead holds about one chunk. Settling records the rest of the usage and
 * refunds what is still held. A small JavaScript object: no native handle, nothing to close but
 * `settle`.
 */
export declare class Reservation {
  private constructor();
  /** The units held now (0 once settled). */
  readonly heldUnits: number;
  /** The units `record` has recorded so far; they stand after the settle. */
  readonly recordedUnits: number;
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
   * Reports `units` (required, a finite number ≥ 0) the work has **already produced** (a chunk
   * sent, a page exported): they leave the hold and are recorded now, so a valid answer to a
   * refresh sent after this call clears them, as it clears settled usage; beyond what the
   * reservation holds they are recorded all the same, as overage. Call it after the work it
   * reports, never before: units reported before they exist could be cleared by an answer that
   * cannot vouch for them. After the sentinel closed it records without error. Throws a
   * `TypeError` (`ERR_SPEND_SENTINEL_SETTLED`) once settled, or (`ERR_SPEND_SENTINEL_UNITS`)
   * for bad `units`; either changes nothing.
   */
  record(units: number): void;
  /**
   * Ends the reservation with its **whole** usage (required, a finite number ≥ 0), what
   * `record` recorded included: only `actualUnits − recordedUnits` is new usage, recorded now
   * (it leaves only with a valid answer to a refresh sent later); what is still held beyond it
   * leaves the ledger now (refunded). New usage above the held units is recorded all the same,
   * as overage; settling below `recordedUnits` takes nothing back and refunds all that is held.
   * After the sentinel closed it records without error. Throws a `TypeError`
   * (`ERR_SPEND_SENTINEL_SETTLED`) when already settled, or (`ERR_SPEND_SENTINEL_UNITS`) for a
   * bad `actualUnits`; either changes nothing.
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
