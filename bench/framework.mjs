// Framework glue benchmark. Two questions:
//  1. What do the Express middlewares add to every request? probes() is mounted first, so every
//     request of the app passes through it; admission() runs on every metered request. Measured
//     by calling them directly, against a no-op middleware (the baseline).
//  2. What does a probe cost over HTTP? Sequential keep-alive GETs of /ready, against a route of
//     the same app returning the same JSON by hand (the baseline), for Express and Fastify.
// Run: npm run bench   (after npm run build). Prints medians; asserts nothing.
import http from 'node:http';
import { createRequire } from 'node:module';
import { measure, printRatios } from './measure.mjs';

const require = createRequire(import.meta.url);
const { Sentinel } = require('../js/main.js');
const { probes, admission } = require('../js/express.js');
const spendSentinel = require('../js/fastify.js');
const express = require('express');
const Fastify = require('fastify');

const HTTP_REQUESTS = 4000;
const HTTP_RUNS = 5;

function middlewareCosts(sentinel) {
  const probeMiddleware = probes(sentinel);
  const admit = admission(sentinel);
  // A GET, so the probe middleware compares the path (a POST would leave at the method check).
  const req = { method: 'GET', path: '/v1/usage', url: '/v1/usage', headers: {} };
  const res = {};
  let nexts = 0;
  const next = () => {
    nexts += 1;
  };
  const rows = [
    ['no-op middleware (baseline)', () => ((rq, rs, nx) => nx())(req, res, next)],
    ['probes(): a non-probe GET passing through', () => probeMiddleware(req, res, next)],
    ['admission(): an admitted request', () => admit(req, res, next)],
  ];
  const results = rows.map(([name, fn]) => [name, measure(fn, { calls: 1_000_000, runs: 7 })]);
  printRatios('Express middleware, median of 7 runs × 1,000,000 calls', 'ns/call', results);
  probeMiddleware.close();
  return nexts;
}

/** Median µs per sequential keep-alive GET of `path`. */
async function httpCost(port, path) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = () =>
    new Promise((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path, agent }, (res) => res.resume().once('end', resolve)).once('error', reject);
    });
  const samples = [];
  for (let run = -1; run < HTTP_RUNS; run++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < HTTP_REQUESTS; i++) await get();
    if (run >= 0) samples.push(Number(process.hrtime.bigint() - start) / HTTP_REQUESTS / 1000);
  }
  agent.destroy();
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

const HAND_MADE = (sentinel) => {
  const r = sentinel.readiness();
  return { status: r.status, evidence_age_seconds: r.evidenceAgeSeconds, reason: r.reason };
};

async function expressApp(sentinel) {
  const app = express();
  const probeMiddleware = probes(sentinel);
  app.use(probeMiddleware);
  app.get('/hand-made-ready', (req, res) => res.set('cache-control', 'no-store').json(HAND_MADE(sentinel)));
  const server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return { port: server.address().port, close: () => (probeMiddleware.close(), server.close()) };
}

async function fastifyApp(sentinel) {
  const app = Fastify();
  await app.register(spendSentinel, { sentinel });
  app.get('/hand-made-ready', async (req, reply) => reply.header('cache-control', 'no-store').send(HAND_MADE(sentinel)));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { port: app.server.address().port, close: () => app.close() };
}

async function main() {
  // A budget no benchmark can spend: a 1000 s window.
  const sentinel = new Sentinel({
    budget: { unverifiedUnits: 1e15, maxUnitsPerSecond: 1e12 },
    authority: { inspect: async () => 'valid' },
  });
  await sentinel.whenReady({ timeoutMs: 10_000 });
  console.log('');
  middlewareCosts(sentinel);
  for (const [name, start] of [
    ['Express 5', expressApp],
    ['Fastify 5', fastifyApp],
  ]) {
    const app = await start(sentinel);
    const rows = [
      ['hand-made /ready route (baseline)', await httpCost(app.port, '/hand-made-ready')],
      ['GET /ready (probes)', await httpCost(app.port, '/ready')],
      ['GET /live (probes)', await httpCost(app.port, '/live')],
    ];
    console.log('');
    printRatios(`${name} over HTTP, sequential keep-alive, median of ${HTTP_RUNS} × ${HTTP_REQUESTS} requests`, 'µs/request', rows);
    await app.close();
  }
  sentinel.close();
}

await main();
