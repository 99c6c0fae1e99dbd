// CircuitBreaker (js/breaker.js over the native BreakerCore), end to end from JavaScript: the
// defects of popular Node breakers (issue text) reproduced against this one and shown absent,
// plus the JS-side behaviour (timeout + AbortSignal, isFailure, the refusal error, listeners,
// options). The rule-by-rule state machine is covered by the Rust tests in src/rules/breaker.rs.
//
// The breaker has no timers: its state is computed when read. Tests let time pass with small
// option values and `pollUntil` on the state or stats; `quietPeriod` only asserts an absence.
// A refusal's retryAfterMs is checked against the time measured around the call that set the
// deadline (`elapsed`), never against how little time a test expects to take. The per-call
// timeout is a JavaScript timer, so its exact moment is checked on `mock.timers`; so is a breaker
// given the `now` option, whose every decision is at the time that clock reads.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import {
  catchError,
  deferred,
  never,
  now,
  pollUntil,
  quietPeriod,
  rejectionOf,
  runNode,
  untilPast,
  withTimeout,
} from './helpers/wait.mjs';

const require = createRequire(import.meta.url);
const { CircuitBreaker, CircuitOpenError } = require('spend-sentinel');

const ZERO_STATS = Object.freeze({
  successes: 0,
  failures: 0,
  timeouts: 0,
  ignored: 0,
  rejected: 0,
  bulkheadRejected: 0,
  stale: 0,
  trialTimeouts: 0,
  opened: 0,
  consecutiveFailures: 0,
  windowCalls: 0,
  windowFailures: 0,
  retryAfterMs: null,
});

const down = () => Promise.reject(new Error('down'));

/**
 * Asserts `retryAfterMs` of a refusal that came at most `elapsed` ms after the moment its
 * deadline was set `periodMs` ahead (at most `periodMs` and at least `lowMs`, the period's
 * shortest jittered value): what is left of the period, whatever the machine's speed.
 * Whole milliseconds, rounded up: 1 ms of slack below.
 */
function assertRetryAfter(retryAfterMs, { periodMs, lowMs = periodMs, elapsed }, what) {
  assert.ok(
    retryAfterMs <= periodMs && retryAfterMs >= lowMs - elapsed - 1 && retryAfterMs > 0,
    `${what}: retryAfterMs ${retryAfterMs}, expected within [${lowMs} - ${elapsed.toFixed(1)} ms elapsed, ${periodMs}]`,
  );
}

/** Fires a failing call and returns its rejection (which must be `fn`'s own error). */
async function failOnce(breaker, error = new Error('down')) {
  const err = await rejectionOf(breaker.fire(() => Promise.reject(error)), 2000, 'failing fire');
  assert.equal(err, error, 'fire rejects with the error fn rejected with');
}

/** Resolves with the CircuitOpenError of a refused fire (fails if fn runs). */
async function refusalOf(breaker, label = 'refused fire') {
  const err = await rejectionOf(
    breaker.fire(() => {
      throw new Error(`${label}: fn ran although the breaker should refuse`);
    }),
    2000,
    label,
  );
  assert.ok(err instanceof CircuitOpenError, `${label}: expected CircuitOpenError, got ${err}`);
  return err;
}

const untilState = (breaker, state, ms = 2000) =>
  pollUntil(() => breaker.state === state, { ms, label: () => `state ${state}; now ${breaker.state}, stats ${JSON.stringify(breaker.stats)}` });

/** Breaker listener recording `{ ...event, stateInside }`. */
function recordChanges(breaker) {
  const events = [];
  const remove = breaker.onStateChange((event) => {
    events.push({ ...event, stateInside: breaker.state });
  });
  return { events, remove };
}

describe('package exports', () => {
  test('CommonJS require and ESM import of spend-sentinel give the same CircuitBreaker and CircuitOpenError', async () => {
    assert.equal(typeof CircuitBreaker, 'function');
    assert.equal(typeof CircuitOpenError, 'function');
    const esm = await import('spend-sentinel');
    assert.equal(esm.CircuitBreaker, CircuitBreaker);
    assert.equal(esm.CircuitOpenError, CircuitOpenError);
    const breaker = new esm.CircuitBreaker({ name: 'esm' });
    assert.ok(breaker instanceof CircuitBreaker);
    assert.equal(breaker.name, 'esm');
    assert.equal(breaker.state, 'closed');
    assert.deepEqual(breaker.stats, ZERO_STATS);
  });
});

describe('defects of other breakers, absent here', () => {
  test('hung trial: a trial that never settles expires after trialTimeoutMs; the breaker reopens, then grants a new trial', async () => {
    const [OPEN, TRIAL] = [300, 50];
    const breaker = new CircuitBreaker({ failureThreshold: 1, openMs: OPEN, maxOpenMs: 1000, trialTimeoutMs: TRIAL });
    await failOnce(breaker);
    assert.equal(breaker.state, 'open');
    await untilState(breaker, 'half_open');

    let trialCalls = 0;
    const trialFrom = now();
    const hung = breaker.fire(() => {
      trialCalls += 1;
      return never();
    });
    hung.catch(() => {}); // it never settles; nothing to observe
    assert.equal(trialCalls, 1, 'the trial ran');
    const follower = await refusalOf(breaker, 'follower while the trial is out');
    assertRetryAfter(follower.retryAfterMs, { periodMs: TRIAL, elapsed: now() - trialFrom }, 'follower (≤ trialTimeoutMs)');

    // Not wedged: the unsettled trial counts as a failed trial once trialTimeoutMs has passed.
    await pollUntil(() => breaker.stats.trialTimeouts === 1, { ms: 5000, label: () => `trialTimeouts 1; stats ${JSON.stringify(breaker.stats)}` });
    assert.equal(breaker.state, 'open', 'reopened (for a doubled period of 480-600 ms from the expiry)');
    assert.equal(breaker.stats.opened, 2);
    const reopened = await refusalOf(breaker, 'refusal after the trial expired');
    // Reopened at the expiry (trialTimeoutMs after the trial started) for 0.8-1 × 2 × openMs.
    assertRetryAfter(reopened.retryAfterMs, { periodMs: 2 * OPEN, lowMs: TRIAL + 0.8 * 2 * OPEN, elapsed: now() - trialFrom }, 'after the expiry');

    await untilState(breaker, 'half_open');
    assert.equal(await withTimeout(breaker.fire(() => 'ok'), 2000, 'the new trial'), 'ok');
    assert.equal(breaker.state, 'closed', 'the new trial decided');
    assert.equal(trialCalls, 1, 'the hung fn was not called again');
    assert.equal(breaker.stats.trialTimeouts, 1);
  });

  test('stale success: a slow call admitted before the trip succeeds during the trial; the breaker stays half_open and the real trial decides', async () => {
    const breaker = new CircuitBreaker({ failureThreshold: 2, openMs: 50, trialTimeoutMs: 5000 });
    const changes = recordChanges(breaker);
    const slow = deferred();
    const slowFire = breaker.fire(() => slow.promise); // admitted while closed
    await failOnce(breaker);
    await failOnce(breaker);
    assert.equal(breaker.state, 'open');
    await untilState(breaker, 'half_open');

    const trial = deferred();
    let trialCalls = 0;
    const trialFire = breaker.fire(() => {
      trialCalls += 1;
      return trial.promise;
    });
    assert.equal(trialCalls, 1);

    slow.resolve('late');
    assert.equal(await withTimeout(slowFire, 2000, 'the slow call'), 'late', 'its caller still gets the value');
    assert.equal(breaker.state, 'half_open', 'a success from before the trip must not close the breaker under a running trial');
    assert.equal(breaker.stats.stale, 1);
    await refusalOf(breaker, 'another call while the real trial is still out');

    trial.reject(new Error('still down'));
    await rejectionOf(trialFire, 2000, 'the trial');
    assert.equal(breaker.state, 'open', 'the real trial failed: open again');
    assert.equal(breaker.stats.opened, 2);
    assert.deepEqual(
      changes.events.map((e) => `${e.from}->${e.to}`),
      ['closed->open', 'open->half_open', 'half_open->open'],
      'never closed in between',
    );
  });

  test('followers are refused at once while the trial is out, not queued behind it', async () => {
    const [N, TRIAL] = [8, 60_000];
    const breaker = new CircuitBreaker({ failureThreshold: 1, openMs: 50, trialTimeoutMs: TRIAL });
    await failOnce(breaker);
    await untilState(breaker, 'half_open');

    const trialFrom = now();
    const trial = deferred();
    let calls = 0;
    let trialSettled = false;
    const fn = () => {
      calls += 1;
      return trial.promise;
    };
    const fires = Array.from({ length: N }, () => breaker.fire(fn));
    fires[0].finally(() => (trialSettled = true)).catch(() => {});

    const followers = await withTimeout(Promise.allSettled(fires.slice(1)), 5000, 'the followers to be refused');
    const elapsed = now() - trialFrom;
    assert.equal(trialSettled, false, 'the refusals arrived while the trial was still running');
    assert.equal(calls, 1, 'exactly one call ran fn');
    for (const [i, r] of followers.entries()) {
      assert.equal(r.status, 'rejected', `follower #${i + 1}`);
      assert.ok(r.reason instanceof CircuitOpenError, `follower #${i + 1}: ${r.reason}`);
      assertRetryAfter(r.reason.retryAfterMs, { periodMs: TRIAL, elapsed }, `follower #${i + 1} (≤ trialTimeoutMs)`);
    }
    assert.equal(breaker.stats.rejected, N - 1);

    trial.resolve('up');
    assert.equal(await withTimeout(fires[0], 2000, 'the trial'), 'up');
    assert.equal(breaker.state, 'closed');
    await quietPeriod(50);
    assert.equal(calls, 1, 'no refused call ran later');
  });

  test('idle gap: failures older than windowMs no longer count; one new failure does not trip', async () => {
    const options = { failureThreshold: 0, failureRateThreshold: 0.5, minimumCalls: 3, windowMs: 200, openMs: 5000 };
    // Control: three failures inside the window do trip.
    const control = new CircuitBreaker(options);
    for (let i = 0; i < 3; i += 1) await failOnce(control);
    assert.equal(control.state, 'open', 'control: 3/3 failures in the window trip the rate rule');

    const breaker = new CircuitBreaker(options);
    await failOnce(breaker);
    await failOnce(breaker);
    assert.deepEqual([breaker.stats.windowCalls, breaker.stats.windowFailures], [2, 2]);
    assert.equal(breaker.state, 'closed', '2 calls < minimumCalls 3');
    await pollUntil(() => breaker.stats.windowCalls === 0, { ms: 2000, label: () => `an empty window; stats ${JSON.stringify(breaker.stats)}` });
    await failOnce(breaker);
    assert.equal(breaker.state, 'closed', 'the old failures left the window: 1 call < minimumCalls');
    assert.deepEqual([breaker.stats.windowCalls, breaker.stats.windowFailures], [1, 1]);
    assert.equal(breaker.stats.opened, 0);
  });

  test('process exit: a child with tripped, half-open and timed breakers exits by itself, no timer left', async () => {
    // Its open periods, trial timeout and call timeouts are an hour: a timer of any of them would
    // keep it alive far past this bound, which only ends a hang.
    const child = await runNode([fileURLToPath(new URL('./fixtures/breaker-exit.mjs', import.meta.url))], { timeoutMs: 60_000 });
    assert.equal(
      child.timedOut,
      false,
      `the child did not exit by itself within 60 s: a breaker timer (open periods, trial and call timeouts are an hour) kept it alive; stdout: ${child.stdout}`,
    );
    assert.equal(child.code, 0, `exit code ${child.code}; stderr: ${child.stderr}`);
    const report = JSON.parse(child.stdout.trim().split('\n').at(-1));
    assert.equal(report.refused, 5);
    assert.equal(report.trialStarted, true);
    assert.equal(report.timedCalls, 3);
    assert.deepEqual(report.states, ['open', 'half_open', 'closed']);
    assert.deepEqual(
      report.activeResources.filter((r) => r === 'Timeout' || r === 'Immediate'),
      [],
      `timers still active at the end: ${JSON.stringify(report.activeResources)}`,
    );
  });
});

describe('stats', () => {
  test('stats are computed on access like state: the first read after a trial expired already counts it', async () => {
    // Regression: `stats` used to be read before time-caused changes were applied, so it lagged
    // one access behind (trialTimeouts 0, opened 1 right after the trial had expired).
    const breaker = new CircuitBreaker({ failureThreshold: 1, openMs: 100, maxOpenMs: 1000, trialTimeoutMs: 50 });
    await failOnce(breaker);
    await untilState(breaker, 'half_open');
    breaker.fire(() => never()).catch(() => {});
    const trialStartedBy = now();
    // Let the trial expire without touching the breaker: wait on the clock, not the breaker.
    await untilPast(trialStartedBy + 50 + 1);
    const first = breaker.stats;
    const second = breaker.stats;
    assert.deepEqual(
      { trialTimeouts: first.trialTimeouts, opened: first.opened },
      { trialTimeouts: 1, opened: 2 },
      `first stats read after the expiry; an immediate second read gives ${JSON.stringify({ trialTimeouts: second.trialTimeouts, opened: second.opened })}`,
    );
  });
});

describe('zero means off where the option says so', () => {
  test('failureThreshold 0 and failureRateThreshold 0: 1000 failures never trip', async () => {
    const breaker = new CircuitBreaker({ failureThreshold: 0, failureRateThreshold: 0, minimumCalls: 0 });
    for (let i = 0; i < 1000; i += 1) await breaker.fire(down).catch(() => {});
    assert.equal(breaker.state, 'closed');
    const stats = breaker.stats;
    assert.equal(stats.failures, 1000);
    assert.equal(stats.consecutiveFailures, 1000);
    assert.equal(stats.opened, 0);
    assert.equal(stats.rejected, 0);
  });

  test('timeoutMs 0: no timeout; fn gets a signal that is never aborted', async () => {
    const breaker = new CircuitBreaker({ timeoutMs: 0 });
    const slow = deferred();
    let signal;
    let settled = false;
    const fired = breaker
      .fire(({ signal: s }) => {
        signal = s;
        return slow.promise;
      })
      .finally(() => (settled = true));
    assert.ok(signal instanceof AbortSignal);
    await quietPeriod(120);
    assert.equal(settled, false, 'nothing cut the call short');
    assert.equal(signal.aborted, false);
    slow.resolve('done');
    assert.equal(await withTimeout(fired, 2000, 'fire'), 'done');
    assert.equal(breaker.stats.timeouts, 0);
    assert.equal(signal.aborted, false);
  });

  test('minimumCalls 0: the rate rule applies from the first call', async () => {
    const breaker = new CircuitBreaker({ failureThreshold: 0, failureRateThreshold: 0.5, minimumCalls: 0, openMs: 5000 });
    await failOnce(breaker);
    assert.equal(breaker.state, 'open', '1/1 failed ≥ 0.5 with minimumCalls 0');
    // Control: with the default minimumCalls (20) one failure is not enough.
    const control = new CircuitBreaker({ failureThreshold: 0, failureRateThreshold: 0.5 });
    await failOnce(control);
    assert.equal(control.state, 'closed');
  });
});

describe('refusal', () => {
  test('CircuitOpenError: an Error with name, code, breaker, retryAfterMs in (0, openMs], and no stack frames', async () => {
    const OPEN = 60_000;
    const breaker = new CircuitBreaker({ name: 'payments', failureThreshold: 1, openMs: OPEN });
    const trippedFrom = now();
    await failOnce(breaker);
    const limitBefore = Error.stackTraceLimit;
    const err = await refusalOf(breaker);
    const elapsed = now() - trippedFrom;
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'CircuitOpenError');
    assert.equal(err.code, 'ERR_SPEND_SENTINEL_CIRCUIT_OPEN');
    assert.equal(err.breaker, 'payments');
    assert.equal(typeof err.retryAfterMs, 'number');
    assertRetryAfter(err.retryAfterMs, { periodMs: OPEN, elapsed }, 'the rest of openMs since the trip');
    assert.match(err.message, /payments/);
    assert.equal(typeof err.stack, 'string');
    assert.ok(!err.stack.includes(' at '), `the refusal captured stack frames:\n${err.stack}`);
    assert.equal(Error.stackTraceLimit, limitBefore, 'Error.stackTraceLimit is restored');
    assert.ok(new Error('probe').stack.includes(' at '), 'other errors still get their stack');
    assert.equal(breaker.stats.rejected, 1);
  });
});

describe('timeoutMs', () => {
  test('the signal is aborted at timeoutMs with an ERR_SPEND_SENTINEL_TIMEOUT reason; fire rejects with it; a failure and a timeout', async () => {
    const breaker = new CircuitBreaker({ timeoutMs: 60, failureThreshold: 0, failureRateThreshold: 0 });
    let signal;
    const t0 = now();
    const err = await rejectionOf(
      breaker.fire(({ signal: s }) => {
        signal = s;
        return never();
      }),
      2000,
      'fire with timeoutMs 60',
    );
    const elapsed = now() - t0;
    assert.ok(elapsed >= 55, `timed out after ${elapsed.toFixed(1)} ms < timeoutMs 60`);
    assert.ok(err instanceof Error);
    assert.equal(err.code, 'ERR_SPEND_SENTINEL_TIMEOUT');
    assert.ok(signal instanceof AbortSignal);
    assert.equal(signal.aborted, true);
    assert.equal(signal.reason, err, 'the signal reason is the error fire rejects with');
    const stats = breaker.stats;
    assert.deepEqual([stats.failures, stats.timeouts, stats.successes], [0, 1, 0], 'a timeout is in timeouts, not failures (as in the metric)');
  });

  test('on fake time: the call is cut at exactly timeoutMs, not a millisecond before', async (t) => {
    const TIMEOUT = 60;
    const breaker = new CircuitBreaker({ timeoutMs: TIMEOUT, failureThreshold: 0, failureRateThreshold: 0 });
    t.mock.timers.enable({ apis: ['setTimeout'] });
    let signal;
    let outcome = null;
    breaker
      .fire(({ signal: s }) => {
        signal = s;
        return never();
      })
      .then(
        (value) => (outcome = { value }),
        (error) => (outcome = { error }),
      );
    const settle = () => new Promise((resolve) => setImmediate(resolve)); // every reaction runs first
    t.mock.timers.tick(TIMEOUT - 1);
    await settle();
    assert.deepEqual([outcome, signal.aborted], [null, false], `at ${TIMEOUT - 1} ms the call is still running`);
    t.mock.timers.tick(1);
    await settle();
    assert.equal(outcome?.error?.code, 'ERR_SPEND_SENTINEL_TIMEOUT', `at ${TIMEOUT} ms: ${JSON.stringify(outcome)}`);
    assert.equal(signal.aborted, true);
    assert.equal(breaker.stats.timeouts, 1);
  });

  test('a call that settles within timeoutMs keeps its signal un-aborted (the timer is cleared)', async () => {
    const breaker = new CircuitBreaker({ timeoutMs: 60 });
    let signal;
    const value = await breaker.fire(async ({ signal: s }) => {
      signal = s;
      return 'fast';
    });
    assert.equal(value, 'fast');
    await quietPeriod(120);
    assert.equal(signal.aborted, false, 'aborted after the call had already succeeded');
    assert.deepEqual([breaker.stats.successes, breaker.stats.timeouts], [1, 0]);
  });

  test('a timeout counts as a timeout even when fn rejects at once on abort', async () => {
    // Regression: the timer used to abort the signal before rejecting its own race promise, so an
    // fn rejecting in its 'abort' listener won the race: no TIMEOUT outcome, and an isFailure that
    // ignores AbortError hid a hung dependency from the breaker.
    const breaker = new CircuitBreaker({ timeoutMs: 30, failureThreshold: 1, openMs: 5000, isFailure: (err) => err?.name !== 'AbortError' });
    const abortable = ({ signal }) =>
      new Promise((_, reject) => {
        signal.addEventListener('abort', () => reject(new DOMException('The operation was aborted', 'AbortError')));
      });
    const err = await rejectionOf(breaker.fire(abortable), 2000, 'fire of a signal-honouring fn');
    const stats = breaker.stats;
    assert.deepEqual(
      { code: err.code, timeouts: stats.timeouts, failures: stats.failures, ignored: stats.ignored, state: breaker.state },
      { code: 'ERR_SPEND_SENTINEL_TIMEOUT', timeouts: 1, failures: 0, ignored: 0, state: 'open' },
      `fire rejected with ${err?.name}: ${err?.message}`,
    );
  });
});

describe('isFailure', () => {
  test('isFailure → false: the error is rethrown but not counted, and in half_open it frees the permit for another trial', async () => {
    const notFound = Object.assign(new Error('not found'), { code: 'NOT_FOUND' });
    const seen = [];
    const breaker = new CircuitBreaker({
      failureThreshold: 2,
      openMs: 50,
      trialTimeoutMs: 5000,
      isFailure: (err) => {
        seen.push(err);
        return err.code !== 'NOT_FOUND';
      },
    });
    await failOnce(breaker);
    assert.equal(await rejectionOf(breaker.fire(() => Promise.reject(notFound)), 2000, 'ignored error'), notFound);
    assert.equal(seen.at(-1), notFound, 'isFailure got the error');
    let stats = breaker.stats;
    assert.deepEqual([stats.failures, stats.ignored, stats.consecutiveFailures], [1, 1, 1]);
    assert.equal(breaker.state, 'closed');
    await failOnce(breaker);
    assert.equal(breaker.state, 'open', 'the ignored error did not reset the consecutive count either');

    await untilState(breaker, 'half_open');
    assert.equal(await rejectionOf(breaker.fire(() => Promise.reject(notFound)), 2000, 'ignored trial'), notFound);
    assert.equal(breaker.state, 'half_open', 'an ignored trial neither closes nor reopens');
    let ran = false;
    const next = await withTimeout(
      breaker.fire(() => {
        ran = true;
        return 'up';
      }),
      1000,
      'the next trial (long before trialTimeoutMs 5000)',
    );
    assert.equal(ran, true, 'the permit was free again at once');
    assert.equal(next, 'up');
    assert.equal(breaker.state, 'closed');
    stats = breaker.stats;
    assert.deepEqual([stats.ignored, stats.trialTimeouts, stats.rejected], [2, 0, 0]);
  });

  test('an isFailure that throws: the error counts as a failure and fire rejects with the original error', async () => {
    const breaker = new CircuitBreaker({
      failureThreshold: 1,
      openMs: 5000,
      isFailure: () => {
        throw new Error('predicate bug');
      },
    });
    const original = new Error('down');
    await failOnce(breaker, original);
    assert.equal(breaker.state, 'open');
    assert.deepEqual([breaker.stats.failures, breaker.stats.ignored], [1, 0]);
  });
});

test('open period doubles (jitter within [0.8, 1] of the doubled period) after failed trials, capped at maxOpenMs, back to openMs after a successful trial', async () => {
  const OPEN = 40;
  const MAX = 120;
  const breaker = new CircuitBreaker({ failureThreshold: 1, openMs: OPEN, maxOpenMs: MAX, trialTimeoutMs: 5000 });
  /** Fails a call (the trip or a trial) and checks the refusal right after it: within [0.8, 1] × base. */
  const failThenRefusal = async (base, what, error) => {
    const from = now();
    await failOnce(breaker, error);
    assert.equal(breaker.state, 'open', what);
    const retry = (await refusalOf(breaker, what)).retryAfterMs;
    assertRetryAfter(retry, { periodMs: base, lowMs: 0.8 * base, elapsed: now() - from }, what);
    return retry;
  };

  await failThenRefusal(OPEN, 'first open');
  const seen = [];
  for (const base of [80, 120, 120]) {
    await untilState(breaker, 'half_open');
    seen.push(await failThenRefusal(base, `after failed trial #${seen.length + 1}`, new Error('trial failed')));
  }
  await untilState(breaker, 'half_open');
  assert.equal(await breaker.fire(() => 'up'), 'up');
  assert.equal(breaker.state, 'closed');
  await failThenRefusal(OPEN, 'after a successful trial and a new trip');
});

describe('onStateChange', () => {
  test('events { name, from, to } in order closed → open → half_open → closed, each after the change; remover works; a throwing listener breaks nothing', async () => {
    const breaker = new CircuitBreaker({ name: 'payments', failureThreshold: 1, openMs: 50, trialTimeoutMs: 5000 });
    let throwingCalls = 0;
    breaker.onStateChange(() => {
      throwingCalls += 1;
      throw new Error('listener bug');
    });
    const events = [];
    breaker.onStateChange((event) => {
      events.push({ event: { ...event }, keys: Object.keys(event).sort(), stateInside: breaker.state, opened: breaker.stats.opened });
    });
    const removedEvents = [];
    const remove = breaker.onStateChange((event) => removedEvents.push(event));
    remove();
    assert.doesNotThrow(() => remove(), 'the remover may be called twice');

    const err = await rejectionOf(breaker.fire(() => Promise.reject(new Error('down'))), 2000, 'tripping fire');
    assert.equal(err.message, 'down', 'fire rejects with fn error, not the listener error');
    assert.equal(events.length, 1, 'closed → open reported before fire settled');
    await untilState(breaker, 'half_open');
    assert.equal(await breaker.fire(() => 'up'), 'up', 'a throwing listener does not break fire()');

    assert.deepEqual(
      events.map((e) => e.event),
      [
        { name: 'payments', from: 'closed', to: 'open' },
        { name: 'payments', from: 'open', to: 'half_open' },
        { name: 'payments', from: 'half_open', to: 'closed' },
      ],
    );
    for (const e of events) {
      assert.deepEqual(e.keys, ['from', 'name', 'to']);
      assert.equal(e.stateInside, e.event.to, `inside the ${e.event.from}→${e.event.to} listener the state is already ${e.event.to}`);
    }
    assert.equal(events[0].opened, 1, 'the stats are committed too when the listener runs');
    assert.equal(throwingCalls, 3, 'the throwing listener got every event');
    assert.deepEqual(removedEvents, [], 'a removed listener gets nothing');
    assert.equal(breaker.state, 'closed');
  });

  test('onStateChange with a non-function throws a TypeError', () => {
    const breaker = new CircuitBreaker();
    const err = catchError(() => breaker.onStateChange('nope'));
    assert.ok(err instanceof TypeError);
    assert.equal(err.code, 'ERR_SPEND_SENTINEL_CONFIG');
  });
});

describe('open(), close(), reset()', () => {
  test('open() refuses until close(), also long past openMs; close() forgets recent failures; reset() zeroes the stats', async () => {
    const breaker = new CircuitBreaker({ failureThreshold: 3, openMs: 50 });
    const changes = recordChanges(breaker);
    breaker.open();
    assert.equal(breaker.state, 'open');
    assert.equal(breaker.stats.opened, 1);
    const refusal = await refusalOf(breaker, 'refusal after open()');
    assert.ok(refusal.retryAfterMs > 0 && refusal.retryAfterMs <= 50, `retryAfterMs ${refusal.retryAfterMs}`);
    await quietPeriod(200); // 4 × openMs: nothing may half-open it
    assert.equal(breaker.state, 'open', 'open() is not timed');
    await refusalOf(breaker, 'refusal long after openMs');

    breaker.close();
    assert.equal(breaker.state, 'closed');
    assert.equal(await breaker.fire((a) => a * 2, 21), 42);
    await failOnce(breaker);
    await failOnce(breaker);
    breaker.close();
    assert.equal(breaker.stats.consecutiveFailures, 0);
    await failOnce(breaker);
    assert.equal(breaker.state, 'closed', 'the two failures before close() no longer count');
    assert.deepEqual(
      changes.events.map((e) => `${e.from}->${e.to}`),
      ['closed->open', 'open->closed'],
    );

    await failOnce(breaker);
    await failOnce(breaker);
    assert.equal(breaker.state, 'open');
    const before = breaker.stats;
    assert.ok(before.failures >= 5 && before.rejected >= 2 && before.opened === 2, JSON.stringify(before));
    breaker.reset();
    assert.equal(breaker.state, 'closed');
    assert.deepEqual(breaker.stats, ZERO_STATS);
    assert.equal(await breaker.fire(() => 'after reset'), 'after reset');
  });
});

describe('fire', () => {
  test('passes the arguments, then { signal }, and resolves with what fn returns (sync or async)', async () => {
    const breaker = new CircuitBreaker();
    let received;
    const value = await breaker.fire(
      (...args) => {
        received = args;
        return Promise.resolve({ sum: args[0] + args[1] });
      },
      2,
      3,
    );
    assert.deepEqual(value, { sum: 5 });
    assert.equal(received.length, 3);
    assert.deepEqual(received.slice(0, 2), [2, 3]);
    assert.deepEqual(Object.keys(received[2]), ['signal']);
    assert.ok(received[2].signal instanceof AbortSignal);
    assert.equal(await breaker.fire(() => 'plain'), 'plain');
    assert.equal(await breaker.fire((x) => x, undefined), undefined);
    assert.equal(breaker.stats.successes, 3);
  });

  test('a synchronous throw in fn is a failure, and fire still returns a rejected promise', async () => {
    const breaker = new CircuitBreaker({ failureThreshold: 1, openMs: 5000 });
    const boom = new Error('sync boom');
    let promise;
    assert.doesNotThrow(() => {
      promise = breaker.fire(() => {
        throw boom;
      });
    });
    assert.equal(await rejectionOf(promise, 2000, 'fire of a throwing fn'), boom);
    assert.equal(breaker.stats.failures, 1);
    assert.equal(breaker.state, 'open');
  });

  test('fire with a non-function rejects with a TypeError and changes nothing', async () => {
    const breaker = new CircuitBreaker({ failureThreshold: 1, openMs: 5000 });
    for (const notFn of [undefined, null, 42, 'fn', {}, Promise.resolve(1)]) {
      const err = await rejectionOf(breaker.fire(notFn), 2000, `fire(${String(notFn)})`);
      assert.ok(err instanceof TypeError, `fire(${String(notFn)}): ${err}`);
    }
    assert.equal(breaker.state, 'closed');
    assert.deepEqual(breaker.stats, ZERO_STATS);
    // Also while open: a TypeError, not a refusal, and the refusal count unchanged.
    await failOnce(breaker);
    const before = breaker.stats;
    assert.ok((await rejectionOf(breaker.fire(7), 2000, 'fire(7) while open')) instanceof TypeError);
    assert.deepEqual(breaker.stats, before);
  });
});

describe('options', () => {
  const BAD = [
    ['failureThreshold', { failureThreshold: -1 }],
    ['failureThreshold', { failureThreshold: 1.5 }],
    ['failureThreshold', { failureThreshold: '3' }],
    ['failureRateThreshold', { failureRateThreshold: 2 }],
    ['failureRateThreshold', { failureRateThreshold: -0.1 }],
    ['windowMs', { windowMs: 0 }],
    ['minimumCalls', { minimumCalls: -1 }],
    ['openMs', { openMs: 0 }],
    ['openMs', { openMs: Infinity }],
    ['maxOpenMs', { openMs: 1000, maxOpenMs: 999 }],
    ['trialTimeoutMs', { trialTimeoutMs: -5 }],
    ['trialTimeoutMs', { trialTimeoutMs: 0 }],
    ['timeoutMs', { timeoutMs: -1 }],
    ['timeoutMs', { timeoutMs: NaN }],
    ['name', { name: '' }],
    ['name', { name: 5 }],
    ['isFailure', { isFailure: 'x' }],
    ['now', { now: 5 }],
    ['treshold', { treshold: 3 }],
  ];
  for (const [option, options] of BAD) {
    test(`${JSON.stringify(options, (_, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v))} throws ERR_SPEND_SENTINEL_CONFIG naming ${option}`, () => {
      let created;
      const err = catchError(() => {
        created = new CircuitBreaker(options);
      });
      assert.equal(created, undefined, 'no breaker was created');
      assert.ok(err instanceof Error, `${err}`);
      assert.equal(err.code, 'ERR_SPEND_SENTINEL_CONFIG');
      assert.ok(err.message.includes(`${option}:`), `message names ${option}: ${err.message}`);
    });
  }

  for (const reading of [NaN, -1, '5']) {
    test(`a now() that reads ${String(reading)} throws a TypeError naming now`, () => {
      const err = catchError(() => new CircuitBreaker({ now: () => reading }));
      assert.ok(err instanceof TypeError, `${err}`);
      assert.equal(err.code, 'ERR_SPEND_SENTINEL_CONFIG');
      assert.ok(err.message.includes('now:'), err.message);
    });
  }

  test('0 is accepted where it means off; no options at all means every default', () => {
    const zeros = new CircuitBreaker({ failureThreshold: 0, failureRateThreshold: 0, minimumCalls: 0, timeoutMs: 0 });
    assert.equal(zeros.state, 'closed');
    const defaults = new CircuitBreaker();
    assert.equal(defaults.name, 'breaker');
    assert.equal(defaults.state, 'closed');
    assert.deepEqual(defaults.stats, ZERO_STATS);
  });
});

describe('an injected clock (now)', () => {
  test('on mock.timers: open for exactly openMs of the given clock, then half_open; each change reported at its moment', async (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
    const breaker = new CircuitBreaker({ name: 'fake-clock', failureThreshold: 1, openMs: 500, maxOpenMs: 500, now: () => Date.now() });
    const changes = [];
    breaker.onStateChange(({ to }) => changes.push(`${to} at ${Date.now()}`));
    await assert.rejects(
      breaker.fire(async () => {
        throw new Error('down');
      }),
      /down/,
    );
    assert.equal(breaker.retryAt, 1_000_500);
    t.mock.timers.tick(499);
    assert.equal(breaker.state, 'open');
    assert.equal(breaker.stats.retryAfterMs, 1);
    const refusal = await breaker.fire(async () => 'not called').catch((err) => err);
    assert.equal(refusal.retryAfterMs, 1, 'the refusal says 1 ms');
    t.mock.timers.tick(1);
    assert.equal(breaker.state, 'half_open');
    assert.equal(await breaker.fire(async () => 'ok'), 'ok');
    assert.deepEqual(changes, ['open at 1000000', 'half_open at 1000500', 'closed at 1000500']);
  });

  test('the now option is read once: the clock the options were checked with is the one the breaker runs on', async () => {
    let reads = 0;
    const options = {
      name: 'read-once-clock',
      failureThreshold: 1,
      openMs: 500,
      maxOpenMs: 500,
      get now() {
        reads += 1;
        return reads === 1 ? () => 5_000 : () => 'not a reading';
      },
    };
    const breaker = new CircuitBreaker(options);
    await assert.rejects(
      breaker.fire(async () => {
        throw new Error('down');
      }),
      /down/,
    );
    assert.equal(breaker.state, 'open');
    assert.equal(breaker.stats.retryAfterMs, 500, 'open for openMs on the checked clock, which stands at 5000');
    assert.equal(reads, 1, 'options.now was read once');
  });

  test('isFailure and fallback are read once too: the ones checked are the ones that run', async () => {
    const reads = { isFailure: 0, fallback: 0 };
    const options = {
      name: 'read-once-hooks',
      get isFailure() {
        reads.isFailure += 1;
        return reads.isFailure === 1 ? () => false : () => true;
      },
      get fallback() {
        reads.fallback += 1;
        return reads.fallback === 1 ? () => 'checked fallback' : () => 'later fallback';
      },
    };
    const breaker = new CircuitBreaker(options);
    await assert.rejects(
      breaker.fire(async () => {
        throw new Error('not a failure');
      }),
      /not a failure/,
    );
    assert.equal(breaker.stats.failures, 0, 'the checked isFailure said it does not count');
    breaker.open();
    assert.equal(await breaker.fire(async () => 'not called'), 'checked fallback');
    assert.deepEqual(reads, { isFailure: 1, fallback: 1 });
  });
});

// What opossum/cockatiel users expect: fallback, a caller's AbortSignal, a timeout error class,
// a bulkhead, retryAt; and the stats under the metric's names.
describe('fallback, caller signal, timeout class, bulkhead, retryAt', () => {
  const { CircuitTimeoutError, BulkheadFullError } = require('spend-sentinel');

  test('CircuitTimeoutError and BulkheadFullError are exported by CommonJS and ESM, and instanceof works', async () => {
    assert.equal(typeof CircuitTimeoutError, 'function');
    assert.equal(typeof BulkheadFullError, 'function');
    const esm = await import('spend-sentinel');
    assert.equal(esm.CircuitTimeoutError, CircuitTimeoutError);
    assert.equal(esm.BulkheadFullError, BulkheadFullError);
    const breaker = new CircuitBreaker({ name: 'slow-api', timeoutMs: 20, failureThreshold: 0, failureRateThreshold: 0 });
    const err = await rejectionOf(breaker.fire(never), 2000, 'timed-out fire');
    assert.ok(err instanceof CircuitTimeoutError, `got ${err?.name}`);
    assert.ok(err instanceof Error);
    assert.deepEqual([err.name, err.code, err.breaker, err.timeoutMs], ['CircuitTimeoutError', 'ERR_SPEND_SENTINEL_TIMEOUT', 'slow-api', 20]);
    assert.match(err.message, /call timed out after 20 ms/);
  });

  test('fallback answers for a failure, a timeout and a refusal, with the reason; its result is what fire resolves with', async () => {
    const seen = [];
    const breaker = new CircuitBreaker({
      timeoutMs: 30,
      failureThreshold: 2,
      openMs: 60_000,
      fallback: ({ reason, error, args }) => {
        seen.push({ reason, error, args });
        return `fallback:${reason}`;
      },
    });
    const boom = new Error('boom');
    assert.equal(await breaker.fire(async () => {
      throw boom;
    }, 'a'), 'fallback:failure');
    assert.equal(await breaker.fire(never, 'b'), 'fallback:timeout');
    assert.equal(breaker.state, 'open');
    assert.equal(await breaker.fire(async () => 'never runs', 'c'), 'fallback:open');
    assert.deepEqual(seen.map((s) => s.reason), ['failure', 'timeout', 'open']);
    assert.equal(seen[0].error, boom);
    assert.ok(seen[1].error instanceof CircuitTimeoutError);
    assert.ok(seen[2].error instanceof CircuitOpenError);
    assert.deepEqual(seen.map((s) => s.args), [['a'], ['b'], ['c']]);
    assert.equal(await breaker.stats.rejected, 1);
  });

  test('fallback is not called for errors isFailure ignores; a fallback that throws makes fire reject with its error', async () => {
    const notFound = new Error('404');
    const breaker = new CircuitBreaker({
      isFailure: (err) => err !== notFound,
      fallback: ({ error }) => {
        throw new Error(`fallback saw ${error.message}`);
      },
    });
    assert.equal(await rejectionOf(breaker.fire(async () => Promise.reject(notFound)), 1000, 'ignored'), notFound);
    const err = await rejectionOf(breaker.fire(down), 1000, 'fallback throws');
    assert.equal(err.message, 'fallback saw down');
  });

  test('a caller signal: aborting it rejects at once with its reason, aborts fn\'s signal, counts as ignored, no fallback', async () => {
    let fallbacks = 0;
    const TIMEOUT = 10_000;
    const breaker = new CircuitBreaker({ timeoutMs: TIMEOUT, failureThreshold: 1, fallback: () => (fallbacks += 1) });
    const controller = new AbortController();
    let inner;
    const fired = breaker.fireWith({ signal: controller.signal }, ({ signal }) => {
      inner = signal;
      return never();
    });
    const reason = new Error('client went away');
    controller.abort(reason);
    // fn never settles, so only the abort or timeoutMs can end the call; the bound here is above
    // timeoutMs, so a call that waited for the timeout shows as the timeout's error, not `reason`.
    const err = await rejectionOf(fired, 3 * TIMEOUT, 'aborted fire');
    assert.equal(err, reason, `rejected with ${err?.name} (${err?.code}): the abort's reason, not the timeout's error`);
    assert.equal(breaker.stats.timeouts, 0, 'decided by the abort, before timeoutMs');
    assert.equal(inner.aborted, true);
    assert.equal(inner.reason, reason);
    assert.equal(fallbacks, 0);
    assert.equal(breaker.state, 'closed', 'a caller abort says nothing about the dependency');
    assert.deepEqual([breaker.stats.ignored, breaker.stats.failures], [1, 0]);

    // Already aborted: fn is not called at all and nothing is counted.
    let called = false;
    const again = await rejectionOf(breaker.fireWith({ signal: controller.signal }, () => (called = true)), 1000, 'pre-aborted');
    assert.equal(again, reason);
    assert.equal(called, false);
    assert.equal(breaker.stats.ignored, 1);
    // Without timeoutMs too, and the caller's signal reaches fn.
    const plain = new CircuitBreaker();
    const c2 = new AbortController();
    const p = plain.fireWith({ signal: c2.signal }, never);
    c2.abort();
    assert.equal((await rejectionOf(p, 1000, 'plain aborted')).name, 'AbortError');
    assert.equal(plain.stats.ignored, 1);
  });

  test('bulkhead: maxConcurrent calls in flight, the next is refused at once (never queued) with BulkheadFullError', async () => {
    const breaker = new CircuitBreaker({ name: 'bulk', maxConcurrent: 2 });
    const gates = [deferred(), deferred()];
    const running = gates.map((g) => breaker.fire(() => g.promise));
    let ran = false;
    const err = await rejectionOf(breaker.fire(async () => (ran = true)), 500, 'third call');
    assert.ok(err instanceof BulkheadFullError, `got ${err}`);
    assert.deepEqual([err.code, err.reason, err.breaker, err.maxConcurrent], ['ERR_SPEND_SENTINEL_BULKHEAD_FULL', 'bulkhead', 'bulk', 2]);
    assert.equal(ran, false);
    gates[0].resolve('one');
    assert.equal(await running[0], 'one');
    assert.equal(await breaker.fire(async () => 'room again'), 'room again');
    gates[1].resolve('two');
    await running[1];
    assert.equal(breaker.stats.bulkheadRejected, 1);
    assert.equal(breaker.stats.rejected, 0, 'a bulkhead refusal is not a breaker refusal');
    assert.equal(breaker.state, 'closed');
    const withFallback = new CircuitBreaker({ maxConcurrent: 1, fallback: ({ reason }) => reason });
    const hold = deferred();
    const first = withFallback.fire(() => hold.promise);
    assert.equal(await withFallback.fire(async () => 'x'), 'bulkhead');
    hold.resolve();
    await first;
  });

  test('maxConcurrent, fallback and name are validated', () => {
    for (const [options, start] of [
      [{ maxConcurrent: -1 }, 'CircuitBreaker: maxConcurrent: must be a whole number ≥ 0'],
      [{ maxConcurrent: 1.5 }, 'CircuitBreaker: maxConcurrent: must be a whole number ≥ 0'],
      [{ maxConcurrent: '2' }, 'CircuitBreaker: maxConcurrent:'],
      [{ fallback: 'x' }, 'CircuitBreaker: fallback: must be a function'],
      [{ name: 'billing api' }, 'CircuitBreaker: name: must use only letters, digits and _ . : -'],
      [{ name: 'tenant="acme"' }, 'CircuitBreaker: name: must use only letters, digits and _ . : -'],
      [{ name: '/v1/users/42' }, 'CircuitBreaker: name: must use only letters, digits and _ . : -'],
    ]) {
      const err = catchError(() => new CircuitBreaker(options));
      assert.equal(err?.code, 'ERR_SPEND_SENTINEL_CONFIG', JSON.stringify(options));
      assert.ok(err.message.startsWith(start), `${JSON.stringify(options)}: ${err.message}`);
    }
    assert.equal(new CircuitBreaker({ name: 'billing-v2.api:eu_1' }).name, 'billing-v2.api:eu_1');
  });

  test('retryAt and stats.retryAfterMs say when it half-opens, without polling', async () => {
    const breaker = new CircuitBreaker({ failureThreshold: 1, openMs: 300, maxOpenMs: 300 });
    assert.equal(breaker.retryAt, null, 'closed');
    assert.equal(breaker.stats.retryAfterMs, null);
    const before = Date.now();
    const trippedFrom = now();
    await failOnce(breaker);
    const at = breaker.retryAt;
    assert.equal(typeof at, 'number');
    // Epoch milliseconds: the trip's moment plus openMs (Date.now() is whole ms: 2 ms of slack).
    assert.ok(at >= before + 300 - 2 && at <= Date.now() + 300 + 2, `retryAt ${at - before} ms after the trip began`);
    const leftFrom = now();
    const left = breaker.stats.retryAfterMs;
    assertRetryAfter(left, { periodMs: 300, elapsed: now() - trippedFrom }, 'stats.retryAfterMs');
    const refusal = await refusalOf(breaker);
    // Read later than `left`, so at most `left`, and less by no more than the time in between.
    assertRetryAfter(refusal.retryAfterMs, { periodMs: left, elapsed: now() - leftFrom }, 'the same figure as a refusal');
    await untilPast(at + 5, () => Date.now());
    assert.equal(breaker.state, 'half_open', 'half-open by retryAt');
    assert.equal(breaker.retryAt, null);
    breaker.open();
    assert.equal(breaker.retryAt, null, 'opened by hand: never by itself');
  });
});
