// The prom-client bridge on a shared registry: collect() is idempotent, and several sentinels
// share one registry with a constant label each.
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { catchError, fastOptions, held, scriptedAuthority, sentinelPool } from './helpers/wait.mjs';
import { FAMILY_TYPES, byLabel, crossCheck, readExposition, samplesNamed } from './helpers/exposition.mjs';

const require = createRequire(import.meta.url);
const { Sentinel } = require('spend-sentinel');
const { collect } = require('spend-sentinel/prom-client');
const client = require('prom-client');

const pool = sentinelPool(Sentinel);

/**
 * A fresh copy of the prom-client bridge (and of the labels rule it uses) loaded while the addon's
 * `metricCatalog()` answers `edit(catalog)`: what the bridge would do, without a JS edit, had a
 * Rust family changed so. The cached modules are put back afterwards.
 */
function bridgeReading(edit) {
  const native = require('../js/native.js');
  const paths = ['../js/prom-client.js', '../js/bridge-labels.js'].map((p) => require.resolve(p));
  const cached = paths.map((path) => require.cache[path]);
  const real = native.metricCatalog;
  native.metricCatalog = () => edit(real());
  for (const path of paths) delete require.cache[path];
  try {
    return require(paths[0]);
  } finally {
    native.metricCatalog = real;
    paths.forEach((path, i) => (cached[i] ? (require.cache[path] = cached[i]) : delete require.cache[path]));
  }
}

afterEach(() => pool.closeAll());

const idle = () => pool.make(fastOptions(scriptedAuthority((call) => held(call))));

describe('prom-client bridge on a shared registry', () => {
  const ours = (families) => [...families.keys()].filter((n) => n.startsWith('spend_sentinel_'));

  test('collect() twice for one sentinel is a no-op, not "already registered"', async () => {
    const sentinel = idle();
    const register = new client.Registry();
    const first = collect(sentinel, register);
    const second = collect(sentinel, register);
    const families = readExposition(await register.metrics(), { promClient: true });
    assert.deepEqual(ours(families).sort(), Object.keys(FAMILY_TYPES).sort());
    assert.equal(samplesNamed(families, 'spend_sentinel_build_info').length, 1, 'the series once');
    assert.equal(second, first, 'the same collection, the same remover');
    second();
    assert.equal(register.getSingleMetric('spend_sentinel_status'), undefined, 'removed');
    first(); // a remover is idempotent
    const again = collect(sentinel, register);
    assert.ok(register.getSingleMetric('spend_sentinel_status'), 'collected again after removal');
    again();
  });

  test('two sentinels share a registry with a constant label each; removing one keeps the other', async () => {
    const billing = idle();
    const search = idle();
    assert.equal(billing.admit(1), false);
    const register = new client.Registry();
    const removeBilling = collect(billing, register, { labels: { sentinel: 'billing' } });
    const removeSearch = collect(search, register, { labels: { sentinel: 'search' } });
    const text = await register.metrics();
    const families = readExposition(text, { promClient: true }); // unique series, contiguous families
    crossCheck(text, families);
    assert.deepEqual(ours(families).sort(), Object.keys(FAMILY_TYPES).sort());
    assert.deepEqual(byLabel(families, 'spend_sentinel_refused_total', 'sentinel', { reason: 'no_evidence' }), { billing: 1, search: 0 });
    assert.deepEqual(
      byLabel(families, 'spend_sentinel_refresh_duration_seconds_count', 'sentinel'),
      { billing: 0, search: 0 },
      'histograms carry the label too',
    );
    removeBilling();
    const left = readExposition(await register.metrics(), { promClient: true });
    assert.deepEqual(byLabel(left, 'spend_sentinel_refused_total', 'sentinel', { reason: 'no_evidence' }), { search: 0 });
    removeSearch();
    assert.deepEqual(register.getMetricsAsArray(), []);
  });

  test('a second sentinel without distinct labels, or bad labels, throws ERR_SPEND_SENTINEL_CONFIG', () => {
    const a = idle();
    const b = idle();
    const register = new client.Registry();
    const remove = collect(a, register, { labels: { sentinel: 'a' } });
    for (const [what, call, names] of [
      ['the same labels for another sentinel', () => collect(b, register, { labels: { sentinel: 'a' } }), /labels/],
      ['other label names than the first', () => collect(b, register, { labels: { pod: 'b' } }), /labels/],
      ['no labels next to a labelled sentinel', () => collect(b, register), /labels/],
      ['a label of ours', () => collect(b, new client.Registry(), { labels: { status: 'x' } }), /labels\.status/],
      ['le', () => collect(b, new client.Registry(), { labels: { le: 'x' } }), /labels\.le/],
      ['a bad label name', () => collect(b, new client.Registry(), { labels: { 'no-dash': 'x' } }), /labels/],
      ['a non-string value', () => collect(b, new client.Registry(), { labels: { sentinel: 1 } }), /labels\.sentinel/],
      ['labels not an object', () => collect(b, new client.Registry(), { labels: 'billing' }), /labels/],
      ['an unknown option', () => collect(b, new client.Registry(), { label: { sentinel: 'b' } }), /label/],
    ]) {
      const err = catchError(call);
      assert.equal(err?.code, 'ERR_SPEND_SENTINEL_CONFIG', `${what}: ${err?.message}`);
      assert.match(err.message, names, what);
    }
    remove();
    assert.deepEqual(register.getMetricsAsArray(), [], 'nothing left behind by the refused calls');
  });

  // Regression: prom-client.js once told process-wide families by a copied name prefix
  // (/^spend_sentinel_breaker_/) and reserved a hand-copied list of labels; both are the catalog's.
  test('what is process-wide and which labels are ours come from metricCatalog(), not a copy in JS', async () => {
    const asProcessWide = (catalog) => catalog.map((spec) => (spec.name === 'spend_sentinel_build_info' ? { ...spec, scope: 'process' } : spec));
    const { collect: collectNow } = bridgeReading(asProcessWide);
    const register = new client.Registry();
    collectNow(idle(), register, { labels: { sentinel: 'a' } });
    collectNow(idle(), register, { labels: { sentinel: 'b' } });
    const families = readExposition(await register.metrics(), { promClient: true });
    assert.deepEqual(
      samplesNamed(families, 'spend_sentinel_build_info').map((s) => Object.keys(s.labels)),
      [['version']],
      'a family the catalog calls process-wide: once, without the constant labels',
    );
    assert.deepEqual(Object.keys(byLabel(families, 'spend_sentinel_status', 'sentinel', { status: 'ready' })).sort(), ['a', 'b']);

    const withTenant = (catalog) => catalog.map((spec) => (spec.name === 'spend_sentinel_status' ? { ...spec, labels: [...spec.labels, 'tenant'] } : spec));
    const { collect: collectTenant } = bridgeReading(withTenant);
    const err = catchError(() => collectTenant(idle(), new client.Registry(), { labels: { tenant: 'x' } }));
    assert.equal(err?.code, 'ERR_SPEND_SENTINEL_CONFIG', 'a label a family gains is reserved');
    assert.match(err.message, /labels\.tenant/);
    assert.doesNotThrow(() => collect(idle(), new client.Registry(), { labels: { tenant: 'x' } }), 'the real catalog has no tenant label');
  });
});
