// The OpenTelemetry bridge (`spend-sentinel/opentelemetry`) on a real SDK: a MeterProvider with a
// PeriodicExportingMetricReader over an InMemoryMetricExporter (helpers/otel.mjs), flushed by the
// tests, never by its timer. Each collection is checked series by series against
// `metricFamilies()` (the exposition that metrics.spec.mjs checks), read before and after it.
//
// Synchronisation as in metrics.spec.mjs: while the scripted authority holds call N, exactly N
// refreshes are counted, and their durations were handed to JavaScript before call N started
// (one queue onto the JavaScript thread), so the histogram has N records.
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { catchError, closedPort, controlledAuthority, fastOptions, held, recordTransitions, scriptedAuthority, sentinelPool } from './helpers/wait.mjs';
import { BREAKER_STATES, FAMILY_TYPES, OUTCOMES, STATUSES } from './helpers/exposition.mjs';
import { CATALOG, assertSameAsExposition, byAttribute, otelPipeline, pointsOf } from './helpers/otel.mjs';

const require = createRequire(import.meta.url);
const { Sentinel, CircuitBreaker } = require('spend-sentinel');
const { observe } = require('spend-sentinel/opentelemetry');

const pool = sentinelPool(Sentinel);
const pipelines = [];
afterEach(async () => {
  await pool.closeAll();
  for (const p of pipelines.splice(0)) await p.shutdown();
});
const pipeline = (options) => {
  const p = otelPipeline(options);
  pipelines.push(p);
  return p;
};
const idle = () => pool.make(fastOptions(scriptedAuthority((call) => held(call))));
const oneHot = (keys, on) => Object.fromEntries(keys.map((k) => [k, k === on ? 1 : 0]));
const tally = (keys, values) => Object.fromEntries(keys.map((k) => [k, values.filter((v) => v === k).length]));

test('the catalog has every family of the exposition, and names each the OpenTelemetry way', () => {
  const sentinelAndBreakers = CATALOG.filter((s) => s.scope !== 'fleet').map((s) => [s.name, s.type]);
  assert.deepEqual(Object.fromEntries(sentinelAndBreakers), { ...FAMILY_TYPES });
  for (const spec of CATALOG) {
    assert.match(spec.otelName, /^spend_sentinel(\.[a-z_]+)+$/, spec.name);
    assert.doesNotMatch(spec.otelName, /_total$|seconds/, spec.name);
  }
  assert.deepEqual(CATALOG.find((s) => s.name === 'spend_sentinel_refresh_duration_seconds').buckets, [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);
});

describe('one sentinel on a meter', () => {
  test('ready → degraded → not_ready (evidence_too_old) → ready: every series as the exposition has it, the histogram once per refresh', async () => {
    const ctl = controlledAuthority();
    const sentinel = pool.make(fastOptions(ctl.auth, { refresh: { timeoutMs: 800 } }));
    const transitions = recordTransitions(sentinel);
    const otel = pipeline();
    const attributes = { sentinel: 'billing' };
    const stop = observe(sentinel, { meter: otel.meter, attributes });

    const check = async (stage, call, status) => {
      const before = sentinel.metricFamilies();
      const metrics = await otel.collect();
      const after = sentinel.metricFamilies();
      assertSameAsExposition(metrics, before, after, attributes, stage);
      // The figures metrics.spec.mjs checks on the exposition, read from OpenTelemetry.
      assert.deepEqual(byAttribute(metrics, 'spend_sentinel.status', 'status', attributes), oneHot(STATUSES, status), `${stage}: status`);
      const answered = ctl.answers.slice(0, call.index);
      assert.deepEqual(byAttribute(metrics, 'spend_sentinel.refreshes', 'outcome', attributes), tally(OUTCOMES, answered), `${stage}: refreshes by outcome`);
      const durations = metrics.get('spend_sentinel.refresh.duration')?.dataPoints ?? [];
      assert.equal(durations.reduce((n, p) => n + p.value.count, 0), call.index, `${stage}: one duration per refresh sent`);
      const moved = Object.values(pointsOf(metrics, 'spend_sentinel.transitions', attributes)).reduce((a, b) => a + b, 0);
      assert.equal(moved, transitions.events.length, `${stage}: transitions`);
      return metrics;
    };

    const first = await ctl.auth.call(0);
    assert.equal(sentinel.admit(1), false);
    await check('before the first answer', first, 'not_ready');

    ctl.release(first, 'valid', 'valid');
    await transitions.waitFor({ to: 'ready' });
    assert.equal(sentinel.admit(2.5), true);
    assert.equal(sentinel.admit(1000), false);
    const atReady = await ctl.checkpoint();
    const ready = await check('ready', atReady, 'ready');
    assert.equal(byAttribute(ready, 'spend_sentinel.admitted_units', 'status', attributes).ready, 2.5);
    assert.equal(byAttribute(ready, 'spend_sentinel.refused_admissions', 'reason', attributes).budget_exhausted, 1);

    ctl.release(atReady, 'indeterminate', 'indeterminate');
    await transitions.waitFor({ to: 'degraded' });
    assert.equal(sentinel.admit(1.5), true);
    const atDegraded = await ctl.checkpoint();
    const degraded = await check('degraded', atDegraded, 'degraded');
    assert.equal(byAttribute(degraded, 'spend_sentinel.admitted_units', 'status', attributes).degraded, 1.5);

    ctl.release(atDegraded, 'indeterminate', 'indeterminate');
    await transitions.waitFor({ to: 'not_ready', reason: 'evidence_too_old' }, { ms: 4000 });
    assert.equal(sentinel.admit(1), false);
    const atStale = await ctl.checkpoint();
    const stale = await check('evidence_too_old', atStale, 'not_ready');
    assert.ok(Object.values(pointsOf(stale, 'spend_sentinel.evidence.age', attributes))[0] >= 1, 'evidence at least w old');

    const readyAgain = transitions.next({ from: 'not_ready', to: 'ready' });
    ctl.release(atStale, 'valid', 'valid');
    await readyAgain;
    const atReadyAgain = await ctl.checkpoint();
    await check('ready again', atReadyAgain, 'ready');
    stop();
    ctl.release(atReadyAgain, 'valid', 'hold');
  });
});

test('a sentinel with a fleet budget: the fleet instruments too, as sentinel.fleet() reads (Redis never answers here)', async () => {
  const otel = pipeline();
  const redis = `redis://127.0.0.1:${await closedPort()}`;
  const options = fastOptions(scriptedAuthority((call) => held(call)));
  const sentinel = pool.make({ ...options, budget: { unverifiedUnits: 10_000, maxUnitsPerSecond: 100, fleet: { redis, name: 'otel-fleet', maxNodes: 4 } } });
  const stop = observe(sentinel, { meter: otel.meter, attributes: { sentinel: 'fleet' } });
  const metrics = await otel.collect();
  const fleet = sentinel.fleet();
  const fleetSpecs = CATALOG.filter((spec) => spec.scope === 'fleet');
  assert.equal(fleetSpecs.length, 9);
  for (const spec of fleetSpecs) {
    const metric = metrics.get(spec.otelName);
    assert.ok(metric, `${spec.otelName} exported`);
    assert.equal(metric.descriptor.unit, spec.otelUnit);
    assert.equal(metric.descriptor.description, spec.help);
    assert.ok(metric.dataPoints.every((p) => p.attributes.sentinel === 'fleet'), `${spec.otelName}: the sentinel's attributes`);
  }
  assert.deepEqual(byAttribute(metrics, 'spend_sentinel.fleet.mode', 'mode'), oneHot(['connecting', 'leased', 'floor'], fleet.mode));
  assert.deepEqual(Object.values(pointsOf(metrics, 'spend_sentinel.fleet.floor')), [fleet.floorUnits]);
  assert.deepEqual(Object.values(pointsOf(metrics, 'spend_sentinel.fleet.max_nodes')), [fleet.maxNodes]);
  stop();
});

describe('several sentinels on one meter', () => {
  test('distinct attributes each; breakers once, without them; observing again is a no-op; close and stop', async () => {
    // Delta temporality: a series not observed since the last collection has no point.
    const otel = pipeline({ delta: true });
    const billing = idle();
    const search = idle();
    const breaker = new CircuitBreaker({ name: 'otel-breaker' });
    await breaker.fire(async () => 'ok');
    assert.equal(billing.admit(1), false);
    const stopBilling = observe(billing, { meter: otel.meter, attributes: { sentinel: 'billing' } });
    const stopSearch = observe(search, { meter: otel.meter, attributes: { sentinel: 'search' } });
    assert.equal(observe(billing, { meter: otel.meter, attributes: { sentinel: 'billing' } }), stopBilling, 'the same sentinel again: a no-op');

    let metrics = await otel.collect();
    for (const name of ['billing', 'search']) {
      assert.deepEqual(byAttribute(metrics, 'spend_sentinel.status', 'status', { sentinel: name }), oneHot(STATUSES, 'not_ready'), name);
    }
    assert.deepEqual(byAttribute(metrics, 'spend_sentinel.refused_admissions', 'sentinel', { reason: 'no_evidence' }), { billing: 1, search: 0 });
    const breakerCalls = metrics.get('spend_sentinel.breaker.calls').dataPoints.filter((p) => p.attributes.name === 'otel-breaker');
    assert.deepEqual(breakerCalls.map((p) => p.attributes).find((a) => a.result === 'success'), { name: 'otel-breaker', result: 'success' }, 'process-wide: no sentinel attribute');
    assert.equal(breakerCalls.length, 4, 'each breaker series once per meter');
    assert.equal(metrics.get('spend_sentinel.build.info').dataPoints.length, 2, 'one build series per sentinel');

    await search.close();
    assert.equal(billing.admit(2), false);
    metrics = await otel.collect();
    assert.deepEqual(byAttribute(metrics, 'spend_sentinel.status', 'status', { sentinel: 'search' }), {}, 'a closed sentinel reports nothing more');
    assert.deepEqual(byAttribute(metrics, 'spend_sentinel.status', 'status', { sentinel: 'billing' }), oneHot(STATUSES, null), 'billing: observed, no change');
    assert.deepEqual(byAttribute(metrics, 'spend_sentinel.refused_units', 'sentinel', { reason: 'no_evidence' }), { billing: 2 }, 'billing: 2 more units refused');
    assert.deepEqual(byAttribute(metrics, 'spend_sentinel.breaker.state', 'state', { name: 'otel-breaker' }), oneHot(BREAKER_STATES, null), 'breakers still observed');

    stopBilling();
    stopBilling(); // idempotent
    stopSearch();
    metrics = await otel.collect();
    const observed = CATALOG.filter((s) => s.instrument !== 'Histogram').flatMap((s) => metrics.get(s.otelName)?.dataPoints ?? []);
    assert.deepEqual(observed, [], 'stopped: the batch callback is gone');
    const again = observe(billing, { meter: otel.meter, attributes: { pod: 'a' } });
    metrics = await otel.collect();
    assert.deepEqual(byAttribute(metrics, 'spend_sentinel.status', 'status', { pod: 'a' }), oneHot(STATUSES, 'not_ready'), 'other attribute names once the meter is empty again');
    again();
  });

  test('attributes that clash, or bad input, throw a TypeError with ERR_SPEND_SENTINEL_CONFIG naming the option', () => {
    const otel = pipeline();
    const [a, b] = [idle(), idle()];
    const stop = observe(a, { meter: otel.meter, attributes: { sentinel: 'a' } });
    const other = pipeline().meter;
    for (const [what, call, names] of [
      ['the same attributes for another sentinel', () => observe(b, { meter: otel.meter, attributes: { sentinel: 'a' } }), /observe: attributes: another sentinel/],
      ['other attribute names than the first', () => observe(b, { meter: otel.meter, attributes: { pod: 'b' } }), /observe: attributes: must have the same label names/],
      ['no attributes next to a sentinel with some', () => observe(b, { meter: otel.meter }), /observe: attributes/],
      ['an attribute of ours', () => observe(b, { meter: other, attributes: { status: 'x' } }), /attributes\.status/],
      ['cause, an attribute of ours too', () => observe(b, { meter: other, attributes: { cause: 'x' } }), /attributes\.cause/],
      ['a non-string value', () => observe(b, { meter: other, attributes: { sentinel: 1 } }), /attributes\.sentinel/],
      ['attributes not an object', () => observe(b, { meter: other, attributes: 'billing' }), /attributes/],
      ['no meter', () => observe(b, {}), /observe: meter: must be an OpenTelemetry Meter/],
      ['no options', () => observe(b), /observe: meter/],
      ['a MeterProvider, not a Meter', () => observe(b, { meter: otel.provider }), /observe: meter/],
      ['a plain object as meter', () => observe(b, { meter: {} }), /observe: meter/],
      ['an unknown option', () => observe(b, { meter: other, labels: { sentinel: 'b' } }), /observe: labels/],
      ['no sentinel', () => observe(undefined, { meter: other }), /observe: sentinel/],
      ['a meter as sentinel', () => observe(other, { meter: other }), /observe: sentinel/],
    ]) {
      const err = catchError(call);
      assert.ok(err instanceof TypeError, `${what}: a TypeError (${err})`);
      assert.equal(err.code, 'ERR_SPEND_SENTINEL_CONFIG', `${what}: ${err.message}`);
      assert.match(err.message, names, what);
    }
    stop();
  });
});
