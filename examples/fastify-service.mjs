// A Fastify 5 metering service wired end to end:  node examples/fastify-service.mjs
// (env: see sentinel-from-env.mjs). Register spend-sentinel first: its probes are answered in
// the first onRequest hook, so the rate limiter, the auth hook and CORS never see them.
import Fastify from 'fastify';
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import spendSentinel from 'spend-sentinel/fastify';
import { sentinelFromEnv, port, shutdownOptions, API_KEYS, unitsOf } from './sentinel-from-env.mjs';

const sentinel = sentinelFromEnv();
const app = Fastify({ logger: { level: 'warn' } });

await app.register(spendSentinel, { sentinel }); //   /ready /live /startup: before everything else
await app.register(cors);
await app.register(rateLimit, { max: 600, timeWindow: 60_000 });
app.addHook('onRequest', async (request, reply) => {
  if (!API_KEYS.has(request.headers['x-api-key'])) return reply.code(401).send({ error: 'unauthorized' });
});

let recorded = 0;
app.post(
  '/v1/usage',
  { preHandler: spendSentinel.admission(sentinel, { units: (request) => unitsOf(request.body) }) },
  async (request) => {
    recorded += unitsOf(request.body); // record usage only after admission said yes
    return { recorded: unitsOf(request.body), total: recorded };
  },
);

await app.listen({ port, host: '0.0.0.0' });
console.log(`fastify service listening on ${app.server.address().port}`);
spendSentinel.gracefulShutdown(app, sentinel, shutdownOptions);
