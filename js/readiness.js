'use strict';
// `sentinel.readiness()`, built here from one native call: the addon leaves the status and reason
// of the moment (one small integer, `readiness_pair` in src/bindings/hot_path.rs) and the evidence
// age in a two-element Float64Array, the thread's readiness cell (src/bindings/readiness_cell.rs),
// and this file makes the object. Built natively, property by property, the same object cost ~49
// native no-ops; a value answered through napi costs a napi call, a double an allocation too
// (bench/hot-path.mjs). The strings and HTTP statuses come from the addon's own lists
// (`readinessVocabulary`).

/**
 * `() => readiness object` reading `cell` (`[pair, age]`, as the native call leaves it) with the
 * addon's lists (`readinessVocabulary()`): a pair is `reason × statuses.length + status`; the age
 * is in seconds, negative without evidence.
 */
function readinessDecoder({ statuses, httpStatuses, reasons }, cell) {
  const pairs = reasons.flatMap((reason) =>
    statuses.map((status, i) => Object.freeze({ status, reason, httpStatus: httpStatuses[i] })),
  );
  return function readinessOf() {
    const { status, reason, httpStatus } = pairs[cell[0]];
    const age = cell[1];
    return { status, evidenceAgeSeconds: age < 0 ? null : age, reason, httpStatus };
  };
}

/**
 * Adds `readiness` to the addon's `Sentinel` class (binding.js is generated, so it is added
 * here); every instance carries the native function it calls.
 */
function installReadiness(binding) {
  const vocabulary = binding.readinessVocabulary();
  const readinessCode = Symbol.for(vocabulary.codeKey);
  const readinessOf = readinessDecoder(vocabulary, binding.readinessCell());
  Object.defineProperty(binding.Sentinel.prototype, 'readiness', {
    /** Readiness now (README, Readiness): no I/O, never waits on a refresh. */
    value: function readiness() {
      // Called as a method (`this[readinessCode]()`), not through a local: a native function
      // called with an undefined receiver costs V8 a receiver conversion (~15 ns, the object's
      // whole budget).
      if (this == null || typeof this[readinessCode] !== 'function') {
        throw new TypeError('readiness: must be called on a Sentinel (sentinel.readiness())');
      }
      this[readinessCode](); // fills the cell
      return readinessOf();
    },
    writable: true,
    configurable: true,
  });
  return binding;
}

module.exports = { installReadiness, readinessDecoder };
