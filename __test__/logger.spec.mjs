// The `logger` option: a pino-style object gets one line per status change and one per refresh
// that did not prove the credential valid, as `logger[level](fields, message)` called with
// `this === logger`. Levels: a change to ready → info; to not_ready for invalid_credential or
// capability_missing → error; any other not_ready and degraded → warn. A refresh answered
// indeterminate → warn, a denial → error; a valid refresh → nothing. Fields are codes only.
//
// Synchronisation: transition lines are waited for (listener events, logger lines); refresh lines
// are delivered on the sentinel's one JavaScript queue before the next inspect() call starts, so
// once call N has started every refresh line of calls 0..N-1 is in.
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import {
  catchError,
  deferred,
  fastOptions,
  held,
  pollUntil,
  quietPeriod,
  recordTransitions,
  scriptedAuthority,
  sentinelPool,
  withTimeout,
} from './helpers/wait.mjs';
import { crossCheck, readExposition } from './helpers/exposition.mjs';

const require = createRequire(import.meta.url);
const { Sentinel } = require('spend-sentinel');

const pool = sentinelPool(Sentinel);
afterEach(() => pool.closeAll());

/** Refresh timeout well above what the tests take while a call is held (window 1 s). */
const SLOW_TIMEOUT = { refresh: { timeoutMs: 800 } };

const TRANSITION_KEYS = ['event', 'from', 'to', 'reason', 'evidenceAgeSeconds'];
const REFRESH_KEYS = ['event', 'outcome', 'durationMs'];
/** An indeterminate refresh also says why (refresh-causes.spec.mjs); these tests answer it themselves. */
const INDETERMINATE_KEYS = [...REFRESH_KEYS, 'cause'];

function expectedTransitionLevel(to, reason) {
  if (to === 'ready') return 'info';
  if (to === 'not_ready' && (reason === 'invalid_credential' || reason === 'capability_missing')) return 'error';
  return 'warn';
}
const expectedRefreshLevel = (outcome) => (outcome === 'indeterminate' ? 'warn' : 'error');

/**
 * A plain-object logger recording `{ level, obj, msg, self, argc }` per call. It also has pino's
 * other levels (trace, debug, fatal), which the sentinel must not use.
 */
function recordingLogger() {
  const lines = [];
  const waiters = new Set();
  const logger = {};
  for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal']) {
    logger[level] = function log(obj, msg) {
      const line = { level, obj, msg, self: this, argc: arguments.length };
      lines.push(line);
      for (const w of waiters) {
        if (w.predicate(lines)) {
          waiters.delete(w);
          w.resolve(lines);
        }
      }
    };
  }
  return {
    logger,
    lines,
    transitions: () => lines.filter((l) => l.obj?.event === 'spend_sentinel.transition'),
    refreshes: () => lines.filter((l) => l.obj?.event === 'spend_sentinel.refresh'),
    /** Resolves once `predicate(lines)` holds (checked now and after each line). */
    until(predicate, label, ms = 3000) {
      if (predicate(lines)) return Promise.resolve(lines);
      const d = deferred();
      const waiter = { predicate, resolve: d.resolve };
      waiters.add(waiter);
      return withTimeout(d.promise, ms, () => `${label}; lines so far: ${JSON.stringify(lines.map(({ level, obj, msg }) => ({ level, obj, msg })))}`).finally(() =>
        waiters.delete(waiter),
      );
    },
  };
}

/** Shape, level and `this` of every recorded line. */
function assertWellFormed(rec) {
  for (const line of rec.lines) {
    assert.equal(line.self, rec.logger, `${line.level}(…) called with this !== logger`);
    assert.equal(line.argc, 2, 'called as (obj, msg)');
    assert.ok(['info', 'warn', 'error'].includes(line.level), `unexpected level ${line.level}`);
    assert.equal(typeof line.msg, 'string');
    assert.ok(line.msg.length > 0);
    assert.ok(line.obj !== null && typeof line.obj === 'object', 'fields object');
    if (line.obj.event === 'spend_sentinel.transition') {
      assert.deepEqual(Object.keys(line.obj).sort(), [...TRANSITION_KEYS].sort(), 'transition fields');
      assert.equal(line.level, expectedTransitionLevel(line.obj.to, line.obj.reason), `level of → ${line.obj.to} (${line.obj.reason})`);
      assert.ok(line.msg.includes(line.obj.to) && line.msg.includes(line.obj.reason), `message names the change: ${line.msg}`);
      const age = line.obj.evidenceAgeSeconds;
      assert.ok(age === null || (typeof age === 'number' && age >= 0), `evidenceAgeSeconds ${age}`);
    } else {
      assert.equal(line.obj.event, 'spend_sentinel.refresh', `unknown event ${JSON.stringify(line.obj)}`);
      const keys = line.obj.outcome === 'indeterminate' ? INDETERMINATE_KEYS : REFRESH_KEYS;
      assert.deepEqual(Object.keys(line.obj).sort(), [...keys].sort(), 'refresh fields');
      assert.notEqual(line.obj.outcome, 'valid', 'a valid refresh is not logged');
      assert.equal(line.level, expectedRefreshLevel(line.obj.outcome), `level of refresh ${line.obj.outcome}`);
      assert.ok(line.msg.includes(line.obj.outcome), `message names the outcome: ${line.msg}`);
      assert.ok(Number.isFinite(line.obj.durationMs) && line.obj.durationMs >= 0, `durationMs ${line.obj.durationMs}`);
    }
  }
}

const transitionFields = (e) => ({ event: 'spend_sentinel.transition', from: e.from, to: e.to, reason: e.reason, evidenceAgeSeconds: e.evidenceAgeSeconds });

describe('what is logged', () => {
  test('one line per transition (levels, fields) and one per refresh that was not valid, none for valid ones', async () => {
    const rec = recordingLogger();
    const auth = scriptedAuthority();
    const answers = [];
    let answer = 'valid';
    auth.set((call) => {
      if (answer === 'hold') return held(call);
      answers[call.index] = answer;
      return Promise.resolve(answer);
    });
    const sentinel = pool.make({ ...fastOptions(auth, SLOW_TIMEOUT), logger: rec.logger });
    const transitions = recordTransitions(sentinel);
    let cursor = 0;
    const step = async (action, match) => {
      action();
      const event = await transitions.waitFor(match, { from: cursor, ms: 4000 });
      cursor = transitions.events.indexOf(event) + 1;
    };
    await step(() => {}, { to: 'ready' });
    await step(() => assert.equal(sentinel.admit(sentinel.nodeBudgetUnits), true), { to: 'degraded', reason: 'budget_exhausted' });
    await step(() => {}, { to: 'ready' });
    await step(() => (answer = 'indeterminate'), { to: 'degraded' });
    await step(() => {}, { to: 'not_ready', reason: 'evidence_too_old' });
    await step(() => (answer = 'valid'), { to: 'ready' });
    await step(() => (answer = 'invalid_credential'), { to: 'not_ready', reason: 'invalid_credential' });
    await step(() => (answer = 'valid'), { to: 'ready' });
    await step(() => (answer = 'capability_missing'), { to: 'not_ready', reason: 'capability_missing' });
    await step(() => (answer = 'valid'), { to: 'ready' });

    // Hold the next call: every refresh line of the calls before it has been delivered.
    answer = 'hold';
    const last = await auth.nextCall();
    const notValid = answers.slice(0, last.index).filter((a) => a !== 'valid');
    assert.ok(notValid.includes('indeterminate') && notValid.includes('invalid_credential') && notValid.includes('capability_missing'), 'premise');
    assert.deepEqual(
      rec.refreshes().map((l) => [l.level, l.obj.event, l.obj.outcome]),
      notValid.map((o) => [expectedRefreshLevel(o), 'spend_sentinel.refresh', o]),
      'one refresh line per refresh that was not valid, in order; none for the valid ones',
    );
    assert.ok(answers.slice(0, last.index).filter((a) => a === 'valid').length >= 5, 'premise: several valid refreshes');

    await step(() => sentinel.drain(), { to: 'not_ready', reason: 'shutting_down' });
    await rec.until(() => rec.transitions().length >= transitions.events.length, 'a line per transition');
    assert.deepEqual(
      rec.transitions().map((l) => l.obj),
      transitions.events.map(transitionFields),
      'one transition line per transition, with the fields of the event',
    );
    assert.deepEqual(
      rec.transitions().map((l) => l.level),
      ['info', 'warn', 'info', 'warn', 'warn', 'info', 'error', 'info', 'error', 'info', 'warn'],
      'levels: ready info; budget warn; degraded warn; too old warn; denials error; shutting_down warn',
    );
    assert.equal(rec.transitions()[0].obj.from, 'not_ready');
    assert.equal(typeof rec.transitions()[0].obj.evidenceAgeSeconds, 'number', 'evidence age on the first ready');
    assertWellFormed(rec);
    last.release('valid');
  });

  test('a sentinel whose refreshes are all valid logs only its transition to ready', async () => {
    const rec = recordingLogger();
    const auth = scriptedAuthority('valid');
    const sentinel = pool.make({ ...fastOptions(auth), logger: rec.logger });
    const transitions = recordTransitions(sentinel);
    await transitions.waitFor({ to: 'ready' });
    await auth.call(8); // eight refreshes answered: their lines (if any) came before this call
    await rec.until(() => rec.transitions().length === 1, 'the ready line');
    assert.deepEqual(
      rec.lines.map((l) => [l.level, l.obj]),
      [['info', transitionFields(transitions.events[0])]],
    );
    assertWellFormed(rec);
  });

  test('no evidence at all: a line per refresh that failed, no transition line (still not_ready)', async () => {
    const rec = recordingLogger();
    const auth = scriptedAuthority();
    const answers = ['indeterminate', 'invalid_credential', 'indeterminate', 'capability_missing'];
    auth.set((call) => (call.index < answers.length ? Promise.resolve(answers[call.index]) : held(call)));
    const sentinel = pool.make({ ...fastOptions(auth, SLOW_TIMEOUT), logger: rec.logger });
    const transitions = recordTransitions(sentinel);
    const heldCall = await auth.call(answers.length);
    assert.deepEqual(
      rec.lines.map((l) => [l.level, l.obj.event, l.obj.outcome]),
      answers.map((o) => [expectedRefreshLevel(o), 'spend_sentinel.refresh', o]),
    );
    assert.deepEqual(transitions.events, [], 'premise: no status change');
    assertWellFormed(rec);
    heldCall.release('valid');
    await transitions.waitFor({ to: 'ready' });
  });
});

// Regression: the logger is called with napi-rs `Function::apply`, which (unlike `Function::call`)
// leaves a thrown exception pending; Node then raised it as an uncaughtException and the process
// died at the first log line. `JsLogger::log` now clears it.
describe('a logger that fails', () => {
  for (const [what, thrown] of [
    ['an Error', () => new Error('log sink down')],
    ['a string', () => 'log sink down'],
  ]) {
    test(`methods that throw ${what} do not break the sentinel: no uncaught exception; transitions, listeners, whenReady, admit and metrics still work`, async () => {
      let calls = 0;
      let armed = true; // disarmed before the test ends, so the close line in afterEach cannot throw into another test
      const maybeThrow = () => {
        calls += 1;
        if (armed) throw thrown();
      };
      const throwing = { info: maybeThrow, warn: maybeThrow, error: maybeThrow };
      const uncaught = [];
      const onUncaught = (err) => uncaught.push(err);
      process.on('uncaughtException', onUncaught);
      try {
        const auth = scriptedAuthority('valid');
        const sentinel = pool.make({ ...fastOptions(auth), logger: throwing });
        const transitions = recordTransitions(sentinel);
        const second = [];
        sentinel.onTransition((e) => second.push(e.to));
        await transitions.waitFor({ to: 'ready' });
        auth.set('indeterminate');
        await transitions.waitFor({ to: 'degraded' });
        await auth.nextCall(); // the line of the degrading refresh has been attempted
        auth.set('valid');
        await transitions.waitFor({ from: 'degraded', to: 'ready' });
        assert.ok(calls >= 3, `the logger was called (${calls} times)`);
        assert.deepEqual(transitions.events.map((e) => e.to), ['ready', 'degraded', 'ready'], 'every transition reached the listener');
        assert.deepEqual(second, ['ready', 'degraded', 'ready'], 'a second listener too');
        const readiness = await withTimeout(sentinel.whenReady(), 3000, 'whenReady');
        assert.equal(readiness.status, 'ready');
        assert.equal(sentinel.admit(1), true);
        const text = sentinel.metrics();
        crossCheck(text, readExposition(text));
        assert.deepEqual(uncaught.map(String), [], 'a logger exception escaped as an uncaught exception');
      } finally {
        armed = false;
        process.off('uncaughtException', onUncaught);
      }
    });
  }
});

describe('the logger option is validated', () => {
  const auth = () => scriptedAuthority('valid');
  const noop = () => {};
  const BAD = [
    ['missing error', { info: noop, warn: noop }],
    ['missing info', { warn: noop, error: noop }],
    ['error not a function', { info: noop, warn: noop, error: 'console.error' }],
    ['an empty object', {}],
    ['null', null],
    ['a string', 'pino'],
    ['a number', 3],
    ['a boolean', true],
    ['a function', Object.assign(() => {}, { info: noop, warn: noop, error: noop })],
    ['an array', [noop, noop, noop]],
  ];
  for (const [what, logger] of BAD) {
    test(`${what} → ERR_SPEND_SENTINEL_CONFIG naming logger; nothing starts`, async () => {
      const a = auth();
      const err = catchError(() => pool.make({ ...fastOptions(a), logger }));
      assert.equal(err.code, 'ERR_SPEND_SENTINEL_CONFIG', `code (${err.message})`);
      assert.match(err.message, /\blogger\b/, 'the message names the option');
      // One rule, whether the config (not an object) or the binding (a method missing) refuses.
      assert.match(err.message, /must be an object with info, warn and error methods/, 'the rule');
      await quietPeriod(60); // absence: a rejected configuration starts no refresh
      assert.equal(a.callCount, 0, 'inspect was called for a sentinel that was never made');
    });
  }

  test('logger: undefined is no logger', async () => {
    const a = auth();
    const sentinel = pool.make({ ...fastOptions(a), logger: undefined });
    await recordTransitions(sentinel).waitFor({ to: 'ready' });
  });
});

describe('pino-like loggers', () => {
  test('a class instance with its methods on the prototype (and private state) gets every line, with this = the instance', async () => {
    class Base {
      #sink;
      constructor(sink) {
        this.#sink = sink;
        this.level = 'info';
      }
      #write(level, obj, msg) {
        this.#sink.push({ level, obj, msg }); // throws a TypeError when `this` is not the instance
      }
      info(obj, msg) {
        this.#write('info', obj, msg);
      }
      warn(obj, msg) {
        this.#write('warn', obj, msg);
      }
      error(obj, msg) {
        this.#write('error', obj, msg);
      }
    }
    class AppLogger extends Base {
      child() {
        return this;
      }
    }
    const sink = [];
    const logger = new AppLogger(sink);
    assert.ok(!Object.hasOwn(logger, 'info') && !Object.hasOwn(Object.getPrototypeOf(logger), 'info'), 'premise: inherited methods');
    const auth = scriptedAuthority('valid');
    const sentinel = pool.make({ ...fastOptions(auth), logger });
    const transitions = recordTransitions(sentinel);
    await transitions.waitFor({ to: 'ready' });
    auth.set('indeterminate');
    await transitions.waitFor({ to: 'degraded' });
    const next = await auth.nextCall(); // the indeterminate line of the degrading refresh came before
    auth.set('invalid_credential');
    await transitions.waitFor({ reason: 'invalid_credential' });
    assert.ok(next.index >= 2);
    const t = sink.filter((l) => l.obj.event === 'spend_sentinel.transition');
    assert.deepEqual(
      t.slice(0, 3).map((l) => [l.level, l.obj.to, l.obj.reason]),
      [
        ['info', 'ready', 'verified'],
        ['warn', 'degraded', 'refresh_indeterminate'],
        ['error', 'not_ready', 'invalid_credential'],
      ],
    );
    const r = sink.filter((l) => l.obj.event === 'spend_sentinel.refresh');
    assert.ok(r.some((l) => l.level === 'warn' && l.obj.outcome === 'indeterminate'), 'indeterminate refresh line');
    assert.ok(sink.every((l) => typeof l.msg === 'string'), 'messages');
  });

  test('a real pino logger (fastify\'s) writes JSON lines with the fields at their levels', async () => {
    // pino is fastify's logger; resolve it through fastify (a devDependency), not by hoisting luck.
    const pino = createRequire(require.resolve('fastify'))('pino');
    const out = [];
    const logger = pino({ level: 'info', base: null, timestamp: false }, { write: (s) => out.push(JSON.parse(s)) });
    const auth = scriptedAuthority('valid');
    const sentinel = pool.make({ ...fastOptions(auth), logger });
    const transitions = recordTransitions(sentinel);
    await transitions.waitFor({ to: 'ready' });
    auth.set('capability_missing');
    await transitions.waitFor({ reason: 'capability_missing' });
    await pollUntil(() => out.filter((l) => l.event === 'spend_sentinel.transition').length >= 2, { label: 'two pino transition lines' });
    const ready = out.find((l) => l.event === 'spend_sentinel.transition' && l.to === 'ready');
    const denied = out.find((l) => l.event === 'spend_sentinel.transition' && l.reason === 'capability_missing');
    assert.ok(ready && denied, `pino lines: ${JSON.stringify(out)}`);
    assert.deepEqual(
      { level: ready.level, from: ready.from, to: ready.to, reason: ready.reason },
      { level: 30, from: 'not_ready', to: 'ready', reason: 'verified' },
      'info = 30',
    );
    assert.equal(denied.level, 50, 'error = 50');
    assert.equal(typeof ready.msg, 'string');
    assert.equal(typeof ready.evidenceAgeSeconds, 'number');
    const refresh = out.find((l) => l.event === 'spend_sentinel.refresh');
    assert.ok(refresh, 'a refresh line');
    assert.deepEqual({ level: refresh.level, outcome: refresh.outcome }, { level: 50, outcome: 'capability_missing' });
    assert.equal(typeof refresh.durationMs, 'number');
  });
});
