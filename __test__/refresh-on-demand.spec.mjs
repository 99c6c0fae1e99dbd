// Refresh on demand (README, The refresh cadence) and readiness under load. When the ledger reaches
// half the node budget after a `valid` answer, the next refresh starts at once instead of after its
// pause, but no sooner than 100 ms after the previous refresh started; after any other outcome the
// usual pause applies. A spent budget is degraded (200), never not_ready: load alone never pulls
// the pod.
//
// The window here is 1000 s (b = 1000, r = 1), so the usual pauses last 300 to 500 s: every
// refresh after the first one seen during a test was started on demand. The exact timing (at once,
// no sooner than 100 ms after the previous start, not after an indeterminate, not with an open
// breaker) is tested on fake time in src/refresher/cadence_tests.rs; bench/load.mjs measures it
// with a real authority.
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { pollUntil, quietPeriod, recordTransitions, scriptedAuthority, sentinelPool } from './helpers/wait.mjs';
import { readExposition, valueOf } from './helpers/exposition.mjs';

const require = createRequire(import.meta.url);
const { Sentinel } = require('spend-sentinel');

const pool = sentinelPool(Sentinel);
afterEach(() => pool.closeAll());

const LONG_PAUSES = { unverifiedUnits: 1000, maxUnitsPerSecond: 1 };
const CALL_MS = 10_000; // generous: a loaded machine must not fail a test that waits for a call

function start(behaviour) {
  const auth = scriptedAuthority(behaviour);
  const sentinel = pool.make({ budget: LONG_PAUSES, authority: { inspect: auth.inspect } });
  const transitions = recordTransitions(sentinel);
  return { auth, sentinel, transitions };
}

const demandRefreshes = (sentinel) => valueOf(readExposition(sentinel.metrics()), 'spend_sentinel_refresh_on_demand_total');

describe('refresh on demand', () => {
  test('reaching half the node budget starts a refresh at once; the valid answer clears the ledger', async () => {
    const { auth, sentinel, transitions } = start('valid');
    await transitions.waitFor({ to: 'ready' });
    assert.equal(sentinel.staleWindowSeconds, 1000, 'premise: pauses of 300 to 500 s');
    assert.equal(sentinel.admit(499), true);
    assert.equal(auth.callCount, 1, 'under half: nothing asked');
    assert.equal(sentinel.admit(1), true, 'the ledger reaches 500 of 1000');
    await auth.call(1, CALL_MS);
    await pollUntil(() => sentinel.exposureUnits === 0, { ms: CALL_MS, label: 'the demand refresh to clear the ledger' });
    assert.equal(demandRefreshes(sentinel), 1);
    assert.equal(sentinel.readiness().reason, 'verified');
  });

  test('a burst far above the node budget is admitted through demand refreshes, and readiness never leaves 200 for it', async () => {
    const { auth, sentinel } = start('valid');
    await sentinel.whenReady({ timeoutMs: CALL_MS });
    let admitted = 0;
    const seen = new Set();
    // 20 units a turn of the event loop until more than twice the node budget of 1000 went
    // through: only refreshes on demand can clear the ledger meanwhile (the usual pauses are 300
    // to 500 s). Waited for, whatever the machine's speed: the bound only ends a hang.
    const goal = 2 * sentinel.nodeBudgetUnits;
    await pollUntil(
      () => {
        if (sentinel.admit(20)) admitted += 20;
        const { status, reason } = sentinel.readiness();
        seen.add(`${status}/${reason}`);
        return admitted > goal;
      },
      { ms: CALL_MS, everyMs: 1, label: () => `more than ${goal} units admitted (${admitted} so far; ${auth.callCount} calls, ${demandRefreshes(sentinel)} on demand)` },
    );
    assert.ok(auth.callCount >= 3, `${auth.callCount} calls`);
    assert.ok(demandRefreshes(sentinel) >= 2, 'refreshes on demand');
    const notReady = [...seen].filter((s) => s.startsWith('not_ready'));
    assert.deepEqual(notReady, [], `statuses seen: ${[...seen]}`);
  });

  for (const outcome of ['indeterminate', 'capability_missing']) {
    test(`after ${outcome} no refresh starts on demand: the usual pause applies`, async () => {
      const answers = ['valid', outcome];
      const { auth, sentinel, transitions } = start((call) => Promise.resolve(answers[call.index] ?? 'valid'));
      await transitions.waitFor({ to: 'ready' });
      // 300 units admitted beside a reservation of 400: half of the 600 the reservation leaves,
      // so a refresh starts on demand; it answers `outcome`.
      const reservation = sentinel.reserve(400);
      assert.ok(reservation, 'premise: reserved');
      assert.equal(sentinel.admit(300), true);
      await auth.call(1, CALL_MS);
      await transitions.waitFor({ from: 'ready' }, { ms: CALL_MS });
      assert.equal(demandRefreshes(sentinel), 1);
      reservation.release(); // 300 left: under half of the whole budget again
      assert.equal(sentinel.exposureUnits, 300);
      sentinel.charge(600); // past half again (a charge is recorded whatever readiness says)
      await quietPeriod(300); // a refresh on demand would start at once
      // The usual pause runs from call 1's answer (after it started) for 300 s at least.
      const early = auth.calls.filter((c) => c.index > 1 && c.startedAt < auth.calls[1].startedAt + 300_000);
      assert.deepEqual(early.map((c) => c.index), [], 'no call before the usual pause of 300 s or more');
      assert.equal(demandRefreshes(sentinel), 1);
    });
  }
});
