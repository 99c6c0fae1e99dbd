// The admission guard answers a client's mistakes as client errors (docs/frameworks.md
// "Admission"): units that are not units → 400, units no node budget can hold → 413, while a
// `units` function that throws stays the caller's bug (500, through the framework's error
// handler). Real Express 5 (with `express.json()`, as the docs wire it) and Fastify 5 servers on
// 127.0.0.1, real HTTP clients, the units read from the JSON body as a service reads them; every
// behaviour on both paths of the guard: admitting (`units`) and reserving (`units` + `settle`).
//
// The sentinel's first refresh answers `valid` and the next never answers (w = 10 s; its timeout,
// 9 s, outlasts the test): readiness stays `ready` / `verified`, and the ledger moves only through
// the guard.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { request } from './helpers/frameworks.mjs';
import { cleanups, closedPort, fastOptions, scriptedAuthority, sequence, withTimeout } from './helpers/wait.mjs';

const require = createRequire(import.meta.url);
const { Sentinel } = require('../js/main.js');
const express = require('express');
const Fastify = require('fastify');
const spendExpress = require('spend-sentinel/express');
const spendSentinel = require('spend-sentinel/fastify');

/** b = 200 on one node, r = 20/s: node budget 200, w = 10 s, so a 503's default Retry-After is 5. */
const HELD = { budget: { unverifiedUnits: 200, maxUnitsPerSecond: 20 }, refresh: { timeoutMs: 9000 } };
const NODE_BUDGET = 200;

/**
 * The units a client sends, as a service reads them. `{"explode": true}` makes it throw;
 * `{"explode": "as the addon"}` throws what the addon throws for bad units (the function's own
 * bug, say a `sentinel.refusalReason(x)` inside it): still a throw, not the client's units.
 */
function bodyUnits(req) {
  if (req.body.explode === 'as the addon') {
    throw Object.assign(new TypeError('units: must be a finite number ≥ 0 (got string)'), { code: 'ERR_SPEND_SENTINEL_UNITS' });
  }
  if (req.body.explode) throw new Error('units exploded');
  return req.body.units;
}

/** The guard's two paths: admitting, and reserving (settled at the units the request asked for). */
const PATHS = [
  { name: 'admit', options: {} },
  { name: 'settle', options: { settle: (req) => req.body.units } },
];

/**
 * POST /v1/usage behind `admission(sentinel, { units: bodyUnits, ...options })`, answering
 * `{ recorded }`; `errors` collects what reached the app's error handler (answered as a bare
 * JSON 500, so a test sees it at once rather than in Express's HTML).
 */
const FRAMEWORKS = [
  {
    name: 'express',
    async start(sentinel, options) {
      const errors = [];
      const app = express();
      const probes = spendExpress.probes(sentinel);
      app.use(probes);
      app.use(express.json());
      app.post('/v1/usage', spendExpress.admission(sentinel, { units: bodyUnits, ...options }), (req, res) =>
        res.json({ recorded: req.body.units }),
      );
      // eslint-disable-next-line no-unused-vars -- Express recognises error handlers by their 4 parameters
      app.use((err, req, res, next) => {
        errors.push(err);
        res.status(500).json({ error: 'internal' });
      });
      const server = await new Promise((resolve, reject) => {
        const s = app.listen(0, '127.0.0.1', (err) => (err ? reject(err) : resolve(s)));
      });
      return served(server, errors, async () => {
        probes.close();
        await new Promise((resolve) => server.close(resolve));
      });
    },
  },
  {
    name: 'fastify',
    async start(sentinel, options) {
      const errors = [];
      const app = Fastify();
      await app.register(spendSentinel, { sentinel });
      app.post('/v1/usage', { preHandler: spendSentinel.admission(sentinel, { units: bodyUnits, ...options }) }, async (req) => ({
        recorded: req.body.units,
      }));
      app.setErrorHandler((err, _req, reply) => {
        errors.push(err);
        return reply.code(500).send({ error: 'internal' });
      });
      await app.listen({ port: 0, host: '127.0.0.1' });
      return served(app.server, errors, () => app.close());
    },
  },
];

function served(server, errors, stop) {
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    errors,
    /** POST /v1/usage with `body`, a JSON text sent as is (`1e999` parses to Infinity). */
    post: (body) => request(`${url}/v1/usage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }),
    ready: () => request(`${url}/ready`),
    async close() {
      server.closeAllConnections();
      await stop();
    },
  };
}

/**
 * A sentinel made ready by one valid refresh (the next never answers), and `fw`'s app on it
 * with the guard of `path`; both closed after the test `t`.
 */
async function readyApp(t, fw, path, over = HELD) {
  const defer = cleanups(t);
  const sentinel = new Sentinel(fastOptions(scriptedAuthority(sequence(['valid'])), over));
  defer(() => sentinel.close());
  await withTimeout(sentinel.whenReady(), 5000, 'the first valid refresh');
  const app = await fw.start(sentinel, path.options);
  defer(() => app.close());
  return { sentinel, app };
}

function assertAnswer(res, status, body, what) {
  assert.equal(res.status, status, `${what}: ${res.status} ${res.text}`);
  assert.deepEqual(res.json, body, `${what}: body`);
}

/**
 * An answer of the guard itself: JSON, never cached, `Retry-After` only on a 503 (`retryAfter`);
 * a 400 or 413 would fail again, so nothing invites a retry.
 */
function assertGuardAnswer(res, status, body, what, retryAfter = null) {
  assertAnswer(res, status, body, what);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/, `${what}: content-type`);
  assert.equal(res.headers.get('cache-control'), 'no-store', `${what}: cache-control`);
  assert.equal(res.headers.get('retry-after'), retryAfter, `${what}: Retry-After`);
}

async function assertReady(app) {
  const res = await app.ready();
  assert.equal(res.status, 200, `/ready: ${res.text}`);
  assert.equal(res.json.status, 'ready', `/ready: ${res.text}`);
}

const INVALID_UNITS = { error: 'invalid_units' };
const EXCEEDS = { error: 'not_admitted', reason: 'exceeds_node_budget' };

/** Bodies whose units `admit` refuses, or that have none. */
const NOT_UNITS = [
  ['a string', '{"units":"5"}'],
  ['a negative number', '{"units":-1}'],
  ['no units at all', '{}'],
  ['null', '{"units":null}'],
  ['Infinity', '{"units":1e999}'],
  ['an object', '{"units":{"n":5}}'],
  ['a boolean', '{"units":true}'],
  ['an array', '{"units":[5]}'],
];

for (const fw of FRAMEWORKS) {
  for (const path of PATHS) {
    describe(`${fw.name}: admission (${path.name}) answers client mistakes as client errors`, () => {
      test('units(req) that are not units, or undefined: 400 {"error":"invalid_units"} without Retry-After; nothing admitted', async (t) => {
        const { sentinel, app } = await readyApp(t, fw, path);
        for (const [what, body] of NOT_UNITS) {
          assertGuardAnswer(await app.post(body), 400, INVALID_UNITS, `${what} (${body})`);
          assert.deepEqual([sentinel.exposureUnits, sentinel.reservedUnits], [0, 0], `${what}: nothing admitted`);
        }
        assert.deepEqual(app.errors, [], 'a client mistake never reaches the error handler');
        await assertReady(app);
        // The same guard still admits real units.
        assertAnswer(await app.post('{"units":5}'), 200, { recorded: 5 }, 'units 5');
        assert.equal(sentinel.exposureUnits, 5);
      });

      test('units above the whole node budget: 413 exceeds_node_budget without Retry-After while /ready says ready; what fits still fits', async (t) => {
        const { sentinel, app } = await readyApp(t, fw, path);
        assert.equal(sentinel.nodeBudgetUnits, NODE_BUDGET);
        await assertReady(app);
        assertGuardAnswer(await app.post('{"units":250}'), 413, EXCEEDS, '250 of 200');
        assert.deepEqual([sentinel.exposureUnits, sentinel.reservedUnits], [0, 0], 'nothing admitted');
        await assertReady(app);
        assertGuardAnswer(await app.post('{"units":250}'), 413, EXCEEDS, '250 of 200, again: retrying cannot help');

        // Exactly the node budget fits an empty ledger.
        assertAnswer(await app.post('{"units":200}'), 200, { recorded: 200 }, '200 of 200');
        assert.equal(sentinel.exposureUnits, 200);
        // Units that fit the node budget but not what is left of it: the 503, whose retry may pass.
        const exhausted = { error: 'not_admitted', reason: 'budget_exhausted' };
        assertGuardAnswer(await app.post('{"units":150}'), 503, exhausted, '150 on a full ledger', '5');
        assertGuardAnswer(await app.post('{"units":200.5}'), 413, EXCEEDS, '200.5 on a full ledger');
        assert.equal(sentinel.exposureUnits, 200);
        assert.deepEqual(app.errors, []);
      });

      test('a units function that throws: 500 through the framework\'s error handler, nothing admitted, the app goes on', async (t) => {
        const { sentinel, app } = await readyApp(t, fw, path);
        assertAnswer(await app.post('{"explode":true,"units":5}'), 500, { error: 'internal' }, 'a throwing units');
        assertAnswer(await app.post('{"explode":"as the addon","units":5}'), 500, { error: 'internal' }, 'units throwing the addon\'s error');
        assert.deepEqual(
          app.errors.map((err) => err.message),
          ['units exploded', 'units: must be a finite number ≥ 0 (got string)'],
          'the error handler saw the errors units threw',
        );
        assert.deepEqual([sentinel.exposureUnits, sentinel.reservedUnits], [0, 0]);
        assertAnswer(await app.post('{"units":5}'), 200, { recorded: 5 }, 'units 5');
        assert.equal(sentinel.exposureUnits, 5);
      });

      test('in a fleet, units above the node budget of the moment stay 503 budget_exhausted with Retry-After: the budget may grow', async (t) => {
        // Redis unreachable: the node runs on its floor, b × reserve / maxNodes = 240 × 0.25 / 3
        // = 20 units (w = 20 / 2 = 10 s); once Redis answers, a grant of the pool adds to it.
        const redis = `redis://127.0.0.1:${await closedPort()}`;
        const { sentinel, app } = await readyApp(t, fw, path, {
          budget: { unverifiedUnits: 240, maxUnitsPerSecond: 2, fleet: { redis, name: `admission-errors:${process.pid}`, maxNodes: 3 } },
          refresh: { timeoutMs: 9000 },
        });
        assert.equal(sentinel.nodeBudgetUnits, 20);
        const exhausted = { error: 'not_admitted', reason: 'budget_exhausted' };
        assertGuardAnswer(await app.post('{"units":30}'), 503, exhausted, '30 of a floor of 20', '5');
        assertAnswer(await app.post('{"units":20}'), 200, { recorded: 20 }, '20 of 20');
        assert.equal(sentinel.exposureUnits, 20);
      });
    });
  }
}
