'use strict';
// The admission guard for routes that record usage, independent of any framework: it admits the
// request's units and, when it does not, describes the answer to send: 400 for units that are not
// units (the client's mistake), 413 for units no node budget of this sentinel can ever hold, 503
// for a refusal that a later retry may pass. One native call per request, admitted or refused:
// the addon's admission function answers a small integer that says "admitted", or the refusal's
// reason with the stale window of that same moment, and throws for units it cannot read.
// With `settle` (usage known only after the work) it reserves the units instead, and settles the
// reservation once the response is over; the frameworks' glue says when that is.

const { admissionCodeFunction, readinessVocabulary } = require('./native');
const { readOptions, checkSentinel, configError } = require('./options');
const { ADMISSION } = require('./options-catalog');
const { reservingFunction } = require('./reservation');

/** Code 1 + i is a refusal for `REASONS[i]`; each second of window adds `SLOTS` (src/bindings/admission.rs). */
const REASONS = readinessVocabulary().reasons;
const SLOTS = REASONS.length + 1;

const UNITS_ERROR = 'ERR_SPEND_SENTINEL_UNITS';

/** `units(req)` answered something that is not units: the same request fails again, so no `Retry-After`. */
const INVALID_UNITS = Object.freeze({ statusCode: 400, body: Object.freeze({ error: 'invalid_units' }) });

/** More units than the whole node budget: retrying cannot help, so no `Retry-After`. */
const EXCEEDS_NODE_BUDGET = Object.freeze({
  statusCode: 413,
  body: Object.freeze({ error: 'not_admitted', reason: 'exceeds_node_budget' }),
});

/**
 * Returns the guard for `options`. Without `settle`: `{ decide }`, where `decide(req)` answers
 * `null` when the request's units were admitted (they are now in the ledger), otherwise the
 * answer `{ statusCode, headers?, body }` to send (400, 413 or 503; see `judgingUnits` and
 * `refusals`). With `settle`: `{ reserve, settleAtEnd }` (see `reserving` and `settlingAtEnd`);
 * `logError(req, fields, msg)` reports a failed `settle`.
 * A `units` function that throws, throws out of `decide` and `reserve`: that is a bug in the
 * caller, and the framework's error handler should see it.
 */
function createAdmission(where, sentinel, options, logError) {
  checkSentinel(where, sentinel);
  const config = readOptions(where, options, ADMISSION, { sentinel });
  if (config.settle !== undefined) {
    const reserveOrCode = nativeFunctionOf(where, sentinel, reservingFunction);
    const reserve = reserving(reserveOrCode, config.units, refusals(sentinel, config));
    return { reserve, settleAtEnd: settlingAtEnd(where, config.settle, logError) };
  }
  // Made only on this path: a settling guard never admits, it reserves.
  const admit = nativeFunctionOf(where, sentinel, admissionCodeFunction);
  const refusalOf = refusals(sentinel, config);
  return {
    decide: judgingUnits(config.units, (units) => {
      const code = admit(units);
      return code === 0 ? null : refusalOf(code, units);
    }),
  };
}

/**
 * `reserve(req)`: a `Reservation` holding the request's units, or the answer `decide` would have
 * given; one native call either way (a refused reservation answers the same code as `admit`).
 */
function reserving(reserveOrCode, unitsOf, refusalOf) {
  return judgingUnits(unitsOf, (units) => {
    const answer = reserveOrCode(units);
    return typeof answer === 'number' ? refusalOf(answer, units) : answer;
  });
}

/**
 * `(req) => ask(units)` for the units `unitsOf(req)` answers, or the 400 when they are not
 * units: `undefined` (which the addon would count as its default of 1 unit, hiding a missing
 * field), or anything the addon refuses as an argument (its `TypeError`, thrown before it changes
 * anything). Only `ask` is caught, so a `unitsOf` that throws still reaches the framework's error
 * handler. An admitted request pays for this with one comparison: the addon judges the value in
 * the same call that decides.
 */
function judgingUnits(unitsOf, ask) {
  return function answerFor(req) {
    const units = unitsOf(req);
    if (units === undefined) return INVALID_UNITS;
    try {
      return ask(units);
    } catch (err) {
      if (err?.code === UNITS_ERROR) return INVALID_UNITS;
      throw err;
    }
  };
}

/**
 * `refusalOf(code, units)`: the answer to a refusal's admission code. A `budget_exhausted`
 * refusal of more units than the largest node budget the sentinel can have is the 413; any other
 * refusal is the 503, with its reason, and `Retry-After` from its window.
 */
function refusals(sentinel, config) {
  const largest = largestNodeBudget(sentinel);
  return function refusalOf(code, units) {
    const reason = REASONS[(code % SLOTS) - 1];
    if (reason === 'budget_exhausted' && units > largest) return EXCEEDS_NODE_BUDGET;
    const windowSeconds = Math.floor(code / SLOTS);
    return refusal(reason, config.retryAfterSeconds ?? defaultRetryAfter(windowSeconds));
  };
}

/**
 * A fixed node budget (`budget.nodes` or `budget.share`) never changes: read once, here, so a 413
 * costs no second native call. A fleet node's budget is its floor plus a leased grant, which
 * grows and shrinks while it runs (and is the floor alone while Redis is unreachable): a request
 * above it now may fit later, so in a fleet no request is judged too large for good (its refusal
 * stays the 503, whose retry may pass).
 */
function largestNodeBudget(sentinel) {
  return sentinel.fleet() === null ? sentinel.nodeBudgetUnits : Infinity;
}

/**
 * `settleAtEnd(reservation, req, res)`, called once the response is over (more calls do
 * nothing): settles at `settle(req, res)`, the reservation's whole usage (`record`ed units
 * included), unless the route settled the reservation itself (then `settle` is not called). When
 * `settle` throws or answers what `reservation.settle` refuses (not a finite number ≥ 0), the
 * reservation settles at its recorded plus held units (nothing refunded, nothing left open, the
 * recorded units not counted twice) and the error is logged.
 */
function settlingAtEnd(where, settle, logError) {
  return function settleAtEnd(reservation, req, res) {
    if (reservation.settled) return;
    try {
      reservation.settle(settle(req, res));
    } catch (err) {
      // `settle` takes the whole usage: the recorded units are in it, so only the held ones are
      // new. `heldUnits` alone would count as usage below what was recorded plus held, refunding
      // up to the recorded units' worth of the hold.
      const { recordedUnits, heldUnits } = reservation;
      const settledUnits = recordedUnits + heldUnits;
      if (!reservation.settled) reservation.settle(settledUnits);
      const why = err instanceof Error ? err.message : String(err);
      try {
        logError(
          req,
          { err, recordedUnits, heldUnits },
          `${where}: settle failed, so the reservation settled at ${settledUnits} units (${recordedUnits} recorded + ${heldUnits} held; nothing refunded): ${why}`,
        );
      } catch {
        // this runs in a response event: a broken logger must not take the process down
      }
    }
  };
}

/**
 * The guard's one native function for `sentinel`, made by `make` (`admissionCodeFunction`, or
 * `reservingFunction` for a settling guard); anything but a `Sentinel` of this addon is refused.
 */
function nativeFunctionOf(where, sentinel, make) {
  try {
    return make(sentinel);
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
