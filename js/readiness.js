'use strict';
// `sentinel.readiness()`, built here from one native call: the addon answers the status and
// reason of the moment as one small integer (`readiness_pair` in src/bindings/hot_path.rs) and
// leaves the evidence age in a one-element Float64Array (src/bindings/readiness_cell.rs); this
// file makes the object. Built natively, property by property, the same object cost ~49 native
// no-ops; a double answered through napi is an allocation per call (bench/hot-path.mjs).
// The strings and HTTP statuses come from the addon's own lists (`readinessVocabulary`).

/**
 * `pair => readiness object` for the addon's lists (`readinessVocabulary()`) and the age cell
 * the native call writes: a pair is `reason × statuses.length + status`; the cell holds the
 * evidence age in seconds, or a negative number without evidence.
 */
function readinessDecoder({ statuses, httpStatuses, reasons }, ageCell) {
  const pairs = reasons.flatMap((reason) =>
    statuses.map((status, i) => Object.freeze({ status, reason, httpStatus: httpStatuses[i] })),
  );
  return function readinessOf(pair) {
    const { status, reason, httpStatus } = pairs[pair];
    const age = ageCell[0];
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
  const readinessOf = readinessDecoder(vocabulary, binding.readinessAgeCell());
  Object.defineProperty(binding.Sentinel.prototype, 'readiness', {
    /** Readiness now (README, Readiness): no I/O, never waits on a refresh. */
    value: function readiness() {
      // Called as a method (`this[readinessCode]()`), not through a local: a native function
      // called with an undefined receiver costs V8 a receiver conversion (~15 ns, the object's
      // whole budget).
      if (this == null || typeof this[readinessCode] !== 'function') {
        throw new TypeError('readiness: must be called on a Sentinel (sentinel.readiness())');
      }
      return readinessOf(this[readinessCode]());
    },
    writable: true,
    configurable: true,
  });
  return binding;
}

module.exports = { installReadiness, readinessDecoder };
