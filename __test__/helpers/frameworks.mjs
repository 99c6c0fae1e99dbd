// Real Express 5 and Fastify 5 apps wired the way docs/frameworks.md says, on 127.0.0.1 with an
// ephemeral port. Suites run the same behaviour against both: `for (const fw of FRAMEWORKS)`.
//
// `guarded: true` adds what a real service has in front of its own routes, mounted AFTER the
// spend-sentinel probes: a rate limit of 1 request per minute, an auth check that rejects a
// request without `authorization: Bearer test-token`, and CORS. Routes:
//   GET  /api/data   → 200 {"data":"ok"}                (behind limit + auth)
//   POST /api/usage  → admission guard, then 200 {"recorded": <units>}
// The units of /api/usage come from the `x-units` header (default 1) unless options.admission
// gives its own `units`.
import { createRequire } from 'node:module';
import { pollUntil } from './wait.mjs';

const require = createRequire(import.meta.url);
const express = require('express');
const Fastify = require('fastify');
const expressRateLimit = require('express-rate-limit').rateLimit;
const cors = require('cors');
const fastifyRateLimit = require('@fastify/rate-limit');
const fastifyCors = require('@fastify/cors');
const spendExpress = require('spend-sentinel/express');
const spendSentinel = require('spend-sentinel/fastify');

export const TOKEN = 'test-token';
const unitsFromHeader = (req) => Number(req.headers['x-units'] ?? 1);

const authorized = (headers) => headers.authorization === `Bearer ${TOKEN}`;

async function startExpress(sentinel, { probes = {}, admission = {}, guarded = false } = {}) {
  const app = express();
  const probeMiddleware = spendExpress.probes(sentinel, probes);
  app.use(probeMiddleware);
  if (guarded) {
    app.use(cors());
    app.use(expressRateLimit({ windowMs: 60_000, limit: 1, standardHeaders: 'draft-7', legacyHeaders: false }));
    app.use((req, res, next) => (authorized(req.headers) ? next() : res.status(401).json({ error: 'unauthorized' })));
  }
  app.get('/api/data', (req, res) => res.json({ data: 'ok' }));
  app.post('/api/usage', spendExpress.admission(sentinel, { units: unitsFromHeader, ...admission }), (req, res) =>
    res.json({ recorded: unitsFromHeader(req) }),
  );
  // Errors (e.g. a units function that throws) become a bare 500, as Express's default would.
  // eslint-disable-next-line no-unused-vars -- Express recognises error handlers by their 4 parameters
  app.use((err, req, res, next) => res.status(500).json({ error: 'internal' }));
  const server = await new Promise((resolve, reject) => {
    const s = app.listen(0, '127.0.0.1', (err) => (err ? reject(err) : resolve(s)));
  });
  return {
    name: 'express',
    server,
    url: `http://127.0.0.1:${server.address().port}`,
    async close() {
      probeMiddleware.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function startFastify(sentinel, { probes = {}, admission = {}, guarded = false } = {}) {
  const app = Fastify();
  await app.register(spendSentinel, { sentinel, ...probes });
  if (guarded) {
    await app.register(fastifyCors);
    await app.register(fastifyRateLimit, { max: 1, timeWindow: 60_000 });
    app.addHook('onRequest', async (req, reply) => {
      if (!authorized(req.headers)) return reply.code(401).send({ error: 'unauthorized' });
    });
  }
  app.get('/api/data', async () => ({ data: 'ok' }));
  app.post(
    '/api/usage',
    { preHandler: spendSentinel.admission(sentinel, { units: unitsFromHeader, ...admission }) },
    async (req) => ({ recorded: unitsFromHeader(req) }),
  );
  // Errors keep their HTTP status (the rate limiter's 429); anything else is a bare 500.
  app.setErrorHandler((err, _req, reply) => reply.code(err.statusCode ?? 500).send({ error: err.statusCode ? err.message : 'internal' }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    name: 'fastify',
    app,
    server: app.server,
    url: `http://127.0.0.1:${app.server.address().port}`,
    async close() {
      app.server.closeAllConnections();
      await app.close();
    },
  };
}

/** Each entry: `{ name, start(sentinel, options) → Promise<{ name, url, server, close() }> }`. */
export const FRAMEWORKS = [
  { name: 'express', start: startExpress },
  { name: 'fastify', start: startFastify },
];

/** GET (or `init.method`) `url`; resolves `{ status, headers, text, json }` (json null if not JSON). */
export async function request(url, init = {}) {
  const res = await fetch(url, init);
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON; tests that need JSON assert on it
  }
  return { status: res.status, headers: res.headers, text, json };
}

/**
 * Requests `url` until `predicate(answer)` holds; resolves with that answer. Fails after `ms`,
 * reporting the last answer seen.
 */
export function pollEndpoint(url, predicate, { ms = 3000, label = url, init } = {}) {
  let last = null;
  const attempt = async () => {
    last = await request(url, init);
    return predicate(last) ? last : null;
  };
  return pollUntil(attempt, { ms, label: () => `${label}; last answer: ${last ? `${last.status} ${last.text}` : 'none'}` });
}
