// The admission guard's `settle` option (usage known only after the work), through real Express 5
// and Fastify 5 servers and real HTTP clients: the guard reserves before the route, the route
// extends the reservation per chunk, and the guard settles it at what `settle(req, res)` answers
// once the response has finished or the connection closed. Every behaviour runs on both.
//
// The sentinel has had one valid refresh and its later refreshes never answer (after 5 s they end
// indeterminate, which clears nothing), with a 10 s window: the ledger moves only through what the
// test does (settled usage stays in it until a valid answer to a later refresh, which never comes).
import { describe, test, beforeEach, afterEach, mock } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import { createRequire } from 'node:module';
import { Readable, pipeline } from 'node:stream';
import { request as get } from './helpers/frameworks.mjs';
import { catchError, deferred, fastOptions, scriptedAuthority, sentinelPool, sequence, withTimeout } from './helpers/wait.mjs';

const require = createRequire(import.meta.url);
const { Sentinel } = require('../js/main.js');
const express = require('express');
const Fastify = require('fastify');
const spendExpress = require('spend-sentinel/express');
const spendSentinel = require('spend-sentinel/fastify');

/** Node budget 100 units (fastOptions), a 10 s window, refreshes that stay in flight for 5 s. */
const STILL = { budget: { maxUnitsPerSecond: 10 }, refresh: { timeoutMs: 5000 } };
/** A stream reserves this much before each chunk (the most a chunk can cost)… */
const CHUNK_UNITS = 10;
/** …and records what the chunk really cost. */
const CHUNK_COST = 7;
const WAIT_MS = 5000;

const pool = sentinelPool(Sentinel);
const apps = [];
afterEach(async () => {
  await Promise.allSettled(apps.splice(0).map((app) => app.close()));
  pool.closeAll();
});

/** Express has no logger: its guard reports to console.error, captured while each test runs. */
const consoleErrors = [];
beforeEach(() => {
  consoleErrors.length = 0;
  mock.method(console, 'error', (msg, err) => consoleErrors.push({ msg, err: err?.message }));
});
afterEach(() => mock.restoreAll());

async function readySentinel() {
  const auth = scriptedAuthority(sequence(['valid']));
  const sentinel = pool.make(fastOptions(auth, STILL));
  await withTimeout(sentinel.whenReady(), WAIT_MS, 'the first valid refresh');
  return sentinel;
}

/** A sentinel whose refreshes never answer: every admission is refused `no_evidence`. */
async function withoutEvidence() {
  const auth = scriptedAuthority(sequence([]));
  const sentinel = pool.make(fastOptions(auth, STILL));
  await auth.call(0);
  return sentinel;
}

/** What the route records per request, keyed by the framework's request (`settle` reads it). */
const USAGE = new WeakMap();
const recordedFor = (req) => USAGE.get(req).units;

/**
 * One request as the route saw it: `{ req, res, reservation, usage, closed }`. `closed` resolves
 * on the raw response's 'close', whose listener is added after the guard's: once it resolves, the
 * guard has done whatever it does at the end of the response.
 */
function handled(list, req, res, reservation, raw) {
  const usage = { units: 0 };
  USAGE.set(req, usage);
  const seen = { req, res, reservation, usage, closed: withTimeout(once(raw, 'close'), WAIT_MS, 'the response to close') };
  list.push(seen);
  return seen;
}

/**
 * `start(sentinel, guard, body, before)`: an app with one route, GET /work, behind `guard`
 * (after the handlers in `before`); the route streams the strings `body(seen)` yields.
 * `errorLogs` collects the framework's error log as `{ msg, err }` (Express: console.error,
 * for the whole test; Fastify: its logger at level error).
 * `untilGone(arrived)`: a handler that calls `arrived()`, then goes on once the client has left.
 * `observe(guard, ran)`: the guard, calling `ran()` once it has done its part.
 */
const FRAMEWORKS = [
  {
    name: 'express',
    admission: spendExpress.admission,
    /** What a route without a settling guard finds. */
    noReservation: undefined,
    async start(sentinel, guard, body, before) {
      const list = [];
      const app = express();
      app.get('/work', ...before, guard, (req, res) => {
        const seen = handled(list, req, res, res.locals.spendReservation, res);
        pipeline(Readable.from(body(seen)), res.type('text/plain'), () => {});
      });
      // A bare 500, answered at once (Express's default handler would log it later, into the next test).
      // eslint-disable-next-line no-unused-vars -- Express recognises error handlers by their 4 parameters
      app.use((err, req, res, next) => res.status(500).end());
      const server = await new Promise((resolve, reject) => {
        const s = app.listen(0, '127.0.0.1', (err) => (err ? reject(err) : resolve(s)));
      });
      return served(server, list, consoleErrors, () => server.close());
    },
    untilGone: (arrived) => (req, res, next) => {
      arrived();
      res.once('close', () => next());
    },
    observe: (guard, ran) => (req, res, next) => {
      guard(req, res, next);
      ran();
    },
  },
  {
    name: 'fastify',
    admission: spendSentinel.admission,
    noReservation: null,
    async start(sentinel, guard, body, before) {
      const errorLogs = [];
      const stream = { write: (line) => errorLogs.push(pinoLine(JSON.parse(line))) };
      const list = [];
      const app = Fastify({ logger: { level: 'error', stream } });
      // The documented wiring: the plugin also declares `request.spendReservation`.
      await app.register(spendSentinel, { sentinel });
      app.get('/work', { preHandler: [...before, guard] }, async (request, reply) => {
        const seen = handled(list, request, reply, request.spendReservation, reply.raw);
        return reply.type('text/plain').send(Readable.from(body(seen)));
      });
      await app.listen({ port: 0, host: '127.0.0.1' });
      return served(app.server, list, errorLogs, () => app.close());
    },
    untilGone: (arrived) => async (request, reply) => {
      arrived();
      if (!reply.raw.destroyed) await once(reply.raw, 'close');
    },
    observe: (guard, ran) =>
      async function observed(request, reply) {
        try {
          return await guard.call(this, request, reply);
        } finally {
          ran();
        }
      },
  },
];

const pinoLine = ({ msg, err, heldUnits }) => ({ msg, err: err?.message, heldUnits });

function served(server, list, errorLogs, stop) {
  return {
    url: `http://127.0.0.1:${server.address().port}/work`,
    /** Every request the route ran for, in order. */
    handled: list,
    errorLogs,
    async close() {
      server.closeAllConnections();
      await Promise.all([once(server, 'close'), stop()]);
    },
  };
}

async function startApp(fw, sentinel, options, body, { before = [], observe = (guard) => guard } = {}) {
  const app = await fw.start(sentinel, observe(fw.admission(sentinel, options)), body, before);
  apps.push(app);
  return app;
}

/** `settle` that answers what the route recorded and keeps each call `{ req, res, units }`. */
function recordedSettle() {
  const calls = [];
  const called = deferred();
  const settle = (req, res) => {
    const units = recordedFor(req);
    calls.push({ req, res, units });
    called.resolve(units);
    return units;
  };
  return { settle, calls, called: () => withTimeout(called.promise, WAIT_MS, 'the guard to call settle') };
}

// Route bodies.

/** Extends before every chunk after the first (the guard reserved that one) until refused. */
async function* untilRefused({ reservation, usage }) {
  for (let chunk = 0; chunk === 0 || reservation.extend(CHUNK_UNITS); chunk += 1) {
    usage.units += CHUNK_COST;
    yield `chunk ${chunk}\n`;
  }
  usage.heldWhenRefused = reservation.heldUnits;
}

/** One chunk, then waits for the client to leave. */
async function* oneChunkThenWait({ usage, closed }) {
  usage.units += CHUNK_COST;
  yield 'chunk 0\n';
  await closed;
}

async function* oneChunk({ usage }) {
  usage.units += CHUNK_COST;
  yield 'chunk 0\n';
}

const chunksOf = (text) => text.split('\n').filter((line) => line !== '');

function assertServed(res, chunks) {
  assert.equal(res.status, 200, `${res.status} ${res.text}`);
  assert.deepEqual(chunksOf(res.text), Array.from({ length: chunks }, (_, i) => `chunk ${i}`));
}

/** Opens GET `url` with node:http and destroys the request once the first body bytes arrive. */
async function leaveAfterFirstChunk(url) {
  const req = http.get(url);
  req.on('error', () => {}); // destroying it is the point
  const [res] = await withTimeout(once(req, 'response'), WAIT_MS, 'the response headers');
  assert.equal(res.statusCode, 200);
  const [first] = await withTimeout(once(res, 'data'), WAIT_MS, 'the first chunk');
  req.destroy();
  return String(first);
}

for (const fw of FRAMEWORKS) {
  describe(`${fw.name}: admission with settle`, () => {
    test('a stream extends per chunk, ends when extend is refused, and settles at what it recorded', async () => {
      const sentinel = await readySentinel();
      const { settle, calls, called } = recordedSettle();
      const app = await startApp(fw, sentinel, { units: CHUNK_UNITS, settle }, untilRefused);
      assert.equal(sentinel.nodeBudgetUnits, 100);

      // Reserved 10, then 9 extends of 10 fill the budget of 100; the 10th extend is refused.
      assertServed(await get(app.url), 10);
      const [seen] = app.handled;
      await called();
      await seen.closed;
      assert.equal(seen.usage.heldWhenRefused, 100, 'the stream held the whole node budget when extend said no');
      assert.equal(calls.length, 1, 'settled once, though both finish and close happened');
      assert.equal(calls[0].req, seen.req, 'settle gets the framework request the route had');
      assert.equal(calls[0].res, seen.res, 'settle gets the framework response (Fastify: reply) the route had');
      assert.equal(calls[0].units, 10 * CHUNK_COST);
      assert.equal(seen.reservation.settled, true);
      assert.equal(sentinel.reservedUnits, 0);
      assert.equal(sentinel.exposureUnits, 10 * CHUNK_COST, 'the used units stay, the 30 unused were refunded');
    });

    test('a client that leaves mid-stream: settled on close at what the route had recorded', async () => {
      const sentinel = await readySentinel();
      const { settle, calls, called } = recordedSettle();
      const app = await startApp(fw, sentinel, { units: CHUNK_UNITS, settle }, oneChunkThenWait);

      assert.equal(await leaveAfterFirstChunk(app.url), 'chunk 0\n');
      assert.equal(await called(), CHUNK_COST);
      const [seen] = app.handled;
      await seen.closed;
      assert.equal(calls.length, 1);
      assert.equal(seen.reservation.settled, true);
      assert.equal(sentinel.reservedUnits, 0);
      assert.equal(sentinel.exposureUnits, CHUNK_COST);
      assert.deepEqual(app.errorLogs, []);
    });

    const FAILING_SETTLES = [
      [
        'throws',
        () => {
          throw new Error('the meter is down');
        },
        /the meter is down/,
      ],
      ['returns -1', () => -1, /actualUnits: must be a finite number ≥ 0 \(got -1\)/],
      ['returns NaN', () => NaN, /actualUnits: must be a finite number ≥ 0 \(got NaN\)/],
      ['returns a string', () => '5', /actualUnits: must be a finite number ≥ 0/],
      ['returns nothing', () => undefined, /actualUnits: must be a finite number ≥ 0 \(got undefined\)/],
    ];
    for (const [label, settle, why] of FAILING_SETTLES) {
      test(`a settle that ${label}: settled at the held units, logged as an error, the app goes on`, async () => {
        const sentinel = await readySentinel();
        const app = await startApp(fw, sentinel, { units: 30, settle }, oneChunk);

        assertServed(await get(app.url), 1);
        const [first] = app.handled;
        await first.closed;
        assert.equal(first.reservation.settled, true, 'nothing left open');
        assert.equal(sentinel.reservedUnits, 0);
        assert.equal(sentinel.exposureUnits, 30, 'nothing refunded: the 30 held units stay as usage');
        assert.equal(app.errorLogs.length, 1, JSON.stringify(app.errorLogs));
        const [log] = app.errorLogs;
        assert.match(log.msg, /^admission: settle failed, so the reservation settled at the 30 units it held: /);
        assert.match(log.err, why);
        if (fw.name === 'fastify') assert.equal(log.heldUnits, 30);

        assertServed(await get(app.url), 1);
        await app.handled[1].closed;
        assert.equal(sentinel.exposureUnits, 60);
        assert.equal(sentinel.reservedUnits, 0);
        assert.equal(app.errorLogs.length, 2);
      });
    }

    test('a route that settles or releases the reservation itself: settle is not called, nothing settles twice', async () => {
      const sentinel = await readySentinel();
      const { settle, calls } = recordedSettle();
      const settlesItself = async function* ({ reservation }) {
        reservation.settle(12);
        yield 'chunk 0\n';
      };
      const releasesIt = async function* ({ reservation }) {
        reservation.release();
        yield 'chunk 0\n';
      };
      for (const [body, exposure] of [
        [settlesItself, 12],
        [releasesIt, 12],
      ]) {
        const app = await startApp(fw, sentinel, { units: 40, settle }, body);
        assertServed(await get(app.url), 1);
        await app.handled[0].closed;
        assert.equal(sentinel.exposureUnits, exposure, body.name);
        assert.equal(sentinel.reservedUnits, 0);
        assert.deepEqual(app.errorLogs, [], 'no ERR_SPEND_SENTINEL_SETTLED, nor anything else');
      }
      assert.equal(calls.length, 0, 'the route settled: the guard leaves it');
    });

    test('a refusal, or units that are not units, answers as the admit guard does (status, Retry-After, body); the route does not run', async () => {
      const halfFull = await readySentinel();
      assert.equal(halfFull.admit(60), true);
      const ready = await readySentinel();
      const refused = (reason) => ({ error: 'not_admitted', reason });
      // sentinel, units, the answer's status and body, and whether a retry may pass (Retry-After)
      const CASES = [
        [await withoutEvidence(), 1, 503, refused('no_evidence'), true],
        [halfFull, 50, 503, refused('budget_exhausted'), true],
        [ready, 101, 413, refused('exceeds_node_budget'), false],
        [ready, () => '5', 400, { error: 'invalid_units' }, false],
        [ready, () => undefined, 400, { error: 'invalid_units' }, false],
      ];
      for (const [sentinel, units, status, body, retries] of CASES) {
        const before = sentinel.exposureUnits;
        for (const retry of [{}, { retryAfterSeconds: 42 }]) {
          const reserving = await startApp(fw, sentinel, { units, settle: () => 0, ...retry }, oneChunk);
          const admitting = await startApp(fw, sentinel, { units, ...retry }, oneChunk);
          const [reserved, admitted] = [await get(reserving.url), await get(admitting.url)];
          const answer = (res) => ({
            status: res.status,
            body: res.json,
            ...Object.fromEntries(['retry-after', 'content-type', 'cache-control'].map((h) => [h, res.headers.get(h)])),
          });
          assert.deepEqual(answer(reserved), answer(admitted));
          assert.deepEqual([reserved.status, reserved.json], [status, body], reserved.text);
          const retryAfter = retry.retryAfterSeconds ? '42' : '5';
          assert.equal(reserved.headers.get('retry-after'), retries ? retryAfter : null);
          assert.deepEqual([reserving.handled.length, sentinel.exposureUnits, sentinel.reservedUnits], [0, before, 0]);
        }
      }
    });

    test('a client gone before the guard runs: nothing reserved (no event would settle it), the route does not run', async () => {
      const sentinel = await readySentinel();
      const { settle, calls } = recordedSettle();
      const [arrived, guardRan] = [deferred(), deferred()];
      const app = await startApp(fw, sentinel, { units: CHUNK_UNITS, settle }, oneChunk, {
        before: [fw.untilGone(arrived.resolve)],
        observe: (guard) => fw.observe(guard, guardRan.resolve),
      });
      const client = http.get(app.url);
      client.on('error', () => {}); // destroying it is the point
      await withTimeout(arrived.promise, WAIT_MS, 'the request to reach the app');
      client.destroy();
      await withTimeout(guardRan.promise, WAIT_MS, 'the guard to run');
      assert.equal(sentinel.reservedUnits, 0, 'a reservation nothing would settle');
      assert.deepEqual([app.handled.length, sentinel.exposureUnits, calls.length], [0, 0, 0]);
      assert.deepEqual(app.errorLogs, []);
    });

    test('without settle: admitted as before, no reservation on the request', async () => {
      const sentinel = await readySentinel();
      const app = await startApp(fw, sentinel, { units: 3 }, oneChunk);
      assertServed(await get(app.url), 1);
      assert.equal(app.handled[0].reservation, fw.noReservation);
      assert.deepEqual([sentinel.exposureUnits, sentinel.reservedUnits], [3, 0]);
    });

    for (const settle of [5, null, 'units', {}]) {
      test(`admission(sentinel, { settle: ${JSON.stringify(settle)} }) throws ERR_SPEND_SENTINEL_CONFIG naming "settle"`, async () => {
        const sentinel = await withoutEvidence();
        const err = catchError(() => fw.admission(sentinel, { settle }));
        assert.ok(err instanceof TypeError, String(err));
        assert.equal(err.code, 'ERR_SPEND_SENTINEL_CONFIG');
        assert.match(err.message, /^admission: settle: must be a function/);
      });
    }
  });
}
