// The admission guard (docs/frameworks.md "Admission") and the probes' bypass of the app's own
// throttles, auth and CORS, through real Express 5 and Fastify 5 servers (helpers/frameworks.mjs).
// Every behaviour runs against both frameworks. The sentinel sits on a scripted authority whose
// refreshes the test holds, so the ledger and the readiness move only when the test says.
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { FRAMEWORKS, TOKEN, request } from './helpers/frameworks.mjs';
import {
  SEED_BUDGET,
  catchError,
  fastOptions,
  held,
  recordTransitions,
  scriptedAuthority,
  sentinelPool,
  sequence,
  withTimeout,
} from './helpers/wait.mjs';

const require = createRequire(import.meta.url);
const { Sentinel } = require('../js/main.js');
const spendExpress = require('spend-sentinel/express');
const spendFastify = require('spend-sentinel/fastify');

/**
 * Node budget 100 units (as fastOptions), but a 10 s window and a 5 s refresh timeout: a held
 * refresh stays in flight (no indeterminate, no aging out) for the whole test, so /ready keeps
 * saying `verified` and the ledger changes only through admissions.
 */
const HELD = { budget: { maxUnitsPerSecond: 10 }, refresh: { timeoutMs: 5000 } };

const pool = sentinelPool(Sentinel);
const apps = new Set();
afterEach(async () => {
  const open = [...apps];
  apps.clear();
  await Promise.allSettled(open.map((app) => app.close()));
  pool.closeAll();
});

async function startApp(fw, sentinel, options) {
  const app = await fw.start(sentinel, options);
  apps.add(app);
  return app;
}

/** A sentinel that has had one valid refresh; the next refresh is in flight and held. */
async function readyHeld(over = HELD) {
  const auth = scriptedAuthority(sequence(['valid'], held));
  const sentinel = pool.make(fastOptions(auth, over));
  const transitions = recordTransitions(sentinel);
  await transitions.waitFor({ to: 'ready' });
  await auth.call(1); // sent before any admission below; never released unless a test says so
  return { auth, sentinel, transitions };
}

/** A sentinel whose refreshes never answer: readiness stays `no_evidence`. */
async function neverValid(over = HELD, extra = {}) {
  const auth = scriptedAuthority(held);
  const sentinel = pool.make({ ...fastOptions(auth, over), ...extra });
  await auth.call(0);
  return { auth, sentinel };
}

/** POST /api/usage; the harness reads the units from `x-units` unless the app says otherwise. */
function postUsage(app, units, headers = {}) {
  const h = units === undefined ? headers : { 'x-units': String(units), ...headers };
  return request(`${app.url}/api/usage`, { method: 'POST', headers: h });
}

const getReady = (app) => request(`${app.url}/ready`);

/** docs/frameworks.md: default Retry-After is max(1, ⌈w / 2⌉) seconds. */
const defaultRetryAfter = (sentinel) => String(Math.max(1, Math.ceil(sentinel.staleWindowSeconds / 2)));

function assertAdmitted(res, units) {
  assert.equal(res.status, 200, `expected the route to run; got ${res.status} ${res.text}`);
  assert.deepEqual(res.json, { recorded: units });
}

function assertRefused(res, reason, retryAfter) {
  assert.equal(res.status, 503, `expected a refusal; got ${res.status} ${res.text}`);
  assert.equal(res.headers.get('retry-after'), retryAfter, 'Retry-After header');
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(res.json, { error: 'not_admitted', reason }, `refusal body ${res.text}`);
}

function assertReadyBody(res, httpStatus, status, reason) {
  assert.equal(res.status, httpStatus, `/ready: ${res.text}`);
  assert.deepEqual(Object.keys(res.json).sort(), ['evidence_age_seconds', 'reason', 'status']);
  assert.equal(res.json.status, status);
  assert.equal(res.json.reason, reason);
}

/** Runs `fn(i)` for i in [0, total) with at most `concurrency` calls in flight; results in order. */
async function runLimited(total, concurrency, fn) {
  const results = new Array(total);
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const i = next;
      next += 1;
      results[i] = await fn(i);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}

for (const fw of FRAMEWORKS) {
  describe(`${fw.name}: admission`, () => {
    test('admitted: the route runs and exposureUnits (also read as unverifiedUnits) grows by the units', async () => {
      const { sentinel } = await readyHeld();
      const app = await startApp(fw, sentinel);
      const ledger = () => [sentinel.exposureUnits, sentinel.unverifiedUnits];
      assert.deepEqual(ledger(), [0, 0]);
      assertAdmitted(await postUsage(app, 7), 7);
      assert.deepEqual(ledger(), [7, 7]);
      assertAdmitted(await postUsage(app, 2.5), 2.5);
      assert.deepEqual(ledger(), [9.5, 9.5]);
      assertReadyBody(await getReady(app), 200, 'ready', 'verified');
    });

    test('refused before the first valid refresh: 503 no_evidence, Retry-After, route not run, ledger unchanged', async () => {
      const { sentinel } = await neverValid();
      const app = await startApp(fw, sentinel);
      assertRefused(await postUsage(app, 1), 'no_evidence', defaultRetryAfter(sentinel));
      assertRefused(await postUsage(app, 0), 'no_evidence', defaultRetryAfter(sentinel));
      assert.equal(sentinel.exposureUnits, 0);
      assert.equal(defaultRetryAfter(sentinel), '5', 'test design: HELD has a 10 s window');
    });

    test('units that do not fit while /ready still says verified: 503 budget_exhausted', async () => {
      const { sentinel } = await readyHeld();
      const app = await startApp(fw, sentinel);
      assert.equal(sentinel.nodeBudgetUnits, 100);
      assertAdmitted(await postUsage(app, 60), 60);
      assertReadyBody(await getReady(app), 200, 'ready', 'verified');
      assertRefused(await postUsage(app, 50), 'budget_exhausted', defaultRetryAfter(sentinel));
      assert.equal(sentinel.exposureUnits, 60, 'a refusal adds nothing');
      assertReadyBody(await getReady(app), 200, 'ready', 'verified');
      // What does fit is still admitted, up to exactly the node budget.
      assertAdmitted(await postUsage(app, 40), 40);
      assert.equal(sentinel.exposureUnits, 100);
      // A spent budget refuses requests, not the pod: /ready stays 200, degraded.
      assertReadyBody(await getReady(app), 200, 'degraded', 'budget_exhausted');
      assertRefused(await postUsage(app, 1), 'budget_exhausted', defaultRetryAfter(sentinel));
      assert.equal(sentinel.exposureUnits, 100);
    });

    test('after a denial: 503 invalid_credential; the ledger is kept and not added to', async () => {
      const { auth, sentinel, transitions } = await readyHeld();
      const app = await startApp(fw, sentinel);
      assertAdmitted(await postUsage(app, 5), 5);
      auth.calls[1].release('invalid_credential');
      await transitions.waitFor({ to: 'not_ready', reason: 'invalid_credential' });
      assertRefused(await postUsage(app, 1), 'invalid_credential', defaultRetryAfter(sentinel));
      assert.equal(sentinel.exposureUnits, 5);
    });

    test('after sentinel.close(): 503 shutting_down', async () => {
      const { sentinel } = await readyHeld();
      const app = await startApp(fw, sentinel);
      assertAdmitted(await postUsage(app, 3), 3);
      sentinel.close();
      const before = sentinel.exposureUnits;
      assertRefused(await postUsage(app, 1), 'shutting_down', defaultRetryAfter(sentinel));
      assert.equal(sentinel.exposureUnits, before);
    });

    test('during drain: /ready is 503 shutting_down, admission still admits, a refusal says the real reason', async () => {
      const { sentinel } = await readyHeld();
      const app = await startApp(fw, sentinel);
      sentinel.drain();
      const ready = await getReady(app);
      assertReadyBody(ready, 503, 'not_ready', 'shutting_down');
      assert.equal(typeof ready.json.evidence_age_seconds, 'number');
      assertAdmitted(await postUsage(app, 60), 60);
      assert.equal(sentinel.exposureUnits, 60);
      assertRefused(await postUsage(app, 50), 'budget_exhausted', defaultRetryAfter(sentinel));
      assert.equal(sentinel.exposureUnits, 60);
      assertAdmitted(await postUsage(app, 1), 1);
      assert.equal(sentinel.exposureUnits, 61);
    });

    test('one native call per request: a refusal reads no other sentinel member (reason and window come with the decision)', async () => {
      const { sentinel } = await readyHeld();
      const app = await startApp(fw, sentinel);
      const reads = [];
      // Shadow every member the guard used to read after a refusal (admit, status and isServing
      // are own, read-only properties; the guard calls its own admission function instead).
      for (const name of ['refusalReason', 'readiness']) {
        Object.defineProperty(sentinel, name, { value: () => reads.push(name) });
      }
      for (const name of ['staleWindowSeconds', 'nodeBudgetUnits']) {
        Object.defineProperty(sentinel, name, { get: () => reads.push(name) });
      }
      assertAdmitted(await postUsage(app, 60), 60);
      assertRefused(await postUsage(app, 50), 'budget_exhausted', '5');
      // Nor do the client's mistakes: units no node budget can hold (the fixed budget was read
      // when the guard was made), and units that are not units (the addon judged them).
      assert.equal((await postUsage(app, 150)).status, 413);
      assert.equal((await postUsage(app, -1)).status, 400);
      assert.deepEqual(reads, []);
    });

    test('Retry-After default: max(1, ceil(w / 2)) — "1" for a 1 s window, "3" for the seed 5 s window', async () => {
      const fast = await neverValid({});
      assert.equal(fast.sentinel.staleWindowSeconds, 1);
      const fastApp = await startApp(fw, fast.sentinel);
      assertRefused(await postUsage(fastApp, 1), 'no_evidence', '1');

      // The seed budget with its default cadence (no `refresh` options): w = 5 s.
      const seedAuth = scriptedAuthority(held);
      const seed = pool.make({ budget: SEED_BUDGET, authority: { inspect: seedAuth.inspect } });
      await seedAuth.call(0);
      assert.equal(seed.staleWindowSeconds, 5);
      const seedApp = await startApp(fw, seed);
      assertRefused(await postUsage(seedApp, 1), 'no_evidence', '3');
    });

    test('retryAfterSeconds overrides the default Retry-After', async () => {
      const { sentinel } = await readyHeld();
      const app = await startApp(fw, sentinel, { admission: { retryAfterSeconds: 42 } });
      assertAdmitted(await postUsage(app, 99), 99);
      assertRefused(await postUsage(app, 2), 'budget_exhausted', '42');
      assert.equal(sentinel.exposureUnits, 99);
    });

    test('units default: every request is 1 unit', async () => {
      const { sentinel } = await readyHeld();
      // The harness spreads `admission` over its own `units`, so this really leaves it unset.
      const app = await startApp(fw, sentinel, { admission: { units: undefined } });
      await postUsage(app, 7);
      assert.equal(sentinel.exposureUnits, 1);
      await postUsage(app, 30);
      assert.equal(sentinel.exposureUnits, 2);
    });

    test('units: a fixed number', async () => {
      const { sentinel } = await readyHeld();
      const app = await startApp(fw, sentinel, { admission: { units: 3 } });
      assertAdmitted(await postUsage(app, 7), 7); // the route reports x-units; the guard counted 3
      assert.equal(sentinel.exposureUnits, 3);
      assertAdmitted(await postUsage(app, 7), 7);
      assert.equal(sentinel.exposureUnits, 6);
    });

    test('units: a function of the request', async () => {
      const { sentinel } = await readyHeld();
      const seen = [];
      const units = (req) => {
        seen.push(req.method);
        return Number(req.headers['x-cost']) * 2;
      };
      const app = await startApp(fw, sentinel, { admission: { units } });
      await postUsage(app, undefined, { 'x-cost': '4' });
      assert.equal(sentinel.exposureUnits, 8);
      await postUsage(app, undefined, { 'x-cost': '1.5' });
      assert.equal(sentinel.exposureUnits, 11);
      assert.deepEqual(seen, ['POST', 'POST'], 'called once per request, with the request');
      // 45 × 2 = 90 does not fit in the remaining 89.
      assertRefused(await postUsage(app, undefined, { 'x-cost': '45' }), 'budget_exhausted', defaultRetryAfter(sentinel));
      assert.equal(sentinel.exposureUnits, 11);
    });

    test('a units function that throws: 500 from the error handler, nothing admitted, the app goes on', async () => {
      const { sentinel } = await readyHeld();
      const units = (req) => {
        if (req.headers['x-throw']) throw new Error('units exploded');
        return Number(req.headers['x-units']);
      };
      const app = await startApp(fw, sentinel, { admission: { units } });
      assertAdmitted(await postUsage(app, 5), 5);
      const res = await postUsage(app, 5, { 'x-throw': '1' });
      assert.equal(res.status, 500, `${res.status} ${res.text}`);
      assert.deepEqual(res.json, { error: 'internal' });
      assert.equal(sentinel.exposureUnits, 5);
      assertAdmitted(await postUsage(app, 1), 1);
      assert.equal(sentinel.exposureUnits, 6);
    });

    for (const bad of ['-1', 'NaN']) {
      test(`a units function returning ${bad}: 400 invalid_units, ledger unchanged`, async () => {
        const { sentinel } = await readyHeld();
        const app = await startApp(fw, sentinel); // harness units: Number(x-units)
        assertAdmitted(await postUsage(app, 4), 4);
        const res = await postUsage(app, bad);
        assert.equal(res.status, 400, `${res.status} ${res.text}`);
        assert.deepEqual(res.json, { error: 'invalid_units' });
        assert.equal(res.headers.get('retry-after'), null);
        assert.equal(sentinel.exposureUnits, 4);
        assertReadyBody(await getReady(app), 200, 'ready', 'verified');
      });
    }

    const admissionOf = fw.name === 'express' ? spendExpress.admission : spendFastify.admission;
    const BAD_OPTIONS = [
      ["units 'one'", () => [{ units: 'one' }], 'units'],
      ['units -1', () => [{ units: -1 }], 'units'],
      ['units NaN', () => [{ units: NaN }], 'units'],
      ['retryAfterSeconds 0', () => [{ retryAfterSeconds: 0 }], 'retryAfterSeconds'],
      ['retryAfterSeconds 1.5', () => [{ retryAfterSeconds: 1.5 }], 'retryAfterSeconds'],
      ["retryAfterSeconds '5'", () => [{ retryAfterSeconds: '5' }], 'retryAfterSeconds'],
      ['an unknown key', () => [{ unit: 1 }], 'unit'],
      ['options that are not an object', () => ['fast'], 'options'],
    ];
    for (const [label, args, option] of BAD_OPTIONS) {
      test(`admission(sentinel, ${label}) throws ERR_SPEND_SENTINEL_CONFIG naming "${option}"`, async () => {
        const { sentinel } = await neverValid();
        const err = catchError(() => admissionOf(sentinel, ...args()));
        assert.ok(err instanceof Error, `expected an Error, got ${err}`);
        assert.equal(err.code, 'ERR_SPEND_SENTINEL_CONFIG');
        assert.match(err.message, new RegExp(`\\b${option}\\b`), err.message);
      });
    }

    test('a fixed units admit() would refuse is refused with admit()\'s own rule, nothing admitted', async () => {
      const { sentinel } = await neverValid();
      for (const [units, got] of [[-1, '-1'], [NaN, 'NaN'], ['one', 'string'], [null, 'null']]) {
        const err = catchError(() => admissionOf(sentinel, { units }));
        assert.equal(err.code, 'ERR_SPEND_SENTINEL_CONFIG', String(units));
        assert.equal(err.cause?.code, 'ERR_SPEND_SENTINEL_UNITS', String(units));
        // The rule is the addon's, word for word: admit(units) throws the same message.
        assert.ok(err.message.includes(catchError(() => sentinel.admit(units)).message), err.message);
        assert.ok(err.message.includes(`(got ${got})`), err.message);
      }
      assert.equal(sentinel.exposureUnits, 0);
    });

    test('admission() without a sentinel throws ERR_SPEND_SENTINEL_CONFIG naming "sentinel"', () => {
      const lookalike = Object.fromEntries(
        ['readiness', 'admit', 'refusalReason', 'isServing', 'onTransition', 'drain', 'close', 'metricFamilies'].map((m) => [m, () => null]),
      );
      for (const notSentinel of [undefined, null, {}, { admit: () => true }, lookalike]) {
        const err = catchError(() => admissionOf(notSentinel, { units: 1 }));
        assert.equal(err.code, 'ERR_SPEND_SENTINEL_CONFIG');
        assert.match(err.message, /\bsentinel\b/, err.message);
      }
    });

    test('admission() accepts every valid option form', async () => {
      const { sentinel } = await neverValid();
      for (const options of [undefined, {}, { units: 0 }, { units: 2.5 }, { units: () => 1, retryAfterSeconds: 1 }]) {
        assert.equal(typeof admissionOf(sentinel, options), 'function', JSON.stringify(options));
      }
    });
  });

  describe(`${fw.name}: probes bypass throttles, auth and CORS`, () => {
    /**
     * Ready on an always-valid authority; a 10 s window so a busy event loop cannot age it out,
     * and a 5 s refresh timeout so it cannot make a refresh inconclusive either (the 2000 probes
     * keep the loop that answers `inspect` busy; on a loaded machine that took over 300 ms).
     */
    async function guardedApp() {
      const auth = scriptedAuthority('valid');
      const sentinel = pool.make(fastOptions(auth, { budget: { maxUnitsPerSecond: 10 }, refresh: { timeoutMs: 5000 } }));
      await withTimeout(sentinel.whenReady(), 3000, 'the sentinel to become ready');
      return startApp(fw, sentinel, { guarded: true });
    }

    const PROBES = [
      ['/ready', 'ready'],
      ['/live', 'alive'],
      ['/startup', 'started'],
    ];

    /** One probe request, without a token but with an Origin; returns a short description. */
    async function probe(app, i) {
      const [path] = PROBES[i % PROBES.length];
      const res = await request(`${app.url}${path}`, { headers: { origin: 'http://elsewhere.example' } });
      const leaked = [...res.headers.keys()].filter((h) => /ratelimit|access-control|www-authenticate/i.test(h));
      return `${path} ${res.status} ${res.json?.status}${leaked.length ? ` +${leaked.join(',')}` : ''}`;
    }

    function assertAllProbesOk(results) {
      const counts = {};
      for (const r of results) counts[r] = (counts[r] ?? 0) + 1;
      const expected = {};
      for (const [i, [path, status]] of PROBES.entries()) {
        expected[`${path} 200 ${status}`] = results.filter((_, j) => j % PROBES.length === i).length;
      }
      assert.deepEqual(counts, expected, 'every probe answers 200 itself, untouched by limiter, auth or CORS');
    }

    test('2000 probes in a row all answer 200; the app\'s first authorized request is then 200, the next 429', async () => {
      const app = await guardedApp();
      assertAllProbesOk(await runLimited(2000, 20, (i) => probe(app, i)));

      // The limit (1/min) was not spent by the probes: the first request of the app's own is let through.
      const auth = { authorization: `Bearer ${TOKEN}` };
      const first = await request(`${app.url}/api/data`, { headers: auth });
      assert.equal(first.status, 200, `first authorized request: ${first.text}`);
      assert.deepEqual(first.json, { data: 'ok' });
      const second = await request(`${app.url}/api/data`, { headers: auth });
      assert.equal(second.status, 429, `second authorized request within the minute: ${second.text}`);

      // With the limit spent, probes still answer.
      assertAllProbesOk(await runLimited(30, 10, (i) => probe(app, i)));
    });

    test('the app\'s own routes: 401 without a token, CORS headers present', async () => {
      const app = await guardedApp();
      const origin = { origin: 'http://elsewhere.example' };
      const anonymous = await request(`${app.url}/api/data`, { headers: origin });
      assert.equal(anonymous.status, 401, anonymous.text);
      assert.deepEqual(anonymous.json, { error: 'unauthorized' });
      assert.equal(anonymous.headers.get('access-control-allow-origin'), '*', 'CORS is mounted');

      const preflight = await request(`${app.url}/api/data`, {
        method: 'OPTIONS',
        headers: { ...origin, 'access-control-request-method': 'GET' },
      });
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers.get('access-control-allow-origin'), '*');

      // Order of limiter and auth differs (observed): Express runs the limiter before the auth
      // check, so the anonymous request above spent the one request of the minute; Fastify runs
      // the auth hook before the limiter's route-level hook, so anonymous requests never count.
      const withToken = await request(`${app.url}/api/data`, { headers: { ...origin, authorization: `Bearer ${TOKEN}` } });
      const again = await request(`${app.url}/api/data`, { headers: origin });
      if (fw.name === 'express') {
        assert.deepEqual([withToken.status, again.status], [429, 429]);
      } else {
        assert.deepEqual([withToken.status, again.status], [200, 401]);
      }
      assert.equal(withToken.headers.get('access-control-allow-origin'), '*');
    });
  });
}
