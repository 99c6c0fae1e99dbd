// Compile-time checks of spend-sentinel/express and spend-sentinel/fastify typings, written the
// way docs/frameworks.md wires them. Each `// @ts-expect-error` must be an error (else TS2578 fails tsc).
import express from 'express';
import Fastify from 'fastify';
import { Sentinel, Reservation } from 'spend-sentinel';
import { probes, admission, gracefulShutdown } from 'spend-sentinel/express';
import type { NotAdmittedBody, InvalidUnitsBody } from 'spend-sentinel/express';
import spendSentinel from 'spend-sentinel/fastify';

declare const sentinel: Sentinel;

const app = express();
app.use(probes(sentinel, { readyPath: '/healthz/ready', checks: { db: async () => true }, checkTimeoutMs: 200 }));
app.post('/v1/generate', admission(sentinel, { units: (req) => Number(req.get('x-units') ?? 1) }), (_req, res) => {
  res.json({ ok: true });
});
const server = app.listen(0);
const handle = gracefulShutdown(server, sentinel, { drainDelayMs: 5000, timeoutMs: 30_000, signals: ['SIGTERM'] });
const done: Promise<void> = handle.shutdown();
void done;
handle.dispose();
// @ts-expect-error units must be a number or a function of the request
admission(sentinel, { units: 'one' });
// @ts-expect-error signals are signal names
gracefulShutdown(server, sentinel, { signals: ['TERM'] });

async function fastifyWiring() {
  const f = Fastify();
  await f.register(spendSentinel, { sentinel, livePath: '/livez', logLevel: 'error' });
  f.post('/v1/generate', { preHandler: spendSentinel.admission(sentinel, { units: 2 }) }, async () => ({ ok: true }));
  spendSentinel.gracefulShutdown(f, sentinel, { drainDelayMs: 0 });
  // @ts-expect-error the plugin needs its sentinel
  await f.register(spendSentinel, { readyPath: '/r' });
  // Fastify's own registration options, and route options for the probe routes (OpenAPI).
  await f.register(spendSentinel, {
    sentinel,
    prefix: '/internal',
    logLevel: 'warn',
    routeOptions: {
      schema: { tags: ['ops'] },
      config: { openapi: true },
      ready: { schema: { summary: 'readiness', response: { 200: { type: 'object' } } } },
    },
  });
  // `fastify.sentinel`, as plugins decorate
  const decorated: Sentinel = f.sentinel;
  void decorated;
  // @ts-expect-error a probe route option is `schema` or `config`, not a handler
  await f.register(spendSentinel, { sentinel, routeOptions: { handler: async () => 'x' } });
  // @ts-expect-error the prefix is a string
  await f.register(spendSentinel, { sentinel, prefix: 1 });
}
void fastifyWiring;

// ---- admission is generic over the route's request: `units` sees the route's typed request -------
interface UsageBody {
  units: number;
}
async function typedRequests() {
  const f = Fastify();
  // The route's type argument reaches `units` through the preHandler's expected type.
  f.post<{ Body: UsageBody }>(
    '/v1/usage',
    { preHandler: spendSentinel.admission(sentinel, { units: (req) => req.body.units }) },
    async (req) => ({ recorded: req.body.units }),
  );
  f.post<{ Body: UsageBody }>('/v1/usage', { preHandler: [spendSentinel.admission(sentinel, { units: (req) => req.body.units })] }, async () => ({}));
  const fastifyHook = spendSentinel.admission<{ Body: UsageBody }>(sentinel, { units: (req) => req.body.units });
  const fastifyOptions: spendSentinel.AdmissionOptions<{ Querystring: { n: string } }> = { units: (req) => Number(req.query.n) };
  // @ts-expect-error without the route's types the body is unknown
  spendSentinel.admission(sentinel, { units: (req) => req.body.units });
  // @ts-expect-error the route's body has no such field
  spendSentinel.admission<{ Body: UsageBody }>(sentinel, { units: (req) => req.body.count });

  const e = express();
  e.post<'/v1/usage', {}, unknown, UsageBody>('/v1/usage', admission(sentinel, { units: (req) => req.body.units }), (req, res) => {
    res.json({ recorded: req.body.units });
  });
  const expressHandler = admission<{}, unknown, UsageBody>(sentinel, { units: (req) => req.body.units });
  // @ts-expect-error the route's body has no such field
  admission<{}, unknown, UsageBody>(sentinel, { units: (req) => req.body.count });
  void [fastifyHook, fastifyOptions, expressHandler];
}
void typedRequests;

// ---- settle: usage known after the work; the route reaches the reservation --------------------
function settledUsage() {
  const e = express();
  e.get(
    '/v1/stream',
    admission(sentinel, {
      units: 10,
      // `res` is Express's response: what the route recorded in res.locals is readable here.
      settle: (_req, res) => Number(res.locals.tokens ?? 0),
    }),
    (_req, res) => {
      const reservation: Reservation | undefined = res.locals.spendReservation;
      if (reservation?.extend(10)) res.write('more');
      res.end();
    },
  );
  // @ts-expect-error settle answers the units used, a number
  admission(sentinel, { settle: () => 'all of them' });
  // @ts-expect-error settle is a function of the request and the response
  admission(sentinel, { settle: 5 });
  // @ts-expect-error the reservation is a Reservation, not a number
  e.use((_req, res) => res.locals.spendReservation?.settle('5'));
  admission<{}, unknown, UsageBody>(sentinel, { units: (req) => req.body.units, settle: (req, res) => req.body.units + res.statusCode });

  const f = Fastify();
  f.get(
    '/v1/stream',
    {
      preHandler: spendSentinel.admission(sentinel, {
        units: 10,
        // Fastify's request and reply.
        settle: (request, reply) => (reply.statusCode === 200 ? Number(request.headers['x-used']) : 0),
      }),
    },
    async (request, reply) => {
      const reservation: Reservation | null | undefined = request.spendReservation;
      const more: boolean | undefined = reservation?.extend(10);
      return reply.send({ more });
    },
  );
  const fastifySettle: spendSentinel.AdmissionOptions<{ Body: UsageBody }> = {
    units: (req) => req.body.units,
    settle: (req, reply) => req.body.units - reply.elapsedTime,
  };
  // @ts-expect-error the route's body has no such field
  spendSentinel.admission<{ Body: UsageBody }>(sentinel, { settle: (req) => req.body.count });
  // @ts-expect-error settle answers a number
  spendSentinel.admission(sentinel, { settle: () => undefined });
  f.addHook('onRequest', async (request) => {
    // @ts-expect-error the reservation may be absent: no settling guard on this route
    request.spendReservation.extend(1);
  });
  void fastifySettle;
}
void settledUsage;

// ---- the guard's answers, as a client reads them: 503 / 413 `not_admitted`, 400 `invalid_units` ----
function guardAnswers(status: number, body: NotAdmittedBody | InvalidUnitsBody) {
  if (body.error === 'invalid_units') return 'fix the request';
  const tooLarge: NotAdmittedBody = { error: 'not_admitted', reason: 'exceeds_node_budget' };
  const later: spendSentinel.NotAdmittedBody = { error: 'not_admitted', reason: 'budget_exhausted' };
  const invalid: spendSentinel.InvalidUnitsBody = { error: 'invalid_units' };
  // @ts-expect-error a refusal's reason is a readiness reason or exceeds_node_budget
  const unknown: NotAdmittedBody = { error: 'not_admitted', reason: 'too_big' };
  void [tooLarge, later, invalid, unknown];
  // A missing field is the client's mistake (400), so `units` may answer `undefined`.
  admission<{}, unknown, { units?: number }>(sentinel, { units: (req) => req.body.units });
  spendSentinel.admission<{ Body: { units?: number } }>(sentinel, { units: (req) => req.body.units });
  // @ts-expect-error but never a string
  admission<{}, unknown, { units: string }>(sentinel, { units: (req) => req.body.units });
  return status === 413 || body.reason === 'exceeds_node_budget' ? 'never' : 'retry';
}
void guardAnswers;
