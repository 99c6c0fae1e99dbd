'use strict';
// Bridge to prom-client: `collect(sentinel, registry)` registers our families in a prom-client
// Registry, so the service's existing /metrics (registry.metrics()) includes them. Each scrape
// reads the sentinel then, from memory; nothing is copied in between.

const { checkSentinel, configError } = require('./options');

/**
 * Registers every family of `sentinel.metricFamilies()` (the same series as
 * `sentinel.metrics()`, named breakers included) in `registry` (prom-client's default
 * `register` when omitted). Returns a function that removes them again.
 */
function collect(sentinel, registry = require('prom-client').register) {
  checkSentinel('collect', sentinel);
  if (registry === null || typeof registry !== 'object' || typeof registry.registerMetric !== 'function') {
    throw configError('collect', 'registry', 'must be a prom-client Registry (or omitted for the default register)');
  }
  // OpenMetrics registries name a counter without its `_total` (prom-client adds it back to
  // each sample), as prom-client's own Counter does there.
  const openMetrics = String(registry.contentType ?? '').startsWith('application/openmetrics-text');
  const registered = sentinel.metricFamilies().map(({ name, help, type }) => ({
    family: name,
    name: openMetrics && type === 'counter' ? name.replace(/_total$/, '') : name,
    help,
    type,
  }));
  for (const { family: familyName, name, help, type } of registered) {
    registry.registerMetric({
      name,
      help,
      type,
      aggregator: 'sum',
      // prom-client asks each metric in turn; each answer is read fresh from the sentinel.
      async get() {
        const family = sentinel.metricFamilies().find((f) => f.name === familyName);
        // metricName only for a histogram's _bucket/_sum/_count: for the family's own series
        // prom-client derives the name itself.
        const values = (family?.samples ?? []).map((s) =>
          s.name === familyName ? { labels: s.labels, value: s.value } : { metricName: s.name, labels: s.labels, value: s.value },
        );
        return { name, help, type, aggregator: 'sum', values };
      },
      reset() {},
    });
  }
  return function remove() {
    for (const { name } of registered) registry.removeSingleMetric(name);
  };
}

module.exports = { collect };
