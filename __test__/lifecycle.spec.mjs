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

const { Sentinel } = createRequire(import.meta.url)('../js/main.js');

const READINESS_KEYS = ['evidenceAgeSeconds', 'httpStatus', 'reason', 'status'];
/** evidenceAgeSeconds is whole milliseconds, rounded: half a millisecond either way. */
const AGE_ROUNDING_S = 0.0005;
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
    // Window 1 h, pauses of 50 min: a first refresh that waited for a pause could not come within
    // the bound below (which only ends a hang). When exactly it goes is tested on fake time
    // (src/refresher/cadence_tests.rs: the first refresh goes at once).
    const auth = scriptedAuthority(held);
    const budget = { unverifiedUnits: 360_000, maxUnitsPerSecond: 100 };
    pool.make(fastOptions(auth, { budget, refresh: { minIntervalMs: 3_000_000, maxIntervalMs: 3_000_000, timeoutMs: 2000 } }));
    await auth.call(0, 60_000);
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
    const madeAt = now(); // the evidence is the first refresh, sent after this
    const { auth, sentinel } = start(held);
    let settled = false;
    // Its own timeout far away: only the valid answer can settle it within the quiet period.
    const ready = sentinel.whenReady({ timeoutMs: 60_000 }).finally(() => (settled = true));
    const first = await auth.call(0);
    await quietPeriod(50);
    assert.equal(settled, false, 'whenReady must wait for a valid answer');
    first.release('valid');
    const r = await withTimeout(ready, 10_000, 'whenReady');
    assertReadiness(r, 'ready', 'verified', 200);
    assert.equal(typeof r.evidenceAgeSeconds, 'number');
    const sinceMade = (now() - madeAt) / 1000;
    assert.ok(r.evidenceAgeSeconds >= 0 && r.evidenceAgeSeconds <= sinceMade + AGE_ROUNDING_S, `age ${r.evidenceAgeSeconds}, sentinel made ${sinceMade} s ago`);
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
    const err = await rejectionOf(sentinel.whenReady({ timeoutMs: 200 }), 10_000, 'whenReady timeout');
    assert.ok(err instanceof Error);
    assert.equal(err.code, 'ERR_SPEND_SENTINEL_TIMEOUT');
    assert.ok(now() - t0 >= 180, `rejected after ${now() - t0} ms, before timeoutMs 200`);
    await auth.nextCall(10_000); // refreshing goes on: whenReady's timeout stops nothing
    assertReadiness(sentinel.readiness(), 'not_ready', 'no_evidence', 503);
  });

  test('whenReady rejects with ERR_SPEND_SENTINEL_CLOSED when closed, also while pending', async () => {
    const { sentinel } = start(held);
    const TIMEOUT = 5000;
    const pending = sentinel.whenReady({ timeoutMs: TIMEOUT });
    sentinel.close();
    // Nothing answers (held), so only close() or whenReady's own timeout can settle it; the bound
    // is above that timeout, so one that waited for it shows as ERR_SPEND_SENTINEL_TIMEOUT.
    const pendingErr = await rejectionOf(pending, 3 * TIMEOUT, 'pending whenReady after close');
    assert.equal(pendingErr.code, 'ERR_SPEND_SENTINEL_CLOSED', 'settled by close(), not by its own timeout');
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
    const madeAt = now(); // the evidence is the first refresh, sent after this
    const { auth, transitions } = start(held);
    (await auth.call(0)).release('valid');
    const event = await transitions.waitFor({ to: 'ready' });
    assert.deepEqual(Object.keys(event).sort(), EVENT_KEYS);
    assert.deepEqual({ from: event.from, reason: event.reason }, { from: 'not_ready', reason: 'verified' });
    const sinceMade = (event.at - madeAt) / 1000; // the age was taken before the event arrived
    assert.ok(event.evidenceAgeSeconds >= 0 && event.evidenceAgeSeconds <= sinceMade + AGE_ROUNDING_S, `age ${event.evidenceAgeSeconds}, sentinel made ${sinceMade} s before`);
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
    // only by timeout (1.5 s): at ~1.56 s and ~3.1 s, away from the 2 s deadline. That the change
    // is reported at the very moment the window runs out (the watcher's own timer, no refresh near
    // it) is tested on fake time: src/refresher/cadence_tests.rs,
    // the_change_to_not_ready_is_reported_the_moment_the_window_runs_out_with_no_refresh_near_it.
    // Here: the event, its order and its lower bounds (not before the window ran out).
    const WINDOW_MS = 2000;
    const madeAt = now(); // the evidence (the first refresh) was sent after this
    const { sentinel, transitions } = start(sequence(['valid', 'indeterminate'], never), {
      budget: { unverifiedUnits: 200, maxUnitsPerSecond: 100 },
      refresh: { minIntervalMs: 20, maxIntervalMs: 40, timeoutMs: 1500 },
    });
    const ready = await transitions.waitFor({ to: 'ready' });
    const degraded = await transitions.waitFor({ from: 'ready', to: 'degraded' });
    const stale = await transitions.waitFor({ to: 'not_ready' }, { ms: 10 * WINDOW_MS });
    assert.deepEqual({ from: stale.from, reason: stale.reason }, { from: 'degraded', reason: 'evidence_too_old' });
    const order = [ready, degraded, stale].map((e) => transitions.events.indexOf(e));
    assert.deepEqual(order, [0, 1, 2], `ready, degraded, then not_ready: ${JSON.stringify(transitions.events)}`);
    assert.ok(stale.evidenceAgeSeconds >= WINDOW_MS / 1000, `evidenceAgeSeconds ${stale.evidenceAgeSeconds}: reported before the 2 s window ran out`);
    assert.ok(stale.at - madeAt >= WINDOW_MS, `arrived ${(stale.at - madeAt).toFixed(0)} ms after the sentinel was made, before the 2 s window could run out`);
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
    const madeAt = now(); // the evidence (the first refresh) was sent after this …
    const { auth, sentinel } = await startReady('indeterminate', { budget: ROOMY.budget });
    await auth.call(12);
    const readFrom = now();
    const r = sentinel.readiness();
    const readBy = now();
    assertReadiness(r, 'degraded', 'refresh_indeterminate', 200);
    // … and before its inspect call started: so the age read is within these measured bounds,
    // and at least the time since call 0 began (the indeterminate answers did not renew it).
    const [low, high] = [(readFrom - auth.calls[0].startedAt) / 1000, (readBy - madeAt) / 1000];
    assert.ok(
      r.evidenceAgeSeconds >= low - AGE_ROUNDING_S && r.evidenceAgeSeconds <= high + AGE_ROUNDING_S,
      `age ${r.evidenceAgeSeconds}, expected within [${low.toFixed(4)}, ${high.toFixed(4)}]: the age of the first (valid) answer`,
    );
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
  /** A CommonJS script: ready, then nothing to do until a refresh 50 min away; no close(). */
  const IDLE_CHILD = `
    const { Sentinel } = require(${JSON.stringify(fileURLToPath(new URL('../js/main.js', import.meta.url)))});
    let calls = 0;
    const s = new Sentinel({
      budget: { unverifiedUnits: 360000, maxUnitsPerSecond: 100 },
      refresh: { minIntervalMs: 3000000, maxIntervalMs: 3000000, timeoutMs: 2000 },
      authority: { inspect: async () => { calls += 1; return 'valid'; } },
    });
    process.on('exit', () => console.log('inspect calls: ' + calls));
    s.whenReady({ timeoutMs: 30000 }).then((r) => console.log(r.status));
  `;

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
    const children = await Promise.all(Array.from({ length: 24 }, () => runNode([CHILD, 'ready'], { timeoutMs: 60_000 })));
    const failed = children.filter((c) => c.code !== 0 || c.stdout.trim() !== 'ready');
    assert.deepEqual(
      failed.map((c) => `exit ${c.code}: ${c.stderr.trim().split('\n')[0]}`),
      [],
      `${failed.length} of 24 fresh processes never saw whenReady resolve`,
    );
  });

  test('a child process exits without waiting for the next scheduled refresh (50 min away)', async () => {
    // Window 1 h, pauses of 50 min: a child held by its pending refresh would still be running at
    // the bound (which only ends a hang), and one let go only when that refresh ran would have
    // made a second inspect call.
    const child = await runNode(['-e', IDLE_CHILD], { timeoutMs: 60_000 });
    assert.equal(child.timedOut, false, `the child did not exit by itself within 60 s: the pending refresh (50 min away) held the event loop; stdout: ${child.stdout}`);
    assert.equal(child.code, 0, `exit code ${child.code}; stderr: ${child.stderr}`);
    assert.deepEqual(child.stdout.trim().split('\n'), ['ready', 'inspect calls: 1']);
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
