// `sentinel.hold(name)` (README, Readiness): the service's own push-style readiness signal. While
// any hold is open readiness is not_ready / held (after the denials, before no_evidence) and the
// probes answer 503; admission goes on (as while draining). Holds may share a name, each release
// ends its own, releasing twice does nothing; names appear in the logger's lines and the
// spend_sentinel_holds gauge, never in a probe body; a bad name is a TypeError that opens nothing.
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { FRAMEWORKS, request } from './helpers/frameworks.mjs';
import { catchError, deferred, fastOptions, held, recordTransitions, scriptedAuthority, sentinelPool, sequence } from './helpers/wait.mjs';
import { byLabel, crossCheck, readExposition } from './helpers/exposition.mjs';
import { crossCheckOpenMetrics, readOpenMetrics, referencePython } from './helpers/openmetrics.mjs';

const require = createRequire(import.meta.url);
const { Sentinel } = require('spend-sentinel');

/** Node budget 1000, window 10 s, pauses of 20 to 40 ms; a held refresh stays in flight. */
const ROOMY = { budget: { unverifiedUnits: 1000, maxUnitsPerSecond: 100 }, refresh: { timeoutMs: 5000 } };

const pool = sentinelPool(Sentinel);
const apps = new Set();
afterEach(async () => {
  for (const app of apps) await app.close();
  apps.clear();
  pool.closeAll();
});

function start(behaviour, extra = {}) {
  const auth = scriptedAuthority(behaviour);
  const sentinel = pool.make({ ...fastOptions(auth, ROOMY), ...extra });
  const transitions = recordTransitions(sentinel);
  return { auth, sentinel, transitions };
}

/** Ready on a first valid answer; the later refreshes stay in flight. */
async function startReady(extra) {
  const ctx = start(sequence(['valid'], held), extra);
  await ctx.transitions.waitFor({ to: 'ready' });
  return ctx;
}

const holdsGauge = (sentinel) => {
  const text = sentinel.metrics();
  const families = readExposition(text);
  crossCheck(text, families);
  return byLabel(families, 'spend_sentinel_holds', 'name');
};

describe('the probes and admission while held', () => {
  for (const fw of FRAMEWORKS) {
    test(`${fw.name}: /ready answers 503 held without the hold's name; metered requests still pass; the release makes it 200`, async () => {
      const { sentinel } = await startReady();
      const app = await fw.start(sentinel);
      apps.add(app);
      assert.equal((await request(`${app.url}/ready`)).status, 200, 'premise: ready');

      const release = sentinel.hold('model-backend-warming');
      assert.equal(typeof release, 'function');
      const r = sentinel.readiness();
      assert.deepEqual([r.status, r.reason, r.httpStatus], ['not_ready', 'held', 503]);
      assert.equal(typeof r.evidenceAgeSeconds, 'number', 'the age is still reported');
      const ready = await request(`${app.url}/ready`);
      assert.equal(ready.status, 503);
      assert.deepEqual(Object.keys(ready.json).sort(), ['evidence_age_seconds', 'reason', 'status']);
      assert.deepEqual([ready.json.status, ready.json.reason], ['not_ready', 'held']);
      assert.ok(!ready.text.includes('model-backend'), `no hold name in the body: ${ready.text}`);
      assert.equal(sentinel.isServing(), false);

      const usage = await request(`${app.url}/api/usage`, { method: 'POST', headers: { 'x-units': '5' } });
      assert.deepEqual([usage.status, usage.json], [200, { recorded: 5 }], 'admission is not affected by a hold');
      assert.equal(sentinel.exposureUnits, 5);
      assert.equal(sentinel.refusalReason(1), null);
      assert.equal(sentinel.admit(1), true);

      release();
      assert.deepEqual([sentinel.readiness().status, (await request(`${app.url}/ready`)).status], ['ready', 200]);
    });
  }
});

describe('holds, names and releases', () => {
  test('holds that share a name end one release at a time; releasing twice does nothing; the gauge counts them by name', async () => {
    const { sentinel } = await startReady();
    assert.deepEqual(holdsGauge(sentinel), {}, 'no name held yet: no series');
    const first = sentinel.hold('cache');
    const second = sentinel.hold('cache');
    const backend = sentinel.hold('backend:eu-1');
    assert.deepEqual(holdsGauge(sentinel), { 'backend:eu-1': 1, cache: 2 });

    first();
    first();
    assert.deepEqual(holdsGauge(sentinel), { 'backend:eu-1': 1, cache: 1 }, 'the second release of one hold ends nothing');
    backend();
    assert.equal(sentinel.readiness().reason, 'held', 'one hold is still open');
    second();
    assert.equal(sentinel.readiness().reason, 'verified');
    assert.deepEqual(holdsGauge(sentinel), { 'backend:eu-1': 0, cache: 0 }, 'a name once held stays, at 0');
    second();
    backend();
    assert.equal(sentinel.readiness().reason, 'verified');

    const again = sentinel.hold('cache');
    first();
    assert.equal(sentinel.readiness().reason, 'held', "an old release does not end a new hold of the same name");
    again();
    assert.equal(sentinel.readiness().reason, 'verified');
  });

  test('the OpenMetrics rendering shows the same gauge', async (t) => {
    const { sentinel } = await startReady();
    sentinel.hold('warming');
    const text = sentinel.metrics({ format: 'openmetrics' });
    const families = readOpenMetrics(text); // the strict reader always; Python's where installed
    if (referencePython) crossCheckOpenMetrics(text, families);
    else t.diagnostic('prometheus_client is not installed: the strict reader only');
    assert.ok(text.split('\n').includes('spend_sentinel_holds{name="warming"} 1'), text);
  });

  test('a hold comes after the denials and before no_evidence; whenReady waits for its release', async () => {
    const auth = scriptedAuthority(held);
    const sentinel = pool.make(fastOptions(auth, ROOMY));
    const transitions = recordTransitions(sentinel);
    const release = sentinel.hold('startup');
    assert.equal(sentinel.readiness().reason, 'held', 'before no_evidence');
    const whenReady = sentinel.whenReady({ timeoutMs: 5000 });
    let settled = false;
    whenReady.then(() => (settled = true), () => (settled = true));

    (await auth.call(0)).release('invalid_credential');
    await auth.call(1);
    assert.equal(sentinel.readiness().reason, 'invalid_credential', 'a denial comes first');
    auth.calls[1].release('valid');
    const second = await auth.call(2);
    assert.deepEqual([sentinel.readiness().status, sentinel.readiness().reason], ['not_ready', 'held']);
    assert.equal(transitions.events.length, 0, 'not_ready all along: no transition');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, false, 'whenReady waits while held');

    release();
    const r = await whenReady;
    assert.deepEqual([r.status, r.reason], ['ready', 'verified']);
    await transitions.waitFor({ from: 'not_ready', to: 'ready', reason: 'verified' });
    second.release('valid');
  });

  test('onTransition hears a hold and its release when they change the status', async () => {
    const { sentinel, transitions } = await startReady();
    const release = sentinel.hold('deploy');
    const heldEvent = await transitions.waitFor({ to: 'not_ready' });
    assert.deepEqual([heldEvent.from, heldEvent.reason], ['ready', 'held']);
    release();
    const back = await transitions.waitFor({ to: 'ready' }, { from: transitions.events.indexOf(heldEvent) + 1 });
    assert.deepEqual([back.from, back.reason], ['not_ready', 'verified']);
  });

  test('drain and close outrank a hold; a release after close() does nothing wrong', async () => {
    const { sentinel } = await startReady();
    const release = sentinel.hold('cache');
    sentinel.drain();
    assert.equal(sentinel.readiness().reason, 'shutting_down');
    assert.equal(sentinel.admit(1), true, 'draining and held: admission goes on');
    await sentinel.close();
    release();
    assert.equal(sentinel.readiness().reason, 'shutting_down');
    assert.equal(sentinel.admit(1), false);
  });
});

describe('bad names', () => {
  const BAD = [
    ['', 'an empty string'],
    ['x'.repeat(65), '65 characters'],
    ['warm cache', "' ' at position 5"],
    ['café', "'é' at position 4"],
    ['a"b', `'"' at position 2`],
    ['x}\n', "'}' at position 2"],
    [42, 'number'],
    [undefined, 'undefined'],
    [null, 'null'],
    [{ name: 'cache' }, 'object'],
    [Symbol('cache'), 'symbol'],
  ];
  for (const [name, got] of BAD) {
    test(`hold(${typeof name === 'string' ? JSON.stringify(name).slice(0, 20) : String(name)}) throws a TypeError naming the rule, and opens nothing`, async () => {
      const { sentinel, transitions } = await startReady();
      const err = catchError(() => sentinel.hold(name));
      assert.ok(err instanceof TypeError, `a TypeError: ${err}`);
      assert.equal(err.code, 'ERR_SPEND_SENTINEL_CONFIG');
      assert.equal(err.message, `hold: name: must be a string of 1 to 64 characters from A-Z a-z 0-9 _ . : - (got ${got})`);
      assert.equal(sentinel.readiness().reason, 'verified');
      assert.deepEqual(holdsGauge(sentinel), {});
      assert.equal(transitions.events.length, 1, 'only the first ready');
    });
  }

  test('64 characters of every allowed kind pass', async () => {
    const { sentinel } = await startReady();
    const name = 'Az09_.:-'.repeat(8);
    sentinel.hold(name)();
    assert.deepEqual(holdsGauge(sentinel), { [name]: 0 });
  });
});

describe('logs', () => {
  test("the logger hears each hold and each release at info, with the hold's name; a second release makes no line", async () => {
    const lines = [];
    const logger = {};
    for (const level of ['info', 'warn', 'error']) logger[level] = (obj, msg) => lines.push({ level, obj, msg });
    const { sentinel, transitions } = await startReady({ logger });
    const holds = () => lines.filter((l) => l.obj.event?.startsWith('spend_sentinel.hold'));

    const release = sentinel.hold('model-backend');
    assert.deepEqual(holds().map((l) => [l.level, l.obj]), [['info', { event: 'spend_sentinel.hold', name: 'model-backend', openHolds: 1 }]]);
    assert.match(holds()[0].msg, /hold model-backend opened/);
    const opened = deferred();
    setTimeout(opened.resolve, 20);
    await opened.promise;
    release();
    release();
    assert.equal(holds().length, 2, 'one line per release that ended a hold');
    const [, released] = holds();
    assert.equal(released.level, 'info');
    assert.deepEqual(Object.keys(released.obj).sort(), ['event', 'heldSeconds', 'name', 'openHolds']);
    assert.deepEqual([released.obj.event, released.obj.name, released.obj.openHolds], ['spend_sentinel.hold_released', 'model-backend', 0]);
    assert.ok(Number.isFinite(released.obj.heldSeconds) && released.obj.heldSeconds >= 0.015, `heldSeconds ${released.obj.heldSeconds}: held 20 ms at least`);

    await transitions.waitFor({ to: 'ready' }, { from: 2 });
    const moves = lines.filter((l) => l.obj.event === 'spend_sentinel.transition').map((l) => [l.level, l.obj.to, l.obj.reason]);
    assert.deepEqual(moves.slice(1), [
      ['warn', 'not_ready', 'held'],
      ['info', 'ready', 'verified'],
    ]);
  });
});

describe('a logger that holds', () => {
  test('a hold opened from inside the logger (on a hold line) opens, and nothing hangs; its own line is dropped', async () => {
    let inner = null;
    const lines = [];
    const logger = {
      info(obj) {
        lines.push(obj);
        if (obj.event === 'spend_sentinel.hold' && obj.name === 'outer' && inner === null) inner = sentinel.hold('inner');
      },
      warn() {},
      error() {},
    };
    // The logger reads `sentinel` only on a hold line, once it is made.
    const { sentinel } = await startReady({ logger });
    const release = sentinel.hold('outer');
    assert.equal(typeof inner, 'function', 'the inner hold opened');
    assert.deepEqual(holdsGauge(sentinel), { inner: 1, outer: 1 });
    assert.deepEqual(lines.filter((l) => l.event === 'spend_sentinel.hold').map((l) => l.name), ['outer']);
    release();
    inner();
    assert.equal(sentinel.readiness().reason, 'verified');
  });
});
