// The admission guard's `settle` option (usage known only after the work), through real Express 5
// and Fastify 5 servers and real HTTP clients: the guard reserves before the route, the route
// extends the reservation per chunk (and may `record` each chunk once written), and the guard
// settles it at what `settle(req, res)` answers, the whole usage, once the response has finished
// or the connection closed. Every behaviour runs on both.
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
import { readExposition, valueOf } from './helpers/exposition.mjs';

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

/** Each request as the route saw it (see `handled`), keyed by the framework's request (`settle` reads it). */
const SEEN = new WeakMap();

/**
 * One request as the route saw it: `{ req, res, reservation, usage, closed }`, `usage.units`
 * being what the route counted it used. `closed` resolves on the raw response's 'close', whose
 * listener is added after the guard's: once it resolves, the guard has done whatever it does at
 * the end of the response.
 */
function handled(list, req, res, reservation, raw) {
  const usage = { units: 0 };
  const seen = { req, res, reservation, usage, closed: withTimeout(once(raw, 'close'), WAIT_MS, 'the response to close') };
  SEEN.set(req, seen);
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

const pinoLine = ({ msg, err, recordedUnits, heldUnits }) => ({ msg, err: err?.message, recordedUnits, heldUnits });

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

/**
 * `settle` that answers what the route counted, plus `extra` (a part of the usage the route did
 * not count, or, below 0, a figure short of it), and keeps each call `{ req, res, units }`; with
 * `sentinel`, also what the reservation had recorded and held then, and the sentinel's `ledger`.
 */
function recordedSettle({ extra = 0, sentinel } = {}) {
  const calls = [];
  const called = deferred();
  const settle = (req, res) => {
    const { usage, reservation } = SEEN.get(req);
    const units = usage.units + extra;
    const call = { req, res, units };
    if (sentinel) Object.assign(call, { recorded: reservation.recordedUnits, held: reservation.heldUnits, ledger: ledgerOf(sentinel) });
    calls.push(call);
    called.resolve(units);
    return units;
  };
  return { settle, calls, called: () => withTimeout(called.promise, WAIT_MS, 'the guard to call settle') };
}

/**
 * The sentinel's exposure, and from its `metrics()` text the units open reservations hold and the
 * units refunded and recorded as overage so far (the held units are the read-out's).
 */
function ledgerOf(sentinel) {
  const families = readExposition(sentinel.metrics());
  const reserved = valueOf(families, 'spend_sentinel_reserved_units');
  assert.equal(reserved, sentinel.reservedUnits, 'spend_sentinel_reserved_units is reservedUnits');
  return {
    exposure: sentinel.exposureUnits,
    reserved,
    refunded: valueOf(families, 'spend_sentinel_refunded_units_total'),
    overage: valueOf(families, 'spend_sentinel_overage_units_total'),
  };
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

/**
 * At most `chunks` chunks, extending before each after the first, and recording each chunk's cost
 * once it is written; then the line that tells the client why the stream ended: `finish_reason:
 * stop`, or `finish_reason: budget` when an extend was refused (never a normal end). With
 * `recorded` (a deferred), resolves it after the last record instead and waits for the client to
 * leave.
 */
function recordingChunks(chunks, recorded) {
  return async function* recording({ reservation, usage, closed }) {
    for (let chunk = 0; chunk < chunks; chunk += 1) {
      if (chunk > 0 && !reservation.extend(CHUNK_UNITS)) {
        yield 'finish_reason: budget\n';
        return;
      }
      yield `chunk ${chunk}\n`;
      usage.units += CHUNK_COST;
      reservation.record(CHUNK_COST);
    }
    if (recorded === undefined) {
      yield 'finish_reason: stop\n';
      return;
    }
    recorded.resolve();
    await closed;
  };
}

const chunksOf = (text) => text.split('\n').filter((line) => line !== '');

/** A 200 whose body is `chunks` chunks, then, with `finish`, the line `finish_reason: <finish>`. */
function assertServed(res, chunks, finish) {
  assert.equal(res.status, 200, `${res.status} ${res.text}`);
  const lines = Array.from({ length: chunks }, (_, i) => `chunk ${i}`);
  if (finish !== undefined) lines.push(`finish_reason: ${finish}`);
  assert.deepEqual(chunksOf(res.text), lines);
}

/**
 * Opens GET `url` with node:http and destroys the request once the first body bytes arrive and
 * `after` has resolved; answers those first bytes.
 */
async function leaveAfterFirstChunk(url, after) {
  const req = http.get(url);
  req.on('error', () => {}); // destroying it is the point
  const [res] = await withTimeout(once(req, 'response'), WAIT_MS, 'the response headers');
  assert.equal(res.statusCode, 200);
  const [first] = await withTimeout(once(res, 'data'), WAIT_MS, 'the first chunk');
  await after;
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

    // A stream reserves 10, extends 10 before each chunk after the first and records each chunk's
    // 7 once written. `extra` is what the whole usage `settle` answers adds to the recorded units
    // (a closing part the route did not record, or a figure short of them); `atSettle` is the
    // ledger when the guard calls `settle`, `settled` the ledger afterwards.
    const FOUR_CHUNKS = { chunks: 4, finish: 'stop', atSettle: { exposure: 40, reserved: 12, refunded: 0, overage: 0 } };
    const RECORDING_STREAMS = [
      {
        label: 'ends by itself; its whole usage is 5 more than it recorded, which refunds 7 of the 12 held',
        ...FOUR_CHUNKS,
        extra: 5,
        settled: { exposure: 33, reserved: 0, refunded: 7, overage: 0 },
      },
      {
        label: 'ends by itself; its whole usage is 20 more than it recorded, 8 above the 12 held',
        ...FOUR_CHUNKS,
        extra: 20,
        settled: { exposure: 48, reserved: 0, refunded: 0, overage: 8 },
      },
      {
        label: 'ends by itself; settle answers 8 less than it recorded, which takes nothing back',
        ...FOUR_CHUNKS,
        extra: -8,
        settled: { exposure: 28, reserved: 0, refunded: 12, overage: 0 },
      },
      {
        // Reserved 10, then 9 extends of 10 fill the budget of 100; the 10th is refused.
        label: 'is cut short by a refused extend and tells the client so',
        chunks: Infinity,
        finish: 'budget',
        atSettle: { exposure: 100, reserved: 30, refunded: 0, overage: 0 },
        extra: 0,
        settled: { exposure: 70, reserved: 0, refunded: 30, overage: 0 },
      },
    ];
    for (const { label, chunks, extra, finish, atSettle, settled } of RECORDING_STREAMS) {
      test(`a stream that records each chunk ${label}: settled once, only the whole usage less the recorded units is new`, async () => {
        const sentinel = await readySentinel();
        const { settle, calls, called } = recordedSettle({ extra, sentinel });
        const app = await startApp(fw, sentinel, { units: CHUNK_UNITS, settle }, recordingChunks(chunks));

        const written = (atSettle.exposure - atSettle.reserved) / CHUNK_COST;
        assertServed(await get(app.url), written, finish);
        const [seen] = app.handled;
        await called();
        await seen.closed;
        const recorded = written * CHUNK_COST;
        assert.equal(calls.length, 1, 'settled once, though both finish and close happened');
        const { req: _req, res: _res, ...atCall } = calls[0];
        assert.deepEqual(atCall, { units: recorded + extra, recorded, held: atSettle.reserved, ledger: atSettle }, 'what settle answered, and what it saw');
        assert.deepEqual([seen.reservation.recordedUnits, seen.reservation.heldUnits, seen.reservation.settled], [recorded, 0, true]);
        assert.deepEqual(ledgerOf(sentinel), settled);
        assert.deepEqual(app.errorLogs, []);
      });
    }

    test('a client that leaves mid-stream after records: settled once on close, nothing held, the recorded units stand', async () => {
      // settle answering what was sent (the 14 recorded), or 0 (nothing billed to a client who left)
      for (const extra of [0, -14]) {
        const sentinel = await readySentinel();
        const { settle, calls, called } = recordedSettle({ extra, sentinel });
        const recorded = deferred();
        const app = await startApp(fw, sentinel, { units: CHUNK_UNITS, settle }, recordingChunks(2, recorded));

        const twoRecorded = withTimeout(recorded.promise, WAIT_MS, 'the route to record two chunks');
        assert.equal(await leaveAfterFirstChunk(app.url, twoRecorded), 'chunk 0\n');
        await called();
        const [seen] = app.handled;
        await seen.closed;
        assert.equal(calls.length, 1, 'settled once');
        assert.deepEqual(calls[0].ledger, { exposure: 20, reserved: 6, refunded: 0, overage: 0 }, 'the client left: 20 admitted, 14 recorded');
        assert.deepEqual([seen.reservation.recordedUnits, seen.reservation.heldUnits, seen.reservation.settled], [14, 0, true]);
        assert.deepEqual(ledgerOf(sentinel), { exposure: 14, reserved: 0, refunded: 6, overage: 0 }, `settle answered ${14 + extra}`);
        assert.deepEqual(app.errorLogs, []);
      }
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
      test(`a settle that ${label} after records: settled at the recorded plus held units, logged as an error, the app goes on`, async () => {
        const sentinel = await readySentinel();
        // Reserves 30 and extends by 10: 40 admitted, 14 of them recorded (two chunks), 26 held.
        const app = await startApp(fw, sentinel, { units: 30, settle }, recordingChunks(2));

        assertServed(await get(app.url), 2, 'stop');
        const [first] = app.handled;
        await first.closed;
        assert.deepEqual([first.reservation.recordedUnits, first.reservation.heldUnits, first.reservation.settled], [14, 0, true], 'nothing left open');
        assert.deepEqual(ledgerOf(sentinel), { exposure: 40, reserved: 0, refunded: 0, overage: 0 }, 'nothing refunded, the recorded units not counted twice');
        assert.equal(app.errorLogs.length, 1, JSON.stringify(app.errorLogs));
        const [log] = app.errorLogs;
        assert.match(log.msg, /^admission: settle failed, so the reservation settled at 40 units \(14 recorded \+ 26 held; nothing refunded\): /);
        assert.match(log.err, why);
        if (fw.name === 'fastify') assert.deepEqual([log.recordedUnits, log.heldUnits], [14, 26]);

        assertServed(await get(app.url), 2, 'stop');
        await app.handled[1].closed;
        assert.deepEqual(ledgerOf(sentinel), { exposure: 80, reserved: 0, refunded: 0, overage: 0 });
        assert.equal(app.errorLogs.length, 2);
      });
    }

    test('a route that settles or releases the reservation itself, after records or not: settle is not called, nothing settles twice', async () => {
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
      // Records two chunks of 7 (26 of its 40 still held), then settles at its whole usage of 16:
      // 2 new, 24 refunded. A record after its own settle throws and changes nothing.
      const recordsThenSettles = async function* ({ reservation, usage }) {
        reservation.record(CHUNK_COST);
        reservation.record(CHUNK_COST);
        reservation.settle(16);
        usage.recordAfterSettle = catchError(() => reservation.record(1)).code;
        yield 'chunk 0\n';
      };
      const SETTLED = 'ERR_SPEND_SENTINEL_SETTLED';
      // body, then the exposure and the refunded units so far, what the route recorded, and what
      // its record after the settle threw
      for (const [body, exposure, refunded, recorded, recordAfterSettle] of [
        [settlesItself, 12, 28, 0, undefined],
        [releasesIt, 12, 68, 0, undefined],
        [recordsThenSettles, 28, 92, 14, SETTLED],
      ]) {
        const app = await startApp(fw, sentinel, { units: 40, settle }, body);
        assertServed(await get(app.url), 1);
        const [seen] = app.handled;
        await seen.closed;
        assert.deepEqual(ledgerOf(sentinel), { exposure, reserved: 0, refunded, overage: 0 }, body.name);
        assert.deepEqual([seen.reservation.recordedUnits, seen.reservation.heldUnits, seen.reservation.settled], [recorded, 0, true]);
        assert.equal(seen.usage.recordAfterSettle, recordAfterSettle);
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
