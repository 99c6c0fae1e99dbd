'use strict';
// Option checking for the JavaScript glue, in the same style as `new Sentinel(options)`: every
// error names the option and the rule it breaks, carries `code` ERR_SPEND_SENTINEL_CONFIG, and is
// thrown before anything starts (so a bad option changes nothing). Unknown keys are refused, so a
// typo such as `readypath` fails loudly instead of silently using the default. What each option
// is, its rule and its default are in options-catalog.js; `readOptions` is the one reader of it.

const CONFIG = 'ERR_SPEND_SENTINEL_CONFIG';

function configError(where, option, rule, ErrorType = TypeError) {
  const err = new ErrorType(`${where}: ${option}: ${rule}`);
  err.code = CONFIG;
  return err;
}

/** A plain object: not null, not an array. */
const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);

/** A short, secret-free description of a bad value for error messages. */
function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return 'a string';
  return typeof value === 'object' ? 'an object' : typeof value;
}

/**
 * Reads `options` (an object or undefined) against `spec`, either a section of the catalog
 * (`{ options: [{ name, kind, default | defaultOf }] }`) or `{ name: (value, fail) => parsed }`
 * for an entry point outside it. An absent option gets its default (a parsed value, or
 * `defaultOf()` when it depends on the environment); a given one is read by its kind, which
 * returns the parsed value or calls `fail()`: the kind's rule, or `fail(detail)` for a narrower
 * one, or `fail(detail, cause)` when an error of the addon says why (its words name the value).
 * `context` is passed to the kinds that need more than the value (the sentinel, say).
 */
function readOptions(where, options, spec, context = {}) {
  const entries = Array.isArray(spec.options) ? spec.options : adHocEntries(spec);
  if (options === undefined) options = {};
  if (!isObject(options)) {
    throw configError(where, 'options', `must be an object (got ${describe(options)})`);
  }
  const known = entries.map((entry) => entry.name);
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw configError(where, key, `is not an option (known: ${known.join(', ')})`);
    }
  }
  const parsed = {};
  for (const entry of entries) {
    const value = options[entry.name];
    const fail = (detail = `must be ${entry.kind.rule}`, cause = undefined) => {
      const err = configError(where, entry.name, cause ? detail : `${detail} (got ${describe(value)})`);
      if (cause) err.cause = cause;
      throw err;
    };
    parsed[entry.name] = value === undefined && !entry.readsAbsent ? defaultOf(entry) : entry.kind.read(value, fail, context);
  }
  return parsed;
}

function defaultOf(entry) {
  return entry.defaultOf ? entry.defaultOf() : entry.default;
}

/** `{ name: (value, fail) => parsed }` as entries whose reader also sees an absent value. */
function adHocEntries(spec) {
  return Object.entries(spec).map(([name, read]) => ({ name, kind: { read }, readsAbsent: true }));
}

/** Throws unless `sentinel` looks like a spend-sentinel `Sentinel` (duck-typed, so fakes work in tests). */
function checkSentinel(where, sentinel) {
  const ok =
    sentinel !== null &&
    typeof sentinel === 'object' &&
    ['readiness', 'admit', 'refusalReason', 'isServing', 'onTransition', 'drain', 'close', 'metricFamilies'].every((m) => typeof sentinel[m] === 'function');
  if (!ok) throw configError(where, 'sentinel', `must be a Sentinel from spend-sentinel (got ${describe(sentinel)})`);
  return sentinel;
}

module.exports = { readOptions, configError, checkSentinel, isObject };
