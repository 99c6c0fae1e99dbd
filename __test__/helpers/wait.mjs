// Shared helpers for the spend-sentinel node:test suites.
//
// Synchronisation rule: tests wait for an *event* (an inspect call, a transition, a promise) with a
// generous upper bound (`withTimeout`): the bound only ends a hang, so a slow machine makes a test
// slower, never red. Two plain timers exist, neither of which waits for something to happen:
// `quietPeriod` asserts that something does NOT happen meanwhile, and `untilPast` lets a moment of
// real time pass (every stale window has closed) before counting what happened up to it; being
// late is harmless to both. No assertion bounds how long something took from above: a duration's
// upper bound is a rule of the code, tested on fake time (the Rust `Clock`, `mock.timers`).
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

export const OUTCOMES = ['valid', 'invalid_credential', 'capability_missing', 'indeterminate'];

/** Fast timings: node budget 100 units, window 1 s. */
export const FAST_BUDGET = Object.freeze({ unverifiedUnits: 100, maxUnitsPerSecond: 100 });
export const FAST_REFRESH = Object.freeze({ minIntervalMs: 20, maxIntervalMs: 40, timeoutMs: 300 });

/** The seed example (README, The budget math): node budget 100, window 5 s. */
export const SEED_BUDGET = Object.freeze({ unverifiedUnits: 200, maxUnitsPerSecond: 20, nodes: 2 });

export const now = () => performance.now();

/**
 * How long the waits below wait by default before they fail a test: a guard against a hang, never
 * a bound on how fast something must happen (a busy CI machine can take seconds to run a timer).
 */
export const HANG_MS = 10_000;

/**
 * Race `promise` against a timer; rejects with a message naming `label` when the timer wins.
 * `label` may be a function, evaluated at timeout (to describe the state at that moment).
 */
export function withTimeout(promise, ms, label) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => {
      const what = typeof label === 'function' ? label() : label;
      reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
    }, ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** ONLY for asserting absence ("nothing happens during the next `ms`"), never to wait for something. */
export function quietPeriod(ms) {
  return sleep(ms);
}

/**
 * Resolves once `clock()` (ms; `now` by default, or e.g. the fleet helpers' `epoch`) is past
 * `deadline`: for a fact about time itself (every window that could be open then has closed),
 * never to wait for an event. Later than asked is always correct.
 */
export async function untilPast(deadline, clock = now) {
  while (clock() <= deadline) await sleep(Math.max(1, deadline - clock() + 1));
}

export function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * A promise that never settles (an authority that never answers). Its resolver stays reachable for
 * the life of the process, as a hung request's socket keeps a real one, so a test of a hang never
 * depends on the garbage collector (the addon ends a refresh whose promise was collected unsettled
 * at refresh.timeoutMs too, as `inspect_timeout`, like any hang).
 */
const pinned = new Set();
export const never = () => new Promise((resolve) => pinned.add(resolve));

/**
 * A scripted `authority.inspect` the test controls.
 *
 * `behaviour(call)` decides what one call returns (a promise, a plain value, or it throws).
 * A string behaviour is shorthand for "resolve with this string". Every call is recorded as
 * `{ index, startedAt, settledAt }`, concurrency is tracked, and tests can wait for calls.
 */
export function scriptedAuthority(initial = 'valid') {
  let behaviour = toBehaviour(initial);
  const calls = [];
  const waiters = new Set();
  let active = 0;
  let maxConcurrent = 0;

  const settle = (call) => {
    if (call.settledAt === null) {
      call.settledAt = now();
      active -= 1;
    }
  };

  function inspect() {
    const call = { index: calls.length, startedAt: now(), settledAt: null, release: null };
    calls.push(call);
    active += 1;
    maxConcurrent = Math.max(maxConcurrent, active);
    for (const w of waiters) {
      if (call.index >= w.index) {
        waiters.delete(w);
        w.resolve(call);
      }
    }
    let result;
    try {
      result = behaviour(call);
    } catch (err) {
      settle(call);
      throw err;
    }
    if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
      return Promise.resolve(result).finally(() => settle(call));
    }
    settle(call);
    return result;
  }

  return {
    inspect,
    calls,
    get callCount() {
      return calls.length;
    },
    get maxConcurrent() {
      return maxConcurrent;
    },
    /** Replace what future calls do. */
    set(next) {
      behaviour = toBehaviour(next);
    },
    /** Future calls stay pending until the test calls `call.release(outcome)` (see `held`). */
    hold() {
      behaviour = held;
    },
    /** Resolves with call number `index` (0-based) once it has started (at once if it already has). */
    call(index, ms = HANG_MS) {
      if (calls[index]) return Promise.resolve(calls[index]);
      const d = deferred();
      const waiter = { index, resolve: d.resolve };
      waiters.add(waiter);
      return withTimeout(d.promise, ms, `inspect call #${index}`).finally(() => waiters.delete(waiter));
    },
    /** Resolves with the next call that starts after this moment. */
    nextCall(ms = HANG_MS) {
      return this.call(calls.length, ms);
    },
  };
}

function toBehaviour(b) {
  if (typeof b === 'function') return b;
  return () => Promise.resolve(b);
}

/** Behaviour: each call stays pending until `call.release(value)` is called by the test. */
export function held(call) {
  const d = deferred();
  call.release = d.resolve;
  return d.promise;
}

/** Behaviour: answer `outcomes[i]` to call i, then use `rest` (a behaviour) for every later call. */
/**
 * A scripted authority driven by mode: `hold` (each call waits for the test) or an outcome every
 * call answers at once. `answers[i]` is what call i resolved with.
 */
export function controlledAuthority() {
  const auth = scriptedAuthority();
  const answers = [];
  let mode = { hold: true };
  auth.set((call) => {
    if (mode.hold) {
      return held(call).then((outcome) => {
        answers[call.index] = outcome;
        return outcome;
      });
    }
    answers[call.index] = mode.answer;
    return Promise.resolve(mode.answer);
  });
  return {
    auth,
    answers,
    /** Holds the next call: resolves with it once it started (then exactly call.index refreshes are counted). */
    async checkpoint() {
      mode = { hold: true };
      return auth.nextCall(HANG_MS);
    },
    /** Answers `call` with `outcome`; later calls answer `then` at once (or are held with 'hold'). */
    release(call, outcome, then) {
      mode = then === 'hold' ? { hold: true } : { answer: then };
      call.release(outcome);
    },
  };
}

export function sequence(outcomes, rest = never) {
  const tail = toBehaviour(rest);
  return (call) => (call.index < outcomes.length ? Promise.resolve(outcomes[call.index]) : tail(call));
}

/** Records every transition event with its arrival time and lets tests wait for one. */
export function recordTransitions(sentinel) {
  const events = [];
  const waiters = new Set();
  const remove = sentinel.onTransition((event) => {
    // `at` (arrival time) is non-enumerable so the entry still has exactly the event's own keys.
    const entry = Object.defineProperty({ ...event }, 'at', { value: now(), enumerable: false });
    events.push(entry);
    for (const w of waiters) {
      if (w.predicate(entry)) {
        waiters.delete(w);
        w.resolve(entry);
      }
    }
  });
  return {
    events,
    remove,
    /**
     * Resolves with the first event (already recorded at index >= `from`, or future) that matches
     * `match` — an object of expected fields ({ to: 'ready' }) or a predicate.
     */
    waitFor(match, { ms = HANG_MS, from = 0, label } = {}) {
      const predicate = typeof match === 'function' ? match : (e) => Object.entries(match).every(([k, v]) => e[k] === v);
      const seen = events.slice(from).find(predicate);
      if (seen) return Promise.resolve(seen);
      const d = deferred();
      const waiter = { predicate, resolve: d.resolve };
      waiters.add(waiter);
      const what = label ?? `transition ${typeof match === 'function' ? 'matching predicate' : JSON.stringify(match)}`;
      const describe = () =>
        `${what}; transitions so far: ${JSON.stringify(events)}; readiness now: ${JSON.stringify(sentinel.readiness())}`;
      return withTimeout(d.promise, ms, describe).finally(() => waiters.delete(waiter));
    },
    /** Like waitFor, but only for events recorded after this call. */
    next(match, opts = {}) {
      return this.waitFor(match, { ...opts, from: events.length });
    },
  };
}

/**
 * Creates sentinels and remembers them so `closeAll()` (run it in afterEach) closes every one,
 * whatever assertions failed.
 */
export function sentinelPool(Sentinel) {
  const open = new Set();
  return {
    make(options) {
      const s = new Sentinel(options);
      open.add(s);
      return s;
    },
    closeAll() {
      for (const s of open) {
        try {
          s.close();
        } catch {
          // a failing close is asserted where it matters; cleanup must go on
        }
      }
      open.clear();
    },
  };
}

/** Options using the scripted authority with fast timings (window 1 s); `over` is merged per section. */
export function fastOptions(auth, over = {}) {
  return {
    budget: { ...FAST_BUDGET, ...over.budget },
    refresh: { ...FAST_REFRESH, ...over.refresh },
    authority: { inspect: auth.inspect },
  };
}

/** Calls `fn` expecting a throw; returns the thrown value (fails when nothing is thrown). */
export function catchError(fn) {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to throw, but it returned normally');
}

/** A TCP port on 127.0.0.1 that nothing listens on (bound once, then released). */
export async function closedPort() {
  const server = createServer();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Runs `node <args>` in a child process; resolves with { code, signal, stdout, stderr, elapsedMs,
 * timedOut }. A child still running after `timeoutMs` is killed (by its own pid) and reported.
 */
export function runNode(args, { timeoutMs = 15000, env = process.env } = {}) {
  return runCommand(process.execPath, args, { timeoutMs, env });
}

/**
 * Runs `cmd args`; resolves with { code, signal, stdout, stderr, elapsedMs, timedOut } and never
 * rejects on a non-zero exit. `group: true` runs it in its own process group, so that a timeout
 * also kills what it started (npm's children); otherwise only the child itself is killed.
 */
export function runCommand(cmd, args, { cwd, env = process.env, timeoutMs = 15000, group = false } = {}) {
  return new Promise((resolve, reject) => {
    const started = now();
    const child = spawn(cmd, args, { cwd, env, detached: group, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (group) process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, elapsedMs: now() - started, timedOut });
    });
  });
}

/**
 * Calls `attempt()` (sync or async) every `everyMs` until it returns a truthy value, and resolves
 * with that value; fails after `ms` naming `label` (a string, or a function evaluated then).
 * For conditions nothing announces (an HTTP answer changing, a port closing).
 */
export async function pollUntil(attempt, { ms = HANG_MS, label = 'a condition', everyMs = 10 } = {}) {
  let stopped = false;
  const loop = (async () => {
    for (;;) {
      const value = await attempt();
      if (value || stopped) return value;
      await sleep(everyMs);
    }
  })();
  try {
    return await withTimeout(loop, ms, label);
  } finally {
    stopped = true;
  }
}

/** Resolves with the rejection reason of `promise`; fails if it resolves or stays pending past `ms`. */
export function rejectionOf(promise, ms, label) {
  return withTimeout(
    Promise.resolve(promise).then(
      (value) => {
        throw new Error(`${label}: expected a rejection, got ${JSON.stringify(value)}`);
      },
      (reason) => reason,
    ),
    ms,
    label,
  );
}

/**
 * Cleanups for one test, run last-in first-out after it whatever it asserted (a failing cleanup
 * does not stop the others). Returns `defer(fn)`.
 */
export function cleanups(t) {
  const stack = [];
  t.after(async () => {
    while (stack.length) {
      try {
        await stack.pop()();
      } catch {
        // cleanup goes on
      }
    }
  });
  return (fn) => stack.push(fn);
}
