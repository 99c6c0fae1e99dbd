// Operating the metrics: every counter series from the first scrape (so `increase()` counts the
// first occurrence), refused units next to admitted units, build_info, and the OpenMetrics
// rendering (read by helpers/openmetrics.mjs).
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { catchError, fastOptions, held, recordTransitions, scriptedAuthority, sentinelPool } from './helpers/wait.mjs';
import {
  FAMILY_TYPES,
  OUTCOMES,
  REFRESH_CAUSES,
  REFUSAL_REASONS,
  TRANSITION_KEYS,
  assertClosedLabels,
  byLabel,
  crossCheck,
  readExposition,
  samplesNamed,
  valueOf,
} from './helpers/exposition.mjs';
import { crossCheckOpenMetrics, readOpenMetrics, referencePython } from './helpers/openmetrics.mjs';

const require = createRequire(import.meta.url);
const { Sentinel } = require('spend-sentinel');
const { version } = require('../package.json');

const pool = sentinelPool(Sentinel);
afterEach(() => pool.closeAll());

const idle = () => pool.make(fastOptions(scriptedAuthority((call) => held(call))));
const zeroes = (keys) => Object.fromEntries(keys.map((k) => [k, 0]));

function scrape(sentinel) {
  const text = sentinel.metrics();
  const families = readExposition(text);
  crossCheck(text, families);
  return families;
}

const transitionSeries = (families) =>
  Object.fromEntries(
    samplesNamed(families, 'spend_sentinel_transitions_total').map((s) => [`${s.labels.from}->${s.labels.to} (${s.labels.reason})`, s.value]),
  );

describe('every counter series exists from the first scrape', () => {
  test('before anything happened: each possible series at 0, and only possible ones', () => {
    const m = scrape(idle());
    assertClosedLabels(m, 'first scrape');
    assert.equal(TRANSITION_KEYS.length, 22, 'premise: 2 into ready, 2 × 2 into degraded, 2 × 8 into not_ready');
    assert.deepEqual(transitionSeries(m), zeroes(TRANSITION_KEYS), 'transitions_total: every possible combination at 0');
    assert.deepEqual(byLabel(m, 'spend_sentinel_refresh_total', 'outcome'), zeroes(OUTCOMES));
    assert.deepEqual(byLabel(m, 'spend_sentinel_refresh_indeterminate_total', 'cause'), zeroes(REFRESH_CAUSES));
    assert.deepEqual(byLabel(m, 'spend_sentinel_admitted_units_total', 'status'), zeroes(['ready', 'degraded']));
    assert.deepEqual(byLabel(m, 'spend_sentinel_refused_total', 'reason'), zeroes(REFUSAL_REASONS), 'no verified / refresh_indeterminate');
    assert.deepEqual(byLabel(m, 'spend_sentinel_refused_units_total', 'reason'), zeroes(REFUSAL_REASONS));
    for (const name of ['spend_sentinel_refunded_units_total', 'spend_sentinel_overage_units_total', 'spend_sentinel_reserved_units']) {
      assert.equal(valueOf(m, name), 0, name);
    }
  });

  test('the first transition moves a series that was already there at 0', async () => {
    const auth = scriptedAuthority();
    let release;
    auth.set((call) => (call.index === 0 ? new Promise((r) => (release = r)) : held(call)));
    const sentinel = pool.make(fastOptions(auth));
    const transitions = recordTransitions(sentinel);
    await auth.call(0);
    assert.equal(transitionSeries(scrape(sentinel))['not_ready->ready (verified)'], 0, 'present at 0 before');
    release('valid');
    await transitions.waitFor({ to: 'ready' });
    const after = transitionSeries(scrape(sentinel));
    assert.equal(after['not_ready->ready (verified)'], 1, 'then 1: increase() sees 0 → 1');
    assert.equal(Object.keys(after).length, 22, 'still the same 22 series');
  });
});

test('refusals count their units too, so a refusal ratio of units can be computed', () => {
  const sentinel = idle();
  assert.equal(sentinel.admit(2.5), false);
  assert.equal(sentinel.admit(0.5), false);
  sentinel.close();
  assert.equal(sentinel.admit(4), false);
  const m = scrape(sentinel);
  assert.equal(valueOf(m, 'spend_sentinel_refused_total', { reason: 'no_evidence' }), 2);
  assert.equal(valueOf(m, 'spend_sentinel_refused_units_total', { reason: 'no_evidence' }), 3);
  assert.equal(valueOf(m, 'spend_sentinel_refused_total', { reason: 'shutting_down' }), 1);
  assert.equal(valueOf(m, 'spend_sentinel_refused_units_total', { reason: 'shutting_down' }), 4);
  assert.equal(m.get('spend_sentinel_refused_units_total').type, 'counter');
});

test('build_info: 1, labelled with the package version', () => {
  const m = scrape(idle());
  assert.equal(m.get('spend_sentinel_build_info').type, 'gauge');
  assert.deepEqual(samplesNamed(m, 'spend_sentinel_build_info'), [{ name: 'spend_sentinel_build_info', labels: { version }, value: 1 }]);
});

describe('metrics({ format: \'openmetrics\' })', () => {
  test('parses strictly; counters without _total, UNIT seconds, info, # EOF; the same samples as the text format', async () => {
    const auth = scriptedAuthority('valid');
    const sentinel = pool.make(fastOptions(auth));
    await recordTransitions(sentinel).waitFor({ to: 'ready' });
    auth.hold();
    const heldCall = await auth.nextCall();
    assert.equal(sentinel.admit(1.5), true);
    const omText = sentinel.metrics({ format: 'openmetrics' });
    const om = readOpenMetrics(omText);
    const text = scrape(sentinel);
    heldCall.release('valid');

    const omName = (name, type) => (type === 'counter' ? name.replace(/_total$/, '') : name);
    const expected = Object.entries(FAMILY_TYPES).map(([name, type]) =>
      name === 'spend_sentinel_build_info' ? ['spend_sentinel_build', 'info'] : [omName(name, type), type],
    );
    assert.deepEqual([...om.values()].map((f) => [f.name, f.type]), expected, 'families, names and types');
    assert.deepEqual(
      [...om.values()].filter((f) => f.unit).map((f) => [f.name, f.unit]),
      [
        ['spend_sentinel_evidence_age_seconds', 'seconds'],
        ['spend_sentinel_stale_window_seconds', 'seconds'],
        ['spend_sentinel_refresh_duration_seconds', 'seconds'],
      ],
    );
    for (const [name, family] of text) {
      const ours = [...om.values()].find((f) => f.samples.length > 0 && f.samples[0].name.startsWith(omName(name, family.type)));
      const samples = (ours?.samples ?? []).filter((s) => s.name !== 'spend_sentinel_evidence_age_seconds');
      assert.equal(ours?.help ?? family.help, family.help, `${name}: help`);
      assert.deepEqual(samples, family.samples.filter((s) => s.name !== 'spend_sentinel_evidence_age_seconds'), `${name}: samples`);
    }
  });

  test('the reference parser (Python prometheus_client) reads the same', { skip: referencePython ? false : 'prometheus_client is not installed' }, async () => {
    const sentinel = idle();
    assert.equal(sentinel.admit(2), false);
    const text = sentinel.metrics({ format: 'openmetrics' });
    crossCheckOpenMetrics(text, readOpenMetrics(text));
  });

  test('text is the default; a bad argument throws ERR_SPEND_SENTINEL_CONFIG naming it', () => {
    const sentinel = idle();
    const text = sentinel.metrics();
    assert.ok(!text.includes('# EOF'));
    assert.equal(sentinel.metrics({}).split('\n')[0], text.split('\n')[0]);
    assert.equal(sentinel.metrics({ format: 'text' }).split('\n')[0], text.split('\n')[0]);
    assert.equal(sentinel.metrics(undefined).split('\n')[0], text.split('\n')[0]);
    for (const [what, arg, path] of [
      ['an unknown format', { format: 'json' }, /metrics\.format/],
      ['a number format', { format: 1 }, /metrics\.format/],
      ['a string argument', 'openmetrics', /metrics: must be an object/],
      ['null', null, /metrics: must be an object/],
      ['a misspelt key', { fromat: 'openmetrics' }, /metrics\.fromat/],
    ]) {
      const err = catchError(() => sentinel.metrics(arg));
      assert.equal(err?.code, 'ERR_SPEND_SENTINEL_CONFIG', `${what}: ${err?.message}`);
      assert.match(err.message, path, what);
    }
  });
});
