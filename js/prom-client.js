'use strict';
// Bridge to prom-client: `collect(sentinel, registry, { labels })` registers our families in a
// prom-client Registry, so the service's existing /metrics (registry.metrics()) includes them.
// Each scrape reads the sentinels then, from memory; nothing is copied in between.
//
// One registry, any number of collected sentinels: each family is registered once per registry
// and answers with the samples of every sentinel collected there, each with its constant labels.
// Collecting the same sentinel with the same labels again is a no-op; a second sentinel needs
// labels of its own (the same label names, other values), or its series would clash.

const { checkSentinel, configError, isObject } = require('./options');
const { attach, checkConstantLabels } = require('./bridge-labels');
const { metricCatalog } = require('./native');

/**
 * Process-wide families (every named CircuitBreaker): shown once per registry, without constant
 * labels. Read from the metric catalog, so a new process-wide family needs no edit here.
 */
const PROCESS_WIDE = new Set(metricCatalog().filter((spec) => spec.scope === 'process').map((spec) => spec.name));

/** registry → { entries: Map<labelKey, { sentinel, labels }>, names: string, families: Map<name, registered> } */
const registries = new WeakMap();

function checkLabels(options) {
  if (options === undefined) return {};
  if (!isObject(options)) {
    throw configError('collect', 'options', 'must be an object ({ labels })');
  }
  for (const key of Object.keys(options)) {
    if (key !== 'labels') throw configError('collect', `options.${key}`, 'unknown option (known here: labels)');
  }
  return checkConstantLabels('collect', 'labels', options.labels);
}

/** The samples of family `familyName` over every collected sentinel, constant labels added. */
function valuesOf(state, familyName) {
  const values = [];
  for (const [i, { sentinel, labels }] of [...state.entries.values()].entries()) {
    const processWide = PROCESS_WIDE.has(familyName);
    if (processWide && i > 0) break;
    const family = sentinel.metricFamilies().find((f) => f.name === familyName);
    for (const s of family?.samples ?? []) {
      const all = processWide ? s.labels : { ...s.labels, ...labels };
      // metricName only for a histogram's _bucket/_sum/_count: for the family's own series
      // prom-client derives the name itself.
      values.push(s.name === familyName ? { labels: all, value: s.value } : { metricName: s.name, labels: all, value: s.value });
    }
  }
  return values;
}

/** Registers the families of `sentinel` that `registry` lacks (fleet families come with a fleet). */
function registerFamilies(state, registry, sentinel) {
  // OpenMetrics registries name a counter without its `_total` (prom-client adds it back to
  // each sample), as prom-client's own Counter does there.
  const openMetrics = String(registry.contentType ?? '').startsWith('application/openmetrics-text');
  for (const { name: familyName, help, type } of sentinel.metricFamilies()) {
    if (state.families.has(familyName)) continue;
    const name = openMetrics && type === 'counter' ? familyName.replace(/_total$/, '') : familyName;
    registry.registerMetric({
      name,
      help,
      type,
      aggregator: 'sum',
      // prom-client asks each metric in turn; each answer is read fresh from the sentinels.
      async get() {
        return { name, help, type, aggregator: 'sum', values: valuesOf(state, familyName) };
      },
      reset() {},
    });
    state.families.set(familyName, name);
  }
}

/**
 * Registers every family of `sentinel.metricFamilies()` (the same series as `sentinel.metrics()`,
 * named breakers included) in `registry` (prom-client's default `register` when omitted), with
 * `options.labels` added to each of the sentinel's series. Returns a function that removes them
 * again (the families leave the registry with the last sentinel collected there).
 */
function collect(sentinel, registry = require('prom-client').register, options = undefined) {
  checkSentinel('collect', sentinel);
  if (registry === null || typeof registry !== 'object' || typeof registry.registerMetric !== 'function') {
    throw configError('collect', 'registry', 'must be a prom-client Registry (or omitted for the default register)');
  }
  const labels = checkLabels(options);
  const { state, key, taken } = attach(registries, registry, sentinel, labels, {
    where: 'collect',
    option: 'labels',
    place: 'collected in this registry',
    fresh: () => ({ families: new Map() }),
  });
  if (taken) return taken.remove; // collected already: a no-op
  registerFamilies(state, registry, sentinel);
  const entry = { sentinel, labels };
  entry.remove = function remove() {
    if (state.entries.get(key) !== entry) return;
    state.entries.delete(key);
    const still = new Set([...state.entries.values()].flatMap((e) => e.sentinel.metricFamilies().map((f) => f.name)));
    for (const [familyName, name] of state.families) {
      if (still.has(familyName)) continue;
      registry.removeSingleMetric(name);
      state.families.delete(familyName);
    }
  };
  state.entries.set(key, entry);
  return entry.remove;
}

module.exports = { collect };
