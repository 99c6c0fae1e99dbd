'use strict';
// Option checking for the JavaScript glue, in the same style as `new Sentinel(options)`: every
// error names the option and the rule it breaks, carries `code` ERR_SPEND_SENTINEL_CONFIG, and is
// thrown before anything starts (so a bad option changes nothing). Unknown keys are refused, so a
// typo such as `readypath` fails loudly instead of silently using the default.

const CONFIG = 'ERR_SPEND_SENTINEL_CONFIG';

function configError(where, option, rule, ErrorType = TypeError) {
  const err = new ErrorType(`${where}: ${option}: ${rule}`);
  err.code = CONFIG;
  return err;
}

/** A short, secret-free description of a bad value for error messages. */
function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return 'a string';
  return typeof value === 'object' ? 'an object' : typeof value;
}

/**
 * Reads `options` (an object or undefined) against `spec`: `{ name: (value, fail) => parsed }`.
 * Each reader gets the raw value (possibly undefined) and returns the parsed one or calls `fail`.
 */
function readOptions(where, options, spec) {
  if (options === undefined) options = {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw configError(where, 'options', `must be an object (got ${describe(options)})`);
  }
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(spec, key)) {
      throw configError(where, key, `is not an option (known: ${Object.keys(spec).join(', ')})`);
    }
  }
  const parsed = {};
  for (const [name, read] of Object.entries(spec)) {
    parsed[name] = read(options[name], (rule) => {
      throw configError(where, name, `${rule} (got ${describe(options[name])})`);
    });
  }
  return parsed;
}

// Readers: each returns a function (value, fail) => parsed, with the default when undefined.

const milliseconds =
  (fallback, { min = 0 } = {}) =>
  (value, fail) => {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
      fail(`must be a finite number of milliseconds ≥ ${min}`);
    }
    return value;
  };

const path = (fallback) => (value, fail) => {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !value.startsWith('/') || /[?#\s]/.test(value)) {
    fail('must be a path starting with "/", without query, fragment or spaces');
  }
  return value;
};

const optionalString = (value, fail) => {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') fail('must be a non-empty string');
  return value;
};

/** Throws unless `sentinel` looks like a spend-sentinel `Sentinel` (duck-typed, so fakes work in tests). */
function checkSentinel(where, sentinel) {
  const ok =
    sentinel !== null &&
    typeof sentinel === 'object' &&
    ['readiness', 'admit', 'refusalReason', 'isServing', 'onTransition', 'drain', 'close', 'metricFamilies'].every((m) => typeof sentinel[m] === 'function');
  if (!ok) throw configError(where, 'sentinel', `must be a Sentinel from spend-sentinel (got ${describe(sentinel)})`);
  return sentinel;
}

module.exports = { readOptions, configError, checkSentinel, milliseconds, path, optionalString };
