'use strict';
// `sentinel.readiness()`, built here from one native call: the addon answers the readiness of the
// moment as one number (status, reason and evidence age; `readiness_code` in
// src/bindings/hot_path.rs) and this file makes the object. Built natively, property by property,
// the same object cost ~49 native no-ops; this way ~4 (bench/hot-path.mjs).
// The strings and HTTP statuses come from the addon's own lists (`readinessVocabulary`).

/**
 * `code => readiness object` for the addon's lists (`readinessVocabulary()`): a code is
 * `age × PAIRS + reason × STATUSES + status`, with `age` 0 without evidence, else 1 + the evidence
 * age in whole milliseconds.
 */
function readinessDecoder({ statuses, httpStatuses, reasons }) {
  const STATUSES = statuses.length;
  const PAIRS = STATUSES * reasons.length;
  return function readinessOf(code) {
    const pair = code % PAIRS;
    const status = pair % STATUSES;
    const age = (code - pair) / PAIRS;
    return {
      status: statuses[status],
      evidenceAgeSeconds: age === 0 ? null : (age - 1) / 1000,
      reason: reasons[(pair - status) / STATUSES],
      httpStatus: httpStatuses[status],
    };
  };
}

/**
 * Adds `readiness` to the addon's `Sentinel` class (binding.js is generated, so it is added
 * here); every instance carries the native function it calls.
 */
function installReadiness(binding) {
  const vocabulary = binding.readinessVocabulary();
  const readinessCode = Symbol.for(vocabulary.codeKey);
  const readinessOf = readinessDecoder(vocabulary);
  Object.defineProperty(binding.Sentinel.prototype, 'readiness', {
    /** Readiness now (README, Readiness): no I/O, never waits on a refresh. */
    value: function readiness() {
      const read = this?.[readinessCode];
      if (typeof read !== 'function') throw new TypeError('readiness: must be called on a Sentinel (sentinel.readiness())');
      return readinessOf(read());
    },
    writable: true,
    configurable: true,
  });
  return binding;
}

module.exports = { installReadiness, readinessDecoder };
