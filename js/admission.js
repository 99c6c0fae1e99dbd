'use strict';
// The admission guard for routes that record usage, independent of any framework: it admits the
// request's units and, on a refusal, describes the 503 to send. One native call per request,
// admitted or refused: the addon's admission function answers a small integer that says
// "admitted", or the refusal's reason with the stale window of that same moment.
// With `settle` (usage known only after the work) it reserves the units instead, and settles the
// reservation once the response is over; the frameworks' glue says when that is.

const { admissionCodeFunction, admissionRefusalReasons } = require('./native');
const { readOptions, checkSentinel, configError } = require('./options');
const { reservingFunction } = require('./reservation');

/** Code 1 + i is a refusal for `REASONS[i]`; each second of window adds `SLOTS` (src/bindings/hot_path.rs). */
const REASONS = admissionRefusalReasons();
const SLOTS = REASONS.length + 1;

const UNITS_ERROR = 'ERR_SPEND_SENTINEL_UNITS';

/**
 * `units`: a function of the request (default: every request is 1 unit) or a fixed number. The
 * rule for a number is the addon's: the sentinel is asked once, now, with the very value (reading
 * only), so a fixed number `admit` would refuse fails here, with `admit`'s own words.
 */
function readUnits(where, sentinel, value) {
  if (value === undefined) return () => 1;
  if (typeof value === 'function') return value;
  try {
    sentinel.refusalReason(value);
  } catch (err) {
    if (err?.code !== UNITS_ERROR) throw err;
    const error = configError(where, 'units', `must be a function (req) => units, or a number admit() accepts (${err.message})`);
    error.cause = err;
    throw error;
  }
  return () => value;
}

function readSettle(value, fail) {
  if (value === undefined) return undefined;
  if (typeof value !== 'function') fail('must be a function (req, res) => the units actually used');
  return value;
}

function readRetryAfter(value, fail) {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 1) fail('must be a whole number of seconds ≥ 1');
  return value;
}

/**
 * Returns the guard for `options`. Without `settle`: `{ decide }`, where `decide(req)` answers
 * `null` when the request's units were admitted (they are now in the ledger), otherwise the
 * refusal `{ statusCode: 503, headers, body }`. With `settle`: `{ reserve, settleAtEnd }` (see
 * `reserving` and `settlingAtEnd`); `logError(req, fields, msg)` reports a failed `settle`.
 * A `units` function that throws, or returns something `admit` refuses as an argument, throws
 * out of `decide` and `reserve`: that is a bug in the caller, and the framework's error handler
 * should see it.
 */
function createAdmission(where, sentinel, options, logError) {
  checkSentinel(where, sentinel);
  const config = readOptions(where, options, {
    units: (value) => readUnits(where, sentinel, value),
    settle: readSettle,
    retryAfterSeconds: readRetryAfter,
  });
  const admit = admissionOf(where, sentinel);
  if (config.settle !== undefined) {
    return { reserve: reserving(sentinel, config), settleAtEnd: settlingAtEnd(where, config.settle, logError) };
  }
  return {
    decide(req) {
      const code = admit(config.units(req));
      return code === 0 ? null : refusalOf(code, config);
    },
  };
}

/**
 * `reserve(req)`: a `Reservation` holding the request's units, or the refusal `admit` would have
 * answered; one native call either way (a refused reservation answers the same code as `admit`).
 */
function reserving(sentinel, config) {
  const reserveOrCode = reservingFunction(sentinel);
  return function reserve(req) {
    const answer = reserveOrCode(config.units(req));
    return typeof answer === 'number' ? refusalOf(answer, config) : answer;
  };
}

/** The 503 of a refusal's admission code: its reason, and `Retry-After` from its window. */
function refusalOf(code, config) {
  const windowSeconds = Math.floor(code / SLOTS);
  return refusal(REASONS[(code % SLOTS) - 1], config.retryAfterSeconds ?? defaultRetryAfter(windowSeconds));
}

/**
 * `settleAtEnd(reservation, req, res)`, called once the response is over (more calls do
 * nothing): settles at `settle(req, res)`, unless the route settled the reservation itself (then
 * `settle` is not called). When `settle` throws or answers what `reservation.settle` refuses (not
 * a finite number ≥ 0), the reservation settles at its held units (nothing refunded, nothing left
 * open) and the error is logged.
 */
function settlingAtEnd(where, settle, logError) {
  return function settleAtEnd(reservation, req, res) {
    if (reservation.settled) return;
    try {
      reservation.settle(settle(req, res));
    } catch (err) {
      const heldUnits = reservation.heldUnits;
      if (!reservation.settled) reservation.settle(heldUnits);
      const why = err instanceof Error ? err.message : String(err);
      try {
        logError(req, { err, heldUnits }, `${where}: settle failed, so the reservation settled at the ${heldUnits} units it held: ${why}`);
      } catch {
        // this runs in a response event: a broken logger must not take the process down
      }
    }
  };
}

/** The addon's admission function for `sentinel`; anything but a `Sentinel` of this addon is refused. */
function admissionOf(where, sentinel) {
  try {
    return admissionCodeFunction(sentinel);
  } catch (err) {
    const error = configError(where, 'sentinel', 'must be a Sentinel from spend-sentinel (an object with its methods is not one)');
    error.cause = err;
    throw error;
  }
}

function refusal(reason, retryAfterSeconds) {
  return {
    statusCode: 503,
    headers: { 'retry-after': String(retryAfterSeconds) },
    body: { error: 'not_admitted', reason },
  };
}

/**
 * Half the stale window, at least 1 s: with the default cadence (a refresh every 0.3–0.5 w) a
 * fresh refresh has landed by then, which is what ends every temporary refusal. `windowSeconds`
 * is ⌈w⌉, as the admission code carries it: ⌈⌈w⌉ / 2⌉ = ⌈w / 2⌉.
 */
function defaultRetryAfter(windowSeconds) {
  return Math.max(1, Math.ceil(windowSeconds / 2));
}

module.exports = { createAdmission };
