// `refresh.breaker`: the sentinel's refresh loop behind the same circuit breaker state machine.
// While the breaker is open a refresh is indeterminate without calling the authority, so a fleet
// in an outage stops hammering it; readiness follows the usual rules (degraded, then not_ready /
// evidence_too_old when the window runs out). Only an inconclusive refresh is a failure: a denial
// is a definitive answer. Fast timings: window 1 s, pauses 20-40 ms, refresh timeout 300 ms.
// The loop's timing behind the breaker (skips while open, timed-out refreshes tripping it like
// failures, each failed trial doubling the wait, no backoff without a breaker) is tested on fake
// time in src/refresher/cadence_tests.rs; these tests check the options and the JavaScript
// authority. Whether the breaker held refreshes back is read from the sentinel's own count of
// refreshes skipped while it was open (cause breaker_open), not from gaps between calls; an
// absence is checked on the calls' own start times, against a moment measured before the trip.
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import {
  FAST_REFRESH,
  catchError,
  fastOptions,
  held,
  now,
  pollUntil,
  quietPeriod,
  recordTransitions,
  scriptedAuthority,
  sentinelPool,
  sequence,
  untilPast,
} from './helpers/wait.mjs';
import { readExposition, valueOf } from './helpers/exposition.mjs';

const { Sentinel } = createRequire(import.meta.url)('spend-sentinel');

const pool = sentinelPool(Sentinel);
afterEach(() => pool.closeAll());

const BREAKER = Object.freeze({ failureThreshold: 2, openMs: 300 });

/** Refreshes the loop skipped without a call because the breaker was open. */
const skippedWhileOpen = (sentinel) =>
  valueOf(readExposition(sentinel.metrics()), 'spend_sentinel_refresh_indeterminate_total', { cause: 'breaker_open' });

/** Waits until the loop has skipped a refresh because the breaker was open. */
const untilSkipped = (sentinel) =>
  pollUntil(() => skippedWhileOpen(sentinel) > 0, { ms: 10_000, label: 'a refresh skipped while the breaker is open' });

/** A sentinel on a scripted authority with `refresh.breaker` (or none when `breaker` is undefined). */
function start(behaviour, breaker, refresh = {}, budget = {}) {
  const auth = scriptedAuthority(behaviour);
  const refreshOptions = breaker === undefined ? { ...FAST_REFRESH, ...refresh } : { ...FAST_REFRESH, ...refresh, breaker };
  const sentinel = pool.make({ ...fastOptions(auth, { budget }), refresh: refreshOptions });
  const transitions = recordTransitions(sentinel);
  return { auth, sentinel, transitions };
}

describe('an open breaker stops the refresh calls', () => {
  test('two indeterminate answers open it: no inspect call for openMs, then one trial; a valid trial brings ready and the normal cadence back', async () => {
    // call 0 valid, calls 1-2 indeterminate (trip), call 3 = the trial, held by the test, later calls valid
    // Window 10 s (the outage outlasts no window here: readiness stays degraded throughout).
    const trialCall = 3;
    const { auth, sentinel, transitions } = start(
      (call) => {
        if (call.index === 0) return Promise.resolve('valid');
        if (call.index < trialCall) return Promise.resolve('indeterminate');
        if (call.index === trialCall) return held(call);
        return Promise.resolve('valid');
      },
      BREAKER,
      {},
      { unverifiedUnits: 1000, maxUnitsPerSecond: 100 },
    );
    await transitions.waitFor({ to: 'ready' });
    await transitions.waitFor({ from: 'ready', to: 'degraded' });
    const tripping = await auth.call(2);
    // It trips on call 2's answer, after that call started: open until openMs after it at least.
    // Without the breaker, 5-10 refreshes would start in that time.
    const openUntil = tripping.startedAt + BREAKER.openMs;
    await untilPast(openUntil);
    const whileOpen = auth.calls.filter((c) => c.index > 2 && c.startedAt < openUntil);
    assert.deepEqual(whileOpen.map((c) => c.index), [], 'inspect was called while the breaker was open');
    await untilSkipped(sentinel);

    const trial = await auth.call(trialCall, 10_000);
    const wait = trial.startedAt - tripping.startedAt;
    assert.ok(wait >= BREAKER.openMs - 1, `the trial started ${wait.toFixed(0)} ms after the tripping call: before openMs 300`);
    assert.equal(sentinel.readiness().status, 'degraded', 'an open breaker is an outage: degraded, evidence kept');

    trial.release('valid');
    const back = await transitions.next({ to: 'ready' });
    assert.deepEqual({ from: back.from, reason: back.reason }, { from: 'degraded', reason: 'verified' });
    const skippedBefore = skippedWhileOpen(sentinel);
    await auth.call(trialCall + 6, 10_000);
    assert.equal(skippedWhileOpen(sentinel), skippedBefore, 'a refresh was skipped after the trial closed the breaker');
    assert.equal(sentinel.readiness().status, 'ready');
  });

  test('readiness as usual: degraded, then not_ready / evidence_too_old when the window runs out, with only a few inspect calls', async () => {
    const madeAt = now(); // the window runs from the first call's send, after this
    const { auth, sentinel, transitions } = start(sequence(['valid'], 'indeterminate'), BREAKER);
    await transitions.waitFor({ to: 'ready' });
    const degraded = await transitions.waitFor({ to: 'degraded' });
    assert.deepEqual({ from: degraded.from, reason: degraded.reason }, { from: 'ready', reason: 'refresh_indeterminate' });
    const stale = await transitions.waitFor({ to: 'not_ready' }, { ms: 3000 });
    assert.deepEqual({ from: stale.from, reason: stale.reason }, { from: 'degraded', reason: 'evidence_too_old' });
    const r = sentinel.readiness();
    assert.deepEqual([r.status, r.reason, r.httpStatus], ['not_ready', 'evidence_too_old', 503]);
    assert.equal(sentinel.admit(), false);
    // Within 1 s of the sentinel's making (inside the window): 1 valid, 2 tripping, trials at
    // ≥ 0.3 s and ≥ 0.78 s after the trip. Without the breaker it would be 25-50 calls.
    const during = auth.calls.filter((c) => c.startedAt < madeAt + 1000).length;
    assert.ok(during <= 6, `${during} inspect calls within the 1 s window; the breaker did not hold them back`);
    await untilSkipped(sentinel);
  });

  for (const denial of ['invalid_credential', 'capability_missing']) {
    test(`a denial ('${denial}') is a definitive answer: it does not trip the breaker, calls keep coming`, async () => {
      const { auth, sentinel, transitions } = start(sequence(['valid'], denial), BREAKER);
      const event = await transitions.waitFor({ to: 'not_ready' });
      assert.equal(event.reason, denial);
      await auth.call(12, 10_000);
      assert.equal(skippedWhileOpen(sentinel), 0, 'a refresh was skipped: the denials opened the breaker');
      assert.equal(sentinel.readiness().reason, denial);
    });
  }
});

describe('refresh.breaker options', () => {
  test('refresh.breaker: true uses the defaults (5 consecutive failures, open 5 s)', async () => {
    const { auth, sentinel, transitions } = start(sequence(['valid'], 'indeterminate'), true);
    await transitions.waitFor({ to: 'degraded' });
    const fifth = await auth.call(5, 10_000); // 5 indeterminate answers: calls 1-5
    await quietPeriod(400); // without a breaker, 10-20 refreshes would start meanwhile
    // Open for 5 s from call 5's answer: no call may start within 5 s of call 5's start.
    const whileOpen = auth.calls.filter((c) => c.index > 5 && c.startedAt < fifth.startedAt + 5000);
    assert.deepEqual(whileOpen.map((c) => c.index), [], 'after 5 inconclusive refreshes the default breaker is open for 5 s');
    await untilSkipped(sentinel);
  });

  const BAD = [
    ['openMs', { openMs: 0 }],
    ['failureThreshold', { failureThreshold: -1 }],
    ['failureThreshold', { failureThreshold: 1.5 }],
    ['failureRateThreshold', { failureRateThreshold: 2 }],
    ['windowMs', { windowMs: 0 }],
    ['minimumCalls', { minimumCalls: 'many' }],
    ['maxOpenMs', { openMs: 2000, maxOpenMs: 1000 }],
    ['trialTimeoutMs', { trialTimeoutMs: -5 }],
    // Options of the JavaScript CircuitBreaker that make no sense for the refresh loop.
    ['timeoutMs', { timeoutMs: 100 }],
    ['isFailure', { isFailure: () => true }],
    ['name', { name: 'refresh' }],
    ['treshold', { treshold: 2 }],
  ];
  for (const [option, breaker] of BAD) {
    const shown = typeof breaker.isFailure === 'function' ? '{"isFailure":<function>}' : JSON.stringify(breaker);
    test(`refresh.breaker ${shown} fails with ERR_SPEND_SENTINEL_CONFIG naming refresh.breaker.${option}`, async () => {
      const auth = scriptedAuthority('valid');
      const err = catchError(() => pool.make({ ...fastOptions(auth), refresh: { ...FAST_REFRESH, breaker } }));
      assert.ok(err instanceof Error, `${err}`);
      assert.equal(err.code, 'ERR_SPEND_SENTINEL_CONFIG');
      assert.ok(err.message.includes(`refresh.breaker.${option}`), `message names refresh.breaker.${option}: ${err.message}`);
    });
  }

  for (const [label, breaker] of [['a string', 'yes'], ['null', null], ['a number', 1]]) {
    test(`refresh.breaker as ${label} fails with ERR_SPEND_SENTINEL_CONFIG naming refresh.breaker`, async () => {
      const auth = scriptedAuthority('valid');
      const err = catchError(() => pool.make({ ...fastOptions(auth), refresh: { ...FAST_REFRESH, breaker } }));
      assert.equal(err.code, 'ERR_SPEND_SENTINEL_CONFIG');
      assert.match(err.message, /refresh\.breaker\b/);
      await quietPeriod(50);
      assert.equal(auth.callCount, 0, 'no sentinel started: the authority was never called');
    });
  }

  for (const [label, breaker] of [['without refresh.breaker', undefined], ['with refresh.breaker: false', false]]) {
    test(`${label}, inspect keeps being called during an outage`, async () => {
      const { auth, sentinel, transitions } = start(sequence(['valid'], 'indeterminate'), breaker);
      await transitions.waitFor({ to: 'degraded' });
      await auth.call(15, 10_000);
      assert.equal(skippedWhileOpen(sentinel), 0, 'a refresh was skipped as if a breaker were open');
    });
  }
});
