// The three probe routes (docs/frameworks.md, The probes) served by the Express middleware and the Fastify plugin, each
// test run against a real Express 5 and a real Fastify 5 app on 127.0.0.1 (helpers/frameworks.mjs).
//   /ready    readiness over HTTP; reads memory only
//   /live     this process only (event-loop delay), never the authority, never draining;
//             ?deep=1 adds bounded, shared `checks`
//   /startup  latches once the sentinel's first refresh has finished, whatever its outcome
// Every other request passes on untouched; bad options fail with ERR_SPEND_SENTINEL_CONFIG.
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { FRAMEWORKS, pollEndpoint, request } from './helpers/frameworks.mjs';
import {
  deferred,
  fastOptions,
  held,
  never,
  now,
  recordTransitions,
  rejectionOf,
  scriptedAuthority,
  sentinelPool,
  sequence,
  withTimeout,
} from './helpers/wait.mjs';

const require = createRequire(import.meta.url);
const { Sentinel } = require('../js/main.js');
const express = require('express');
const Fastify = require('fastify');
const spendExpress = require('spend-sentinel/express');
const spendSentinel = require('spend-sentinel/fastify');

const READY_KEYS = ['evidence_age_seconds', 'reason', 'status'];
/** Window 10 s and refresh timeout 5 s: a held refresh stays in flight for the whole test. */
const ROOMY = { budget: { unverifiedUnits: 1000, maxUnitsPerSecond: 100 }, refresh: { timeoutMs: 5000 } };
/** A tight liveness limit, sampled often, so a short block is detected and forgotten quickly. */
const TIGHT_LOOP = { maxEventLoopDelayMs: 200, eventLoopSampleMs: 200 };

const pool = sentinelPool(Sentinel);
const apps = new Set();
afterEach(async () => {
  for (const app of apps) {
    try {
      await app.close();
    } catch {
      // cleanup must go on; a failing close is not what these tests assert
    }
  }
  apps.clear();
  pool.closeAll();
});

/** A sentinel on a scripted authority (fast timings unless `over` says otherwise), transitions recorded. */
function makeSentinel(behaviour, over) {
  const auth = scriptedAuthority(behaviour);
  const sentinel = pool.make(fastOptions(auth, over));
  const transitions = recordTransitions(sentinel);
  return { auth, sentinel, transitions };
}

/** Starts `fw`'s app with these probe options; closed in afterEach. */
async function serve(fw, sentinel, probes = {}) {
  const app = await fw.start(sentinel, { probes });
  apps.add(app);
  return app;
}


function assertProbeHeaders(res, what) {
  assert.equal(res.headers.get('cache-control'), 'no-store', `${what}: cache-control`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json\b/, `${what}: content-type`);
}

function assertReadyBody(res, status, reason) {
  assert.deepEqual(Object.keys(res.json ?? {}).sort(), READY_KEYS, `exactly three keys, got ${res.text}`);
  assert.equal(res.json.status, status, `status in ${res.text}`);
  assert.equal(res.json.reason, reason, `reason in ${res.text}`);
}

/** Sets (or, with `undefined`, removes) an environment variable around `fn`, then restores it. */
async function withEnv(name, value, fn) {
  const had = Object.hasOwn(process.env, name);
  const old = process.env[name];
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
  try {
    return await fn();
  } finally {
    if (had) process.env[name] = old;
    else delete process.env[name];
  }
}

/**
 * Blocks this process's event loop for `ms` from inside a timer callback due after `delayMs`;
 * resolves after the block.
 */
function blockEventLoop(ms, delayMs = 0) {
  return new Promise((resolve) => {
    setTimeout(() => {
      const end = now() + ms;
      while (now() < end) {
        // busy-wait: nothing else in this process runs meanwhile
      }
      resolve();
    }, delayMs);
  });
}

/**
 * Starts `fw`'s app with only the probes and arranges a `blockMs` event-loop block that starts
 * right after the probes' first sampling reset, in the same timer pass:
 *  - right after the probes are created, a timer due `eventLoopSampleMs` later will block; it joins
 *    the sampler's timer list (same duration), queued after the sampler's interval;
 *  - a short busy "bridge", started before either is due and kept up until both are, makes them
 *    run back to back in one timer pass, whatever time passed between their creation.
 * (A periodic job started at boot with the same period as the sampling does the same.)
 * Resolves `{ url, blocked }`; the app is closed in afterEach.
 */
async function serveWithBlockAfterFirstSample(fw, sentinel, probeOptions, blockMs) {
  const sampleMs = probeOptions.eventLoopSampleMs;
  const bridge = { until: Infinity };
  const beforeProbes = () =>
    setTimeout(() => {
      while (now() < bridge.until) {
        // busy-wait until both timers below are due
      }
    }, sampleMs - 20);
  let blocked;
  const afterProbes = () => {
    blocked = blockEventLoop(blockMs, sampleMs);
    bridge.until = now() + sampleMs + 3;
  };
  if (fw.name === 'express') {
    const app = express();
    beforeProbes();
    const middleware = spendExpress.probes(sentinel, probeOptions);
    afterProbes();
    app.use(middleware);
    const server = await new Promise((resolve, reject) => {
      const s = app.listen(0, '127.0.0.1', (err) => (err ? reject(err) : resolve(s)));
    });
    const entry = {
      async close() {
        middleware.close();
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      },
    };
    apps.add(entry);
    return { url: `http://127.0.0.1:${server.address().port}`, blocked };
  }
  const app = Fastify();
  apps.add({
    async close() {
      app.server.closeAllConnections();
      await app.close();
    },
  });
  beforeProbes();
  app.register(spendSentinel, { sentinel, ...probeOptions });
  app.register(async () => afterProbes());
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: `http://127.0.0.1:${app.server.address().port}`, blocked };
}

for (const fw of FRAMEWORKS) {
  describe(`${fw.name}: /ready`, () => {
    test(`${fw.name}: ready → 200, exactly three keys, no-store, JSON`, async () => {
      const { sentinel } = makeSentinel('valid');
      const { url } = await serve(fw, sentinel);
      const res = await pollEndpoint(`${url}/ready`, (r) => r.json?.status === 'ready', { label: '/ready to say ready' });
      assert.equal(res.status, 200);
      assertReadyBody(res, 'ready', 'verified');
      assert.equal(typeof res.json.evidence_age_seconds, 'number');
      assert.ok(res.json.evidence_age_seconds >= 0 && res.json.evidence_age_seconds < 1, `age ${res.json.evidence_age_seconds}`);
      assertProbeHeaders(res, 'GET /ready');
    });

    test(`${fw.name}: degraded (valid, then indeterminate) → 200 refresh_indeterminate`, async () => {
      const { sentinel, transitions } = makeSentinel(sequence(['valid'], 'indeterminate'), ROOMY);
      const { url } = await serve(fw, sentinel);
      await transitions.waitFor({ to: 'degraded' });
      const res = await pollEndpoint(`${url}/ready`, (r) => r.json?.status === 'degraded', { label: '/ready to say degraded' });
      assert.equal(res.status, 200, 'degraded still serves');
      assertReadyBody(res, 'degraded', 'refresh_indeterminate');
      assert.equal(typeof res.json.evidence_age_seconds, 'number');
      assertProbeHeaders(res, 'GET /ready (degraded)');
    });

    test(`${fw.name}: before the first valid answer → 503 not_ready / no_evidence, age null`, async () => {
      const { auth, sentinel } = makeSentinel(held, ROOMY);
      const { url } = await serve(fw, sentinel);
      await auth.call(0);
      const res = await request(`${url}/ready`);
      assert.equal(res.status, 503);
      assert.deepEqual(res.json, { status: 'not_ready', evidence_age_seconds: null, reason: 'no_evidence' });
      assertProbeHeaders(res, 'GET /ready (no_evidence)');
    });

    test(`${fw.name}: invalid_credential → 503 not_ready / invalid_credential`, async () => {
      const { sentinel } = makeSentinel('invalid_credential');
      const { url } = await serve(fw, sentinel);
      const res = await pollEndpoint(`${url}/ready`, (r) => r.json?.reason === 'invalid_credential', {
        label: '/ready to report invalid_credential',
      });
      assert.equal(res.status, 503);
      assert.deepEqual(res.json, { status: 'not_ready', evidence_age_seconds: null, reason: 'invalid_credential' });
      assertProbeHeaders(res, 'GET /ready (invalid_credential)');
    });

    test(`${fw.name}: after drain() → 503 not_ready / shutting_down at once`, async () => {
      const { sentinel, transitions } = makeSentinel('valid');
      const { url } = await serve(fw, sentinel);
      await transitions.waitFor({ to: 'ready' });
      assert.equal((await request(`${url}/ready`)).status, 200, 'ready before drain');
      sentinel.drain();
      const res = await request(`${url}/ready`);
      assert.equal(res.status, 503);
      assertReadyBody(res, 'not_ready', 'shutting_down');
      assert.equal(typeof res.json.evidence_age_seconds, 'number', 'evidence age still reported');
      assertProbeHeaders(res, 'GET /ready (shutting_down)');
    });

    test(`${fw.name}: HEAD /ready → same status as GET, empty body`, async () => {
      const { auth, sentinel } = makeSentinel(held, ROOMY);
      const { url } = await serve(fw, sentinel);
      const first = await auth.call(0);
      const notReady = await request(`${url}/ready`, { method: 'HEAD' });
      assert.equal(notReady.status, 503);
      assert.equal(notReady.text, '');
      assert.equal(notReady.headers.get('cache-control'), 'no-store');
      first.release('valid');
      await pollEndpoint(`${url}/ready`, (r) => r.status === 200, { label: 'GET /ready to answer 200' });
      const ready = await request(`${url}/ready`, { method: 'HEAD' });
      assert.equal(ready.status, 200);
      assert.equal(ready.text, '');
      assert.equal(ready.headers.get('cache-control'), 'no-store');
    });

    test(`${fw.name}: /ready only reads memory: 300 probes during a held refresh add no inspect call`, async () => {
      const { auth, sentinel } = makeSentinel(sequence(['valid'], held), ROOMY);
      const { url } = await serve(fw, sentinel);
      await auth.call(1); // the second refresh is in flight and stays so (timeout 5 s)
      const callsBefore = auth.callCount;
      const statuses = [];
      for (let batch = 0; batch < 6; batch += 1) {
        const answers = await Promise.all(Array.from({ length: 50 }, () => request(`${url}/ready`)));
        statuses.push(...answers.map((r) => `${r.status} ${r.json?.status}`));
      }
      assert.deepEqual(new Set(statuses), new Set(['200 ready']), 'every probe answered from memory while the refresh is held');
      assert.equal(statuses.length, 300);
      assert.equal(auth.callCount, callsBefore, 'a probe must not call the authority');
      assert.equal(auth.calls[1].settledAt, null, 'the held refresh was still in flight throughout');
    });
  });

  describe(`${fw.name}: other requests pass on untouched`, () => {
    test(`${fw.name}: other paths reach the app; other methods on probe paths get the framework's 404`, async () => {
      const { sentinel } = makeSentinel('valid');
      const { url } = await serve(fw, sentinel);
      const data = await request(`${url}/api/data`);
      assert.equal(data.status, 200);
      assert.deepEqual(data.json, { data: 'ok' });
      for (const [method, path] of [
        ['POST', '/ready'],
        ['PUT', '/live'],
        ['DELETE', '/startup'],
        ['POST', '/live?deep=1'],
      ]) {
        const res = await request(`${url}${path}`, { method });
        assert.equal(res.status, 404, `${method} ${path} must not be answered by a probe (got ${res.status} ${res.text})`);
        assert.notEqual(res.json?.status, 'alive', `${method} ${path}`);
      }
      for (const path of ['/ready/', '/readyz', '/ready/extra', '/api/ready']) {
        const res = await request(`${url}${path}`);
        assert.equal(res.status, 404, `GET ${path} is not a probe path (got ${res.status} ${res.text})`);
      }
      const withQuery = await pollEndpoint(`${url}/ready?verbose=1`, (r) => r.status === 200, { label: '/ready?verbose=1' });
      assertReadyBody(withQuery, 'ready', 'verified');
    });

    test(`${fw.name}: custom readyPath/livePath/startupPath answer; the defaults are then not probes`, async () => {
      const { sentinel } = makeSentinel('valid');
      const { url } = await serve(fw, sentinel, { readyPath: '/k8s/ready', livePath: '/k8s/live', startupPath: '/k8s/startup' });
      const ready = await pollEndpoint(`${url}/k8s/ready`, (r) => r.status === 200, { label: '/k8s/ready' });
      assertReadyBody(ready, 'ready', 'verified');
      const live = await request(`${url}/k8s/live`);
      assert.equal(live.status, 200);
      assert.equal(live.json?.status, 'alive');
      const startup = await request(`${url}/k8s/startup`);
      assert.deepEqual([startup.status, startup.json], [200, { status: 'started' }]);
      for (const path of ['/ready', '/live', '/startup', '/live?deep=1']) {
        const res = await request(`${url}${path}`);
        assert.equal(res.status, 404, `GET ${path} must reach the app (got ${res.status} ${res.text})`);
        const head = await request(`${url}${path}`, { method: 'HEAD' });
        assert.equal(head.status, 404, `HEAD ${path} must reach the app`);
      }
      assert.deepEqual((await request(`${url}/api/data`)).json, { data: 'ok' });
    });
  });

  describe(`${fw.name}: /live`, () => {
    test(`${fw.name}: release from options.release (over RELEASE_SHA)`, async () => {
      const { sentinel } = makeSentinel('valid');
      const release = `opt-${randomUUID()}`;
      const { url } = await withEnv('RELEASE_SHA', `env-${randomUUID()}`, () => serve(fw, sentinel, { release }));
      const res = await request(`${url}/live`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { status: 'alive', release });
      assertProbeHeaders(res, 'GET /live');
      const head = await request(`${url}/live`, { method: 'HEAD' });
      assert.deepEqual([head.status, head.text], [200, '']);
    });

    test(`${fw.name}: release from RELEASE_SHA at creation time`, async () => {
      const { sentinel } = makeSentinel('valid');
      const sha = `env-${randomUUID()}`;
      const { url } = await withEnv('RELEASE_SHA', sha, () => serve(fw, sentinel));
      await withEnv('RELEASE_SHA', `later-${randomUUID()}`, async () => {
        const res = await request(`${url}/live`);
        assert.equal(res.status, 200);
        assert.deepEqual(res.json, { status: 'alive', release: sha }, 'the value at creation, not the current one');
      });
    });

    test(`${fw.name}: release "dev" without options.release and RELEASE_SHA`, async () => {
      const { sentinel } = makeSentinel('valid');
      const { url } = await withEnv('RELEASE_SHA', undefined, () => serve(fw, sentinel));
      const res = await request(`${url}/live`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { status: 'alive', release: 'dev' });
    });

    test(`${fw.name}: stays 200 when the authority denies and while draining`, async () => {
      const { sentinel } = makeSentinel('invalid_credential');
      const { url } = await serve(fw, sentinel, { release: 'r1' });
      await pollEndpoint(`${url}/ready`, (r) => r.json?.reason === 'invalid_credential', { label: '/ready invalid_credential' });
      const denied = await request(`${url}/live`);
      assert.deepEqual([denied.status, denied.json], [200, { status: 'alive', release: 'r1' }], 'under a denial');
      sentinel.drain();
      const ready = await request(`${url}/ready`);
      assert.deepEqual([ready.status, ready.json?.reason], [503, 'shutting_down']);
      const draining = await request(`${url}/live`);
      assert.deepEqual([draining.status, draining.json], [200, { status: 'alive', release: 'r1' }], 'while draining');
    });

    test(`${fw.name}: a ~700 ms event-loop block → 503 {"status":"wedged"}, then 200 again`, async () => {
      const { sentinel } = makeSentinel('valid');
      const { url } = await serve(fw, sentinel, { ...TIGHT_LOOP, release: 'r-wedge' });
      assert.equal((await request(`${url}/live`)).status, 200, 'alive before the block');
      await blockEventLoop(700);
      const wedged = await pollEndpoint(`${url}/live`, (r) => r.status === 503, { ms: 5000, label: '/live to report wedged' });
      assert.equal(wedged.text, JSON.stringify({ status: 'wedged' }));
      assert.deepEqual(wedged.json, { status: 'wedged' });
      assertProbeHeaders(wedged, 'GET /live (wedged)');
      const recovered = await pollEndpoint(`${url}/live`, (r) => r.status === 200, { ms: 5000, label: '/live to recover' });
      assert.deepEqual(recovered.json, { status: 'alive', release: 'r-wedge' });
    });

    // Regression: the first version sampled with perf_hooks.monitorEventLoopDelay, whose reset()
    // also forgets the previous tick's time, so a block starting in the same timer pass as a
    // sampling reset was never measured and /live stayed 200 (js/loop-delay.js explains the fix).
    test(`${fw.name}: a 700 ms block starting right after a sampling reset → wedged`, async () => {
      const { sentinel } = makeSentinel('valid');
      const { url, blocked } = await serveWithBlockAfterFirstSample(fw, sentinel, TIGHT_LOOP, 700);
      await withTimeout(blocked, 3000, 'the scheduled block');
      const wedged = await pollEndpoint(`${url}/live`, (r) => r.status === 503, {
        ms: 2000,
        label: '/live to report wedged after a 700 ms block (limit 200 ms)',
      });
      assert.deepEqual(wedged.json, { status: 'wedged' });
    });

    test(`${fw.name}: without a block, 50 consecutive /live are 200 (same tight limit)`, async () => {
      const { sentinel } = makeSentinel('valid');
      const { url } = await serve(fw, sentinel, TIGHT_LOOP);
      for (let i = 0; i < 50; i += 1) {
        const res = await request(`${url}/live`);
        assert.equal(res.status, 200, `probe #${i}: ${res.text}`);
        assert.equal(res.json?.status, 'alive');
      }
    });
  });

  describe(`${fw.name}: /live?deep=1`, () => {
    test(`${fw.name}: checks report ok / error / timeout; status stays 200; no error text`, async () => {
      const marker = `marker-${randomUUID()}`;
      const calls = { ok: 0, zero: 0, throws: 0, rejects: 0, falsy: 0, slow: 0 };
      const checks = {
        ok: async () => {
          calls.ok += 1;
        },
        zero: async () => {
          calls.zero += 1;
          return 0; // only `false` counts as failure
        },
        throws: () => {
          calls.throws += 1;
          throw new Error(marker);
        },
        rejects: async () => {
          calls.rejects += 1;
          throw new Error(marker);
        },
        falsy: async () => {
          calls.falsy += 1;
          return false;
        },
        slow: () => {
          calls.slow += 1;
          return never();
        },
      };
      const { sentinel } = makeSentinel('valid');
      const { url } = await serve(fw, sentinel, { checks, checkTimeoutMs: 100, release: 'r-deep' });
      const t0 = now();
      const res = await withTimeout(request(`${url}/live?deep=1`), 3000, 'the deep probe answer');
      const elapsed = now() - t0;
      assert.equal(res.status, 200, 'failing checks never change the status code');
      assert.deepEqual(res.json, {
        status: 'alive',
        release: 'r-deep',
        checks: { ok: 'ok', zero: 'ok', throws: 'error', rejects: 'error', falsy: 'error', slow: 'timeout' },
      });
      assert.ok(elapsed >= 90, `answered after ${elapsed.toFixed(0)} ms, before the 100 ms check timeout`);
      assertProbeHeaders(res, 'GET /live?deep=1');
      assert.ok(!res.text.includes(marker), 'error text must not appear in the body');
      for (const [name, value] of res.headers) assert.ok(!value.includes(marker), `error text in header ${name}`);
      assert.deepEqual(calls, { ok: 1, zero: 1, throws: 1, rejects: 1, falsy: 1, slow: 1 }, 'each check ran once');
    });

    test(`${fw.name}: 5 concurrent deep probes share one run of each check`, async () => {
      const gate = deferred();
      const calls = { gated: 0, quick: 0 };
      const checks = {
        gated: () => {
          calls.gated += 1;
          return gate.promise;
        },
        quick: async () => {
          calls.quick += 1;
        },
      };
      const { sentinel } = makeSentinel('valid');
      const app = await serve(fw, sentinel, { checks, checkTimeoutMs: 4000 });
      // Open the gate once the server has taken all 5 requests (this listener runs after the app's).
      let seen = 0;
      app.server.on('request', () => {
        seen += 1;
        if (seen === 5) gate.resolve(true);
      });
      const answers = await withTimeout(
        Promise.all(Array.from({ length: 5 }, () => request(`${app.url}/live?deep=1`))),
        3000,
        () => `5 deep probes (server saw ${seen} requests)`,
      );
      for (const res of answers) {
        assert.equal(res.status, 200);
        assert.deepEqual(res.json?.checks, { gated: 'ok', quick: 'ok' });
      }
      assert.deepEqual(calls, { gated: 1, quick: 1 }, 'concurrent deep probes must share one run');
      const later = await request(`${app.url}/live?deep=1`);
      assert.deepEqual(later.json?.checks, { gated: 'ok', quick: 'ok' });
      assert.deepEqual(calls, { gated: 2, quick: 2 }, 'a later deep probe runs the checks again');
    });

    test(`${fw.name}: ?deep=0 and no query give no checks key and run no check; ?deep=true does`, async () => {
      let calls = 0;
      const { sentinel } = makeSentinel('valid');
      const { url } = await serve(fw, sentinel, { checks: { db: async () => void (calls += 1) }, release: 'r' });
      for (const path of ['/live', '/live?deep=0', '/live?deep=', '/live?other=1']) {
        const res = await request(`${url}${path}`);
        assert.equal(res.status, 200, path);
        assert.deepEqual(res.json, { status: 'alive', release: 'r' }, `${path}: no checks key`);
      }
      assert.equal(calls, 0, 'a shallow probe runs no check');
      const deep = await request(`${url}/live?deep=true`);
      assert.deepEqual(deep.json, { status: 'alive', release: 'r', checks: { db: 'ok' } });
      assert.equal(calls, 1);
    });
  });

  describe(`${fw.name}: /startup`, () => {
    test(`${fw.name}: 503 starting before ready; 200 started once ready; stays 200 after a denial and after drain()`, async () => {
      const { auth, sentinel, transitions } = makeSentinel(held, ROOMY);
      const { url } = await serve(fw, sentinel);
      const first = await auth.call(0);
      const starting = await request(`${url}/startup`);
      assert.deepEqual([starting.status, starting.json], [503, { status: 'starting' }]);
      assertProbeHeaders(starting, 'GET /startup (starting)');
      const headStarting = await request(`${url}/startup`, { method: 'HEAD' });
      assert.deepEqual([headStarting.status, headStarting.text], [503, '']);

      first.release('valid');
      const started = await pollEndpoint(`${url}/startup`, (r) => r.status === 200, { label: '/startup to say started' });
      assert.deepEqual(started.json, { status: 'started' });
      assertProbeHeaders(started, 'GET /startup (started)');
      assert.equal((await request(`${url}/ready`)).status, 200, 'the sentinel is ready meanwhile');

      const second = await auth.call(1); // held: the sentinel stays ready meanwhile
      auth.set('invalid_credential');
      second.release('invalid_credential');
      await transitions.waitFor({ to: 'not_ready', reason: 'invalid_credential' });
      const ready = await request(`${url}/ready`);
      assert.deepEqual([ready.status, ready.json?.reason], [503, 'invalid_credential']);
      const afterDenial = await request(`${url}/startup`);
      assert.deepEqual([afterDenial.status, afterDenial.json], [200, { status: 'started' }], 'after a denial');

      sentinel.drain();
      assert.equal((await request(`${url}/ready`)).json?.reason, 'shutting_down');
      const afterDrain = await request(`${url}/startup`);
      assert.deepEqual([afterDrain.status, afterDrain.json], [200, { status: 'started' }], 'after drain()');
    });

    test(`${fw.name}: ready only briefly (valid, then invalid_credential), never probed meanwhile → started`, async () => {
      const { auth, sentinel, transitions } = makeSentinel(held, ROOMY);
      const { url } = await serve(fw, sentinel);
      const first = await auth.call(0);
      assert.equal((await request(`${url}/startup`)).status, 503, 'starting before the valid answer');
      auth.set('invalid_credential');
      first.release('valid');
      const denied = await transitions.waitFor({ to: 'not_ready', reason: 'invalid_credential' });
      assert.ok(
        transitions.events.slice(0, transitions.events.indexOf(denied)).some((e) => e.to === 'ready'),
        `the sentinel was ready in between: ${JSON.stringify(transitions.events)}`,
      );
      assert.equal(sentinel.isServing(), false, 'not serving when /startup is asked');
      const res = await request(`${url}/startup`);
      assert.deepEqual([res.status, res.json], [200, { status: 'started' }]);
      assert.equal((await request(`${url}/ready`)).status, 503);
    });

    test(`${fw.name}: an authority hanging from the start → /startup 200 once the first refresh times out (not before) while /ready stays 503; probes created later agree`, async () => {
      const TIMEOUT_MS = 800;
      const created = now(); // the first refresh is sent after this
      const { sentinel } = makeSentinel(never, { budget: ROOMY.budget, refresh: { timeoutMs: TIMEOUT_MS } });
      const { url } = await serve(fw, sentinel);
      const starting = await request(`${url}/startup`);
      assert.deepEqual([starting.status, starting.json], [503, { status: 'starting' }], 'starting while the first refresh is in flight');
      const started = await pollEndpoint(`${url}/startup`, (r) => r.status === 200, {
        ms: TIMEOUT_MS + 10_000,
        label: '/startup to say started once the first refresh timed out',
      });
      assert.deepEqual(started.json, { status: 'started' });
      assert.ok(now() - created >= TIMEOUT_MS - 1, `not before the refresh timed out (${Math.round(now() - created)} ms)`);
      assert.equal(sentinel.hasRefreshed(), true);
      const ready = await request(`${url}/ready`);
      assert.equal(ready.status, 503, `/ready stays 503: ${ready.text}`);
      const later = await serve(fw, sentinel);
      const again = await request(`${later.url}/startup`);
      assert.deepEqual([again.status, again.json], [200, { status: 'started' }], 'a probes instance created after the first refresh');
    });

    test(`${fw.name}: a sentinel already ready when the probes are created counts as started`, async () => {
      const { auth, sentinel, transitions } = makeSentinel(sequence(['valid'], held), ROOMY);
      await transitions.waitFor({ to: 'ready' });
      const { url } = await serve(fw, sentinel);
      (await auth.call(1)).release('invalid_credential');
      await transitions.waitFor({ to: 'not_ready', reason: 'invalid_credential' });
      const res = await request(`${url}/startup`);
      assert.deepEqual([res.status, res.json], [200, { status: 'started' }]);
    });
  });

  describe(`${fw.name}: bad options → ERR_SPEND_SENTINEL_CONFIG naming the option`, () => {
    const NO_SENTINEL = Symbol('no sentinel');
    const cases = [
      { label: 'readyPath without a leading slash', options: { readyPath: 'ready' }, names: ['readyPath'] },
      { label: 'readyPath equal to livePath', options: { readyPath: '/health', livePath: '/health' }, names: ['readyPath', 'livePath'] },
      { label: 'unknown key "readypath"', options: { readypath: '/r' }, names: ['readypath'] },
      { label: 'checks { db: 42 }', options: { checks: { db: 42 } }, names: ['checks'] },
      { label: 'maxEventLoopDelayMs -1', options: { maxEventLoopDelayMs: -1 }, names: ['maxEventLoopDelayMs'] },
      { label: "checkTimeoutMs 'fast'", options: { checkTimeoutMs: 'fast' }, names: ['checkTimeoutMs'] },
      { label: 'missing sentinel', sentinel: NO_SENTINEL, options: {}, names: ['sentinel'] },
      { label: 'a non-Sentinel sentinel', sentinel: { readiness: () => ({}) }, options: {}, names: ['sentinel'] },
    ];

    /** The error the framework reports for these options (fails the test if there is none). */
    async function configErrorFor(sentinelArg, options) {
      if (fw.name === 'express') {
        let err = null;
        let middleware = null;
        try {
          middleware = sentinelArg === NO_SENTINEL ? spendExpress.probes(undefined, options) : spendExpress.probes(sentinelArg, options);
        } catch (e) {
          err = e;
        }
        middleware?.close?.();
        assert.ok(err, 'probes() must throw synchronously');
        return err;
      }
      const app = Fastify();
      try {
        app.register(spendSentinel, sentinelArg === NO_SENTINEL ? { ...options } : { sentinel: sentinelArg, ...options });
        return await rejectionOf(app.ready(), 3000, 'app.ready() with bad spend-sentinel options');
      } finally {
        await app.close().catch(() => {});
      }
    }

    for (const c of cases) {
      test(`${fw.name}: ${c.label}`, async () => {
        const { sentinel } = makeSentinel(held, ROOMY);
        const err = await configErrorFor(c.sentinel ?? sentinel, c.options);
        assert.ok(err instanceof Error, `an Error, got ${err}`);
        assert.equal(err.code, 'ERR_SPEND_SENTINEL_CONFIG', `code of: ${err.message}`);
        for (const name of c.names) {
          assert.match(err.message, new RegExp(`\\b${name}\\b`), `the message names ${name}: ${err.message}`);
        }
      });
    }
  });
}
