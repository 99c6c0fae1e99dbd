'use strict';
// The admission guard for routes that record usage, independent of any framework: it admits the
// request's units and, on a refusal, describes the 503 to send. One native call per request,
// admitted or refused: the addon's admission function answers a small integer that says
// "admitted", or the refusal's reason with the stale window of that same moment.

const { admissionCodeFunction, admissionRefusalReasons } = require('./native');
const { readOptions, checkSentinel, configError } = require('./options');

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

function readRetryAfter(value, fail) {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 1) fail('must be a whole number of seconds ≥ 1');
  return value;
}

/**
 * Returns `decide(req)`: `null` when the request's units were admitted (they are now in the
 * ledger), otherwise the refusal `{ statusCode: 503, headers, body }`. A `units` function that
 * throws, or returns something `admit` refuses as an argument, throws out of `decide`: that is a
 * bug in the caller, and the framework's error handler should see it.
 */
function createAdmission(where, sentinel, options) {
  checkSentinel(where, sentinel);
  const config = readOptions(where, options, {
    units: (value) => readUnits(where, sentinel, value),
    retryAfterSeconds: readRetryAfter,
  });
  const admit = admissionOf(where, sentinel);
  return function decide(req) {
    const code = admit(config.units(req));
    if (code === 0) return null;
    const windowSeconds = Math.floor(code / SLOTS);
    return refusal(REASONS[(code % SLOTS) - 1], config.retryAfterSeconds ?? defaultRetryAfter(windowSeconds));
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
