'use strict';
// What tells several sentinels apart on one prom-client Registry (`labels`) or one OpenTelemetry
// Meter (`attributes`): one rule for both bridges, and one bookkeeping of which sentinel is
// attached where with which constant labels.
//
// The rule: an object of label names to string values; a name is a Prometheus label name that
// none of our own families uses (read from the metric catalog, so a new family's labels are
// reserved too) and neither `le` nor `quantile`. On one target every sentinel uses the same
// label names with other values; the same sentinel with the same labels again is a no-op.

const { configError, isObject } = require('./options');
const { metricCatalog } = require('./native');

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/** Label names of our own families, and those of histograms and summaries. */
const RESERVED = new Set(['le', 'quantile', ...metricCatalog().flatMap((spec) => spec.labels)]);

/**
 * `value` (an object of label names to string values; undefined for none) checked and copied;
 * errors name `where` and `option` (`labels`, `attributes`) and carry ERR_SPEND_SENTINEL_CONFIG.
 */
function checkConstantLabels(where, option, value = {}) {
  if (!isObject(value)) {
    throw configError(where, option, 'must be an object of label names to string values');
  }
  const out = {};
  for (const [key, label] of Object.entries(value)) {
    if (!LABEL_NAME.test(key) || key.startsWith('__')) {
      throw configError(where, `${option}.${key}`, 'must be a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __)');
    }
    if (RESERVED.has(key)) throw configError(where, `${option}.${key}`, 'is a label of our own families; pick another name');
    if (typeof label !== 'string') throw configError(where, `${option}.${key}`, `must be a string (got ${label === null ? 'null' : typeof label})`);
    out[key] = label;
  }
  return out;
}

const keyOf = (labels) => JSON.stringify(Object.keys(labels).sort().map((k) => [k, labels[k]]));
const namesOf = (labels) => JSON.stringify(Object.keys(labels).sort());

/**
 * Finds where `sentinel` with `labels` goes on `target` (`states`: a WeakMap target → state, a
 * state made by `fresh()` plus `entries`, a Map key → entry with `sentinel`, and `names`).
 * Returns `{ state, key, taken }`: `taken` is the entry already there for this sentinel with
 * these labels (attaching again is a no-op), else null once the labels were checked against the
 * sentinels already there (the same names, other values). `where`/`option`/`place` word errors.
 */
function attach(states, target, sentinel, labels, { where, option, place, fresh }) {
  const key = keyOf(labels);
  let state = states.get(target);
  if (state?.entries.size === 0) state = undefined;
  if (state) {
    const taken = state.entries.get(key);
    if (taken && taken.sentinel === sentinel) return { state, key, taken };
    if (taken) {
      throw configError(where, option, `another sentinel is ${place} with the same ${option} ${key}; give each sentinel distinct ${option} (e.g. { ${option}: { sentinel: 'billing' } })`);
    }
    if (namesOf(labels) !== state.names) {
      throw configError(where, option, `must have the same label names as the sentinels already ${place} (${state.names})`);
    }
  } else {
    state = { ...fresh(), entries: new Map(), names: namesOf(labels) };
    states.set(target, state);
  }
  return { state, key, taken: null };
}

module.exports = { attach, checkConstantLabels };
