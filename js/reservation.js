'use strict';
// Reservations: units held before work whose size is known only after it (a model's tokens, a
// streamed export's bytes), settled to the measured figure afterwards. The rule lives in the
// addon's ledger (src/rules/ledger.rs); this file is the small JavaScript object that remembers
// what one reservation holds and has recorded, so a reservation needs no native handle:
// `reserve`, `extend`, `record` and `settle` are one native call each, and a reservation nobody references is simply collected
// (its units stay in the ledger, as an unsettled reservation's must).

const SETTLED = 'ERR_SPEND_SENTINEL_SETTLED';

/** Only `sentinel.reserve()` makes reservations. */
const MADE_BY_RESERVE = Symbol('spend-sentinel reservation');

/** Per sentinel, its `{ hold, record, settle }` native functions (made once, on the first `reserve`). */
const FUNCTIONS = new WeakMap();

function settledError(method) {
  const err = new TypeError(`${method}: this reservation is already settled`);
  err.code = SETTLED;
  return err;
}

class Reservation {
  /** `{ hold, record, settle }` of the sentinel that made it. */
  #native;
  #held;
  #recorded = 0;
  #settled = false;

  constructor(token, native, held) {
    if (token !== MADE_BY_RESERVE) throw new TypeError('Reservation: made only by sentinel.reserve(units)');
    this.#native = native;
    this.#held = held;
  }

  /** The units this reservation holds now (0 once settled). */
  get heldUnits() {
    return this.#settled ? 0 : this.#held;
  }

  /** The units `record` has recorded so far (they stand after the settle). */
  get recordedUnits() {
    return this.#recorded;
  }

  get settled() {
    return this.#settled;
  }

  /**
   * Admits `units` more (default 1) under the same rule as `admit`, held by this reservation:
   * `true` when they were, `false` when refused (stop producing; what was produced is held).
   */
  extend(units) {
    if (this.#settled) throw settledError('extend');
    const held = this.#native.hold(units);
    if (held < 0) return false;
    this.#held += held;
    return true;
  }

  /**
   * Reports `units` the work has already produced: they leave the hold and are recorded as usage
   * of this moment (beyond the hold, as overage), so the next valid refresh can clear them. Call
   * it after the work it reports, never before.
   */
  record(units) {
    if (this.#settled) throw settledError('record');
    // Throws (and changes nothing) when `units` is not a finite number ≥ 0; answers the units
    // still held.
    this.#held = this.#native.record(this.#held, units);
    this.#recorded += units;
  }

  /**
   * Ends the reservation with its whole usage (`record`ed units included): the new part is
   * recorded as usage of this moment, overage included; what is still held beyond it leaves the
   * ledger now (refunded). Below the recorded units nothing is taken back.
   */
  settle(actualUnits) {
    if (this.#settled) throw settledError('settle');
    // Throws (and changes nothing) when `actualUnits` is not a finite number ≥ 0.
    this.#native.settle(this.#held, this.#recorded, actualUnits);
    this.#settled = true;
  }

  /** `settle(0)`; nothing on a settled reservation, so `finally { r.release() }` is safe. */
  release() {
    if (!this.#settled) this.settle(0);
  }

  get [Symbol.toStringTag]() {
    return 'Reservation';
  }

  /** `util.inspect` / `console.log` show what it holds (private fields are invisible otherwise). */
  [Symbol.for('nodejs.util.inspect.custom')]() {
    return `Reservation { heldUnits: ${this.heldUnits}, recordedUnits: ${this.#recorded}, settled: ${this.#settled} }`;
  }
}

/** binding.js's `reservationFunctions`, handed over by `installReservations`. */
let reservationFunctions;

/** The native functions of `sentinel`'s reservations; anything but a Sentinel is refused. */
function functionsOf(sentinel) {
  let native = FUNCTIONS.get(sentinel);
  if (native !== undefined) return native;
  try {
    native = reservationFunctions(sentinel);
  } catch (cause) {
    throw Object.assign(new TypeError('reserve: must be called on a Sentinel (sentinel.reserve(units))'), { cause });
  }
  FUNCTIONS.set(sentinel, native);
  return native;
}

/**
 * Admits `units` into a new reservation of `native`'s sentinel: the `Reservation`, or, when
 * refused, the refusal's admission code (a number ≥ 1: its reason and window, as
 * js/admission.js reads the admit guard's codes).
 */
function reserveOrRefusalCode(native, units) {
  const held = native.hold(units);
  return held < 0 ? -held : new Reservation(MADE_BY_RESERVE, native, held);
}

/** `(units) => Reservation | code` for `sentinel`: the settling guard's one call per request. */
function reservingFunction(sentinel) {
  const native = functionsOf(sentinel);
  return (units) => reserveOrRefusalCode(native, units);
}

/** Adds `reserve` to the addon's `Sentinel` class (binding.js is generated, so it is added here). */
function installReservations(binding) {
  reservationFunctions = binding.reservationFunctions;
  Object.defineProperty(binding.Sentinel.prototype, 'reserve', {
    /**
     * Admits `units` (default 1) exactly as `admit` would and returns a `Reservation` holding
     * them until it settles, or `null` where `admit` would have answered `false`.
     */
    value: function reserve(units) {
      const answer = reserveOrRefusalCode(functionsOf(this), units);
      return typeof answer === 'number' ? null : answer;
    },
    writable: true,
    configurable: true,
  });
  return binding;
}

module.exports = { Reservation, installReservations, reservingFunction };
