// Evidence, readiness, admission and lifecycle (README) through the `authority: { inspect }` form: a scripted JS authority the test
// controls, fast timings (window 1 s unless a test says otherwise), no server.
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import {
  catchError,
  closedPort,
  fastOptions,
  never,
  quietPeriod,
  recordTransitions,
  rejectionOf,
  runNode,
  scriptedAuthority,
  sentinelPool,
  sequence,
  held,
  now,
  withTimeout,
} from './helpers/wait.mjs';

const { Sentinel } = createRequire(import.meta.url)('../binding.js');

const READINESS_KEYS = ['evidenceAgeSeconds', 'httpStatus', 'reason', 'status'];
const EVENT_KEYS = ['evidenceAgeSeconds', 'from', 'reason', 'to'];
/** Window 10 s, node budget 1000, long refresh timeout: held refreshes stay in flight for the whole test. */
const ROOMY = { budget: { unverifiedUnits: 1000, maxUnitsPerSecond: 100 }, refresh: { timeoutMs: 5000 } };
/** Long enough for several refresh cycles at FAST timings (pause ≤ 40 ms, timeout 300 ms). */
const QUIET_MS = 400;

const pool = sentinelPool(Sentinel);
afterEach(() => pool.closeAll());

/** A sentinel on a scripted authority, with its transitions recorded from construction on. */
function start(behaviour, over) {
  const auth = scriptedAuthority(behaviour);
  const sentinel = pool.make(fastOptions(auth, over));
  const transitions = recordTransitions(sentinel);
  return { auth, sentinel, transitions };
}

/** Like `start`, but the first answer is 'valid' and `then` decides later calls; resolves once ready. */
async function startReady(then = held, over) {
  const ctx = start(sequence(['valid'], then), over);
  await ctx.transitions.waitFor({ to: 'ready' });
  return ctx;
}

function assertReadiness(actual, status, reason, httpStatus) {
  assert.deepEqual(Object.keys(actual).sort(), READINESS_KEYS, 'readiness has exactly four keys');
  assert.equal(actual.status, status, `status (reason ${actual.reason})`);
  assert.equal(actual.reason, reason);
  assert.equal(actual.httpStatus, httpStatus);
}

describe('refresh scheduling', () => {
  test('the first refresh is not delayed by a large minIntervalMs', async () => {
    const auth = scriptedAuthority(held);
    const t0 = now();
    // window 10 s: minIntervalMs 5000 is allowed (6000 + 2000 < 10000)
    pool.make(fastOptions(auth, { budget: ROOMY.budget, refresh: { minIntervalMs: 5000, maxIntervalMs: 6000, timeoutMs: 2000 } }));
    const first = await auth.call(0, 1000);
    assert.ok(first.startedAt - t0 < 1000, `first inspect after ${first.startedAt - t0} ms`);
  });

  test('refreshes never overlap', async () => {
    const slowValid = () => new Promise((resolve) => setTimeout(resolve, 60, 'valid'));
    const { auth } = start(slowValid, { refresh: { minIntervalMs: 20, maxIntervalMs: 25, timeoutMs: 300 } });
    await auth.call(7, 5000);
    assert.equal(auth.maxConcurrent, 1, 'at most one inspect call in flight');
    for (const [i, call] of auth.calls.entries()) {
      if (i === 0 || call.index > 7) continue;
      const previous = auth.calls[i - 1];
      assert.ok(previous.settledAt !== null && call.startedAt >= previous.settledAt, `call #${i} started before #${i - 1} settled`);
    }
  });
});

describe('readiness and whenReady', () => {
  test('before the first valid answer: not_ready / no_evidence, age null, 503', async () => {
    const { auth, sentinel } = start(held);
    await auth.call(0);
    const r = sentinel.readiness();
    assertReadiness(r, 'not_ready', 'no_evidence', 503);
    assert.equal(r.evidenceAgeSeconds, null);
    assert.equal(sentinel.status(), 'not_ready');
  });

  test('whenReady resolves with the readiness object once a valid answer arrives', async () => {
    const { auth, sentinel } = start(held);
    let settled = false;
    const ready = sentinel.whenReady({ timeoutMs: 3000 }).finally(() => (settled = true));
    const first = await auth.call(0);
    await quietPeriod(50);
    assert.equal(settled, false, 'whenReady must wait for a valid answer');
    first.release('valid');
    const r = await withTimeout(ready, 4000, 'whenReady');
    assertReadiness(r, 'ready', 'verified', 200);
    assert.equal(typeof r.evidenceAgeSeconds, 'number');
    assert.ok(r.evidenceAgeSeconds >= 0 && r.evidenceAgeSeconds < 1, `age ${r.evidenceAgeSeconds}`);
    assert.equal(sentinel.status(), 'ready');
  });

  test('whenReady resolves at once when already ready, and with degraded readiness too', async () => {
    const { auth, sentinel, transitions } = await startReady(held);
    assertReadiness(await withTimeout(sentinel.whenReady({ timeoutMs: 1000 }), 2000, 'whenReady (ready)'), 'ready', 'verified', 200);
    (await auth.call(1)).release('indeterminate');
    await transitions.waitFor({ to: 'degraded' });
    assertReadiness(await withTimeout(sentinel.whenReady({ timeoutMs: 1000 }), 2000, 'whenReady (degraded)'), 'degraded', 'refresh_indeterminate', 200);
  });

  test('whenReady rejects with ERR_SPEND_SENTINEL_TIMEOUT while the authority stays indeterminate', async () => {
    const { auth, sentinel } = start('indeterminate');
    const t0 = now();
    const err = await rejectionOf(sentinel.whenReady({ timeoutMs: 200 }), 3000, 'whenReady timeout');
    assert.ok(err instanceof Error);
    assert.equal(err.code, 'ERR_SPEND_SENTINEL_TIMEOUT');
    assert.ok(now() - t0 >= 180, `rejected after ${now() - t0} ms, before timeoutMs 200`);
    assert.ok(auth.callCount >= 2, 'refreshes went on meanwhile');
    assertReadiness(sentinel.readiness(), 'not_ready', 'no_evidence', 503);
  });

  test('whenReady rejects with ERR_SPEND_SENTINEL_CLOSED when closed, also while pending', async () => {
    const { sentinel } = start(held);
    const pending = sentinel.whenReady({ timeoutMs: 5000 });
    sentinel.close();
    const t0 = now();
    const pendingErr = await rejectionOf(pending, 6000, 'pending whenReady after close');
    assert.equal(pendingErr.code, 'ERR_SPEND_SENTINEL_CLOSED');
    assert.ok(now() - t0 < 1000, 'a pending whenReady settles promptly on close, not at its own timeout');
    const laterErr = await rejectionOf(sentinel.whenReady({ timeoutMs: 5000 }), 2000, 'whenReady after close');
    assert.equal(laterErr.code, 'ERR_SPEND_SENTINEL_CLOSED');
  });
});

describe('drain and close', () => {
  test('drain(): shutting_down / 503, admission and refreshes go on', async () => {
    const { auth, sentinel, transitions } = await startReady('valid');
    sentinel.drain();
    assertReadiness(sentinel.readiness(), 'not_ready', 'shutting_down', 503);
    assert.equal(sentinel.status(), 'not_ready');
    const event = await transitions.waitFor({ to: 'not_ready' });
    assert.deepEqual({ from: event.from, reason: event.reason }, { from: 'ready', reason: 'shutting_down' });
    assert.equal(sentinel.admit(), true, 'draining does not stop admission');
    await auth.nextCall();
    await auth.nextCall();
    sentinel.drain();
    assertReadiness(sentinel.readiness(), 'not_ready', 'shutting_down', 503);
    assert.equal(sentinel.admit(2), true);
  });

  test('close(): shutting_down, admit false, idempotent, no inspect call starts afterwards', async () => {
    // indeterminate answers keep refreshes going without ever clearing the ledger
    const { auth, sentinel } = await startReady('indeterminate');
    assert.equal(sentinel.admit(3), true);
    sentinel.close();
    const callsAtClose = auth.callCount;
    assertReadiness(sentinel.readiness(), 'not_ready', 'shutting_down', 503);
    assert.equal(sentinel.admit(1), false);
    assert.equal(sentinel.admit(0), false);
    assert.equal(sentinel.exposureUnits, 3, 'a refused admission changes nothing');
    assert.doesNotThrow(() => sentinel.close());
    assert.doesNotThrow(() => sentinel.drain());
    await quietPeriod(QUIET_MS);
    assert.equal(auth.callCount, callsAtClose, 'inspect was called after close() returned');
    assertReadiness(sentinel.readiness(), 'not_ready', 'shutting_down', 503);
  });

  test('a valid answer arriving after close() does not revive the sentinel', async () => {
    const { auth, sentinel } = await startReady(held);
    const inFlight = await auth.call(1);
    sentinel.close();
    inFlight.release('valid');
    await quietPeriod(QUIET_MS);
    assertReadiness(sentinel.readiness(), 'not_ready', 'shutting_down', 503);
    assert.equal(sentinel.admit(), false);
    assert.equal(auth.callCount, 2, 'no inspect call after close()');
  });
});

describe('transitions (onTransition)', () => {
  test('not_ready → ready with { from, to, reason, evidenceAgeSeconds }', async () => {
    const { auth, transitions } = start(held);
    (await auth.call(0)).release('valid');
    const event = await transitions.waitFor({ to: 'ready' });
    assert.deepEqual(Object.keys(event).sort(), EVENT_KEYS);
    assert.deepEqual({ from: event.from, reason: event.reason }, { from: 'not_ready', reason: 'verified' });
    assert.ok(event.evidenceAgeSeconds >= 0 && event.evidenceAgeSeconds < 1, `age ${event.evidenceAgeSeconds}`);
  });

  test('ready → degraded on an indeterminate answer', async () => {
    const { auth, transitions } = await startReady(held);
    (await auth.call(1)).release('indeterminate');
    const event = await transitions.waitFor({ to: 'degraded' });
    assert.deepEqual({ from: event.from, reason: event.reason }, { from: 'ready', reason: 'refresh_indeterminate' });
    assert.equal(typeof event.evidenceAgeSeconds, 'number');
  });

  test('degraded → not_ready when the window runs out, with no refresh completing near that moment', async () => {
    // Window 2 s. After 'valid' then 'indeterminate' the authority never answers, so refreshes end
    // only by timeout (1.5 s): at ~1.56 s and ~3.1 s, far from the 2 s deadline.
    const WINDOW_MS = 2000;
    const { auth, sentinel, transitions } = start(sequence(['valid', 'indeterminate'], never), {
      budget: { unverifiedUnits: 200, maxUnitsPerSecond: 100 },
      refresh: { minIntervalMs: 20, maxIntervalMs: 40, timeoutMs: 1500 },
    });
    await transitions.waitFor({ to: 'ready' });
    await transitions.waitFor({ from: 'ready', to: 'degraded' });
    const evidenceSentBy = auth.calls[0].startedAt; // evidence time is the send, at or before this
    const stale = await transitions.waitFor({ to: 'not_ready' }, { ms: WINDOW_MS + 2000 });
    assert.deepEqual({ from: stale.from, reason: stale.reason }, { from: 'degraded', reason: 'evidence_too_old' });
    const lateMs = stale.at - evidenceSentBy - WINDOW_MS;
    assert.ok(lateMs <= 250, `arrived ${lateMs.toFixed(0)} ms after the window ran out (SPEC: within 50 ms)`);
    assert.ok(
      stale.evidenceAgeSeconds >= 2 && stale.evidenceAgeSeconds <= 2.25,
      `evidenceAgeSeconds ${stale.evidenceAgeSeconds} should be ≈ the 2 s window`,
    );
    const nearby = auth.calls.filter((c) => c.startedAt > stale.at - 200 && c.startedAt <= stale.at);
    assert.equal(nearby.length, 0, 'test design: no refresh completed just before the event');
    assertReadiness(sentinel.readiness(), 'not_ready', 'evidence_too_old', 503);
    assert.equal(sentinel.admit(1), false, 'no admission on evidence that is too old');
    for (let i = 1; i < transitions.events.length; i += 1) {
      assert.equal(transitions.events[i].from, transitions.events[i - 1].to, 'events chain');
    }
  });

  for (const denial of ['invalid_credential', 'capability_missing']) {
    test(`ready → not_ready on '${denial}'; indeterminate keeps the denial; valid clears it`, async () => {
      const { auth, sentinel, transitions } = await startReady(held, { budget: ROOMY.budget, refresh: ROOMY.refresh });
      (await auth.call(1)).release(denial);
      const event = await transitions.waitFor({ to: 'not_ready' });
      assert.deepEqual({ from: event.from, reason: event.reason }, { from: 'ready', reason: denial });
      assert.equal(sentinel.admit(), false, 'no admission under a denial');
      for (const index of [2, 3, 4]) (await auth.call(index)).release('indeterminate');
      await auth.call(5);
      const r = sentinel.readiness();
      assertReadiness(r, 'not_ready', denial, 503);
      assert.equal(typeof r.evidenceAgeSeconds, 'number', 'evidence age is still reported');
      auth.calls[5].release('valid');
      const back = await transitions.waitFor({ from: 'not_ready', to: 'ready' }, { from: transitions.events.indexOf(event) + 1 });
      assert.equal(back.reason, 'verified');
    });
  }

  test('the remover stops delivery to that listener only, and may be called twice', async () => {
    const { auth, sentinel } = start(held);
    const removed = recordTransitions(sentinel);
    const kept = recordTransitions(sentinel);
    removed.remove();
    assert.doesNotThrow(() => removed.remove());
    (await auth.call(0)).release('valid');
    await kept.waitFor({ to: 'ready' });
    (await auth.call(1)).release('invalid_credential');
    await kept.waitFor({ to: 'not_ready' });
    assert.deepEqual(removed.events, []);
  });

  test('a listener that throws does not crash the process; other listeners still get events', async () => {
    const child = await runNode([fileURLToPath(new URL('./fixtures/child.mjs', import.meta.url)), 'throwing-listener']);
    assert.equal(child.timedOut, false, `child hung; stderr: ${child.stderr}`);
    assert.equal(child.code, 0, `child exit code ${child.code}; stderr: ${child.stderr}`);
    assert.deepEqual(JSON.parse(child.stdout.trim().split('\n').at(-1)), [
      'not_ready->ready:verified',
      'ready->not_ready:invalid_credential',
    ]);
  });
});

describe('inspect failures count as indeterminate', () => {
  const FAILURES = [
    ['throws synchronously', () => { throw new Error('boom'); }],
    ['rejects with an Error', () => Promise.reject(new Error('boom'))],
    ["rejects with the string 'valid'", () => Promise.reject('valid')],
    ["resolves to 'VALID'", () => Promise.resolve('VALID')],
    ["resolves to 'valid ' (trailing space)", () => Promise.resolve('valid ')],
    ["resolves to 'ok'", () => Promise.resolve('ok')],
    ['resolves to an empty string', () => Promise.resolve('')],
    ['resolves to undefined', () => Promise.resolve(undefined)],
    ['resolves to null', () => Promise.resolve(null)],
    ['resolves to 42', () => Promise.resolve(42)],
    ["resolves to { outcome: 'valid' }", () => Promise.resolve({ outcome: 'valid' })],
    ["resolves to ['valid']", () => Promise.resolve(['valid'])],
    ["returns a non-outcome string without a promise", () => 'bogus'],
    ['never settles (refresh.timeoutMs)', never],
  ];

  for (const [name, behaviour] of FAILURES) {
    test(`inspect ${name} → degraded / refresh_indeterminate`, async () => {
      const { sentinel, transitions } = await startReady(behaviour);
      const event = await transitions.waitFor({ to: 'degraded' });
      assert.deepEqual({ from: event.from, reason: event.reason }, { from: 'ready', reason: 'refresh_indeterminate' });
      assertReadiness(sentinel.readiness(), 'degraded', 'refresh_indeterminate', 200);
    });
  }

  test('a throwing inspect from the start leaves no_evidence and refreshing goes on', async () => {
    const { auth, sentinel } = start(() => {
      throw new Error('boom');
    });
    await auth.call(3);
    assertReadiness(sentinel.readiness(), 'not_ready', 'no_evidence', 503);
  });

  test('never-settling inspect calls do not stop the loop: each is cut off and the next one follows', async () => {
    // When (timeoutMs after it was sent, then a pause) is tested on fake time in
    // src/refresher/cadence_tests.rs; here hung JavaScript calls must not block the later ones.
    const { auth, sentinel } = start(never);
    await auth.call(2, 5000);
    assertReadiness(sentinel.readiness(), 'not_ready', 'no_evidence', 503);
  });

  test('repeated indeterminate answers keep the evidence and never become a denial', async () => {
    const { auth, sentinel } = await startReady('indeterminate', { budget: ROOMY.budget });
    await auth.call(12);
    const r = sentinel.readiness();
    assertReadiness(r, 'degraded', 'refresh_indeterminate', 200);
    const expectedAge = (now() - auth.calls[0].startedAt) / 1000;
    assert.ok(Math.abs(r.evidenceAgeSeconds - expectedAge) < 0.2, `age ${r.evidenceAgeSeconds} vs ≈${expectedAge.toFixed(3)}`);
    assert.equal(sentinel.admit(), true, 'degraded still admits');
  });
});

describe('admission', () => {
  // ROOMY: node budget 1000, window 10 s; later refreshes are held so the ledger moves only when we say.
  const readyHeld = () => startReady(held, ROOMY);

  test('admit is refused before any evidence', async () => {
    const { auth, sentinel } = start(held, ROOMY);
    await auth.call(0);
    assert.equal(sentinel.admit(), false);
    assert.equal(sentinel.exposureUnits, 0);
  });

  test('admit() defaults to 1; fractions and 0 are fine', async () => {
    const { sentinel } = await readyHeld();
    assert.equal(sentinel.admit(), true);
    assert.equal(sentinel.exposureUnits, 1);
    assert.equal(sentinel.admit(undefined), true);
    assert.equal(sentinel.exposureUnits, 2);
    assert.equal(sentinel.admit(0.5), true);
    assert.equal(sentinel.admit(0), true);
    assert.equal(sentinel.exposureUnits, 2.5);
  });

  const NOT_UNITS = [
    ['-1', -1], ['NaN', NaN], ["'1'", '1'], ['Infinity', Infinity], ['-Infinity', -Infinity],
    ['null', null], ['{}', {}], ['1n', 1n], ['true', true],
  ];
  for (const [label, units] of NOT_UNITS) {
    test(`admit(${label}) throws a TypeError and changes nothing`, async () => {
      const { sentinel } = await readyHeld();
      assert.equal(sentinel.admit(5), true);
      const err = catchError(() => sentinel.admit(units));
      assert.ok(err instanceof TypeError, `expected TypeError, got ${err}`);
      assert.equal(err.code, 'ERR_SPEND_SENTINEL_UNITS');
      const got = typeof units === 'number' ? String(units) : units === null ? 'null' : typeof units;
      assert.equal(err.message, `units: must be a finite number ≥ 0 (got ${got})`);
      // One rule: the prototype's method and refusalReason refuse it with the same words.
      for (const call of [() => Sentinel.prototype.admit.call(sentinel, units), () => sentinel.refusalReason(units)]) {
        const same = catchError(call);
        assert.ok(same instanceof TypeError, `expected TypeError, got ${same}`);
        assert.equal(same.code, 'ERR_SPEND_SENTINEL_UNITS');
        assert.equal(same.message, err.message);
      }
      assert.equal(sentinel.exposureUnits, 5);
      assertReadiness(sentinel.readiness(), 'ready', 'verified', 200);
    });
  }

  test('a request larger than the node budget is refused; exactly the node budget is admitted', async () => {
    const { sentinel } = await readyHeld();
    assert.equal(sentinel.nodeBudgetUnits, 1000);
    assert.equal(sentinel.admit(1000.5), false);
    assert.equal(sentinel.admit(1e9), false);
    assert.equal(sentinel.exposureUnits, 0);
    assert.equal(sentinel.admit(1000), true);
    assert.equal(sentinel.exposureUnits, 1000);
  });

  test('up to the node budget, then refused; budget_exhausted (degraded: the pod stays routed); units admitted during a refresh stay, the next refresh clears them', async () => {
    const { auth, sentinel, transitions } = await readyHeld();
    const inFlight = await auth.call(1); // sent before the admissions below
    assert.equal(sentinel.admit(600), true);
    assert.equal(sentinel.admit(400), true);
    assert.equal(sentinel.exposureUnits, 1000);
    assert.equal(sentinel.admit(1), false);
    assert.equal(sentinel.refusalReason(1), 'budget_exhausted');
    assert.equal(sentinel.admit(0), true, 'ledger + 0 ≤ node budget: zero units still fit a budget spent exactly');
    assert.equal(sentinel.exposureUnits, 1000);
    assertReadiness(sentinel.readiness(), 'degraded', 'budget_exhausted', 200);
    const exhausted = await transitions.waitFor({ to: 'degraded' });
    assert.deepEqual({ from: exhausted.from, reason: exhausted.reason }, { from: 'ready', reason: 'budget_exhausted' });

    inFlight.release('valid');
    // Starts once call #1's outcome was applied: at once, on demand (the ledger is past half).
    const following = await auth.call(2);
    assert.equal(sentinel.exposureUnits, 1000, 'units admitted while a refresh was in flight stay in the ledger');
    assertReadiness(sentinel.readiness(), 'degraded', 'budget_exhausted', 200);

    following.release('valid');
    const recovered = await transitions.waitFor({ from: 'degraded', to: 'ready' }, { from: transitions.events.indexOf(exhausted) + 1 });
    assert.equal(recovered.reason, 'verified');
    assert.equal(sentinel.exposureUnits, 0, 'the ledger drops after a valid refresh sent after the admissions');
    assert.equal(sentinel.admit(1), true);
  });
});

describe('process and worker lifetime without close()', () => {
  const CHILD = fileURLToPath(new URL('./fixtures/child.mjs', import.meta.url));

  const MODES = [
    ['ready, with a listener', 'ready'],
    ['ended during the first refresh', 'immediate'],
    ['authority never answers', 'hanging-inspect'],
    ['HTTP form against a closed port', 'http'],
  ];
  for (const [name, mode] of MODES) {
    test(`a child process exits by itself (${name})`, async () => {
      const args = mode === 'http' ? [CHILD, mode, String(await closedPort())] : [CHILD, mode];
      const child = await runNode(args, { timeoutMs: 15000 });
      assert.equal(child.timedOut, false, `child did not exit within 15 s; stdout: ${child.stdout}`);
      assert.equal(child.code, 0, `exit code ${child.code}; stderr: ${child.stderr}`);
    });
  }

  test('fresh processes whose first answer is immediate all see whenReady resolve (24 at once)', async () => {
    // Races between the first refresh and the start of the transition watcher show up only now
    // and then, so many fresh processes run side by side.
    const children = await Promise.all(Array.from({ length: 24 }, () => runNode([CHILD, 'ready'], { timeoutMs: 30000 })));
    const failed = children.filter((c) => c.code !== 0 || c.stdout.trim() !== 'ready');
    assert.deepEqual(
      failed.map((c) => `exit ${c.code}: ${c.stderr.trim().split('\n')[0]}`),
      [],
      `${failed.length} of 24 fresh processes never saw whenReady resolve`,
    );
  });

  test('a child process exits without waiting for the next scheduled refresh (5-6 s away)', async () => {
    const child = await runNode([CHILD, 'idle'], { timeoutMs: 15000 });
    assert.equal(child.code, 0, `exit code ${child.code}; stderr: ${child.stderr}`);
    assert.equal(child.stdout.trim(), 'ready');
    assert.ok(child.elapsedMs < 4500, `child took ${child.elapsedMs.toFixed(0)} ms: the pending refresh held the event loop`);
  });

  test('a worker thread that creates a sentinel and ends exits by itself', async () => {
    const worker = new Worker(new URL('./fixtures/worker-sentinel.mjs', import.meta.url));
    try {
      const message = new Promise((resolve) => worker.once('message', resolve));
      const exit = new Promise((resolve, reject) => {
        worker.once('exit', resolve);
        worker.once('error', reject);
      });
      assert.equal(await withTimeout(message, 10000, 'worker ready message'), 'ready');
      assert.equal(await withTimeout(exit, 10000, 'worker exit'), 0);
    } finally {
      await worker.terminate();
    }
  });

  test('a child whose workers end or are terminated mid-refresh exits cleanly', async () => {
    const child = await runNode([CHILD, 'workers'], { timeoutMs: 20000 });
    assert.equal(child.timedOut, false, `child did not exit; stdout: ${child.stdout}`);
    assert.equal(child.code, 0, `exit code ${child.code}; stderr: ${child.stderr}`);
    assert.match(child.stdout, /natural exit 0/);
    assert.match(child.stdout, /terminated/);
  });
});
