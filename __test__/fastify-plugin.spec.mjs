// The Fastify plugin as a Fastify plugin (docs/frameworks.md, Fastify 5): Fastify's own registration options
// (prefix, logLevel, logSerializers), HEAD without exposeHeadRoutes, `fastify.sentinel`, route
// `schema`/`config` for the probe routes, and `fastify.inject()` without a listening server.
// Every test uses `app.inject`; probes.spec.mjs covers the answers themselves over real sockets.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { fastOptions, never, recordTransitions, scriptedAuthority, sentinelPool } from './helpers/wait.mjs';

const require = createRequire(import.meta.url);
const { Sentinel } = require('../js/main.js');
const Fastify = require('fastify');
const spendSentinel = require('spend-sentinel/fastify');

const ROOMY = { budget: { unverifiedUnits: 1000, maxUnitsPerSecond: 100 }, refresh: { timeoutMs: 5000 } };
const pool = sentinelPool(Sentinel);
const apps = new Set();
afterEach(async () => {
  for (const a of apps) await a.close().catch(() => {});
  apps.clear();
  pool.closeAll();
});

function app(options) {
  const a = Fastify(options);
  apps.add(a);
  return a;
}

async function readySentinel() {
  const sentinel = pool.make(fastOptions(scriptedAuthority('valid'), ROOMY));
  await recordTransitions(sentinel).waitFor({ to: 'ready' });
  return sentinel;
}

test('prefix (a Fastify registration option) moves the probes under it; logLevel and logSerializers are accepted', async () => {
  const sentinel = await readySentinel();
  const a = app();
  await a.register(spendSentinel, { prefix: '/internal', logLevel: 'error', logSerializers: { req: () => 'r' }, sentinel });
  for (const probe of ['ready', 'live', 'startup']) {
    const res = await a.inject(`/internal/${probe}`);
    assert.equal(res.statusCode, 200, `/internal/${probe}: ${res.body}`);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal((await a.inject(`/${probe}`)).statusCode, 404, `/${probe} is no probe under a prefix`);
  }
  const trailing = app();
  await trailing.register(spendSentinel, { prefix: '/internal/', sentinel });
  assert.equal((await trailing.inject('/internal/ready')).statusCode, 200, 'a trailing slash on the prefix');
});

test('a prefix that is not a path fails register with ERR_SPEND_SENTINEL_CONFIG naming prefix', async () => {
  const sentinel = await readySentinel();
  const a = app();
  a.register(spendSentinel, { prefix: 'internal', sentinel });
  await assert.rejects(a.ready(), (err) => err.code === 'ERR_SPEND_SENTINEL_CONFIG' && /\bprefix\b/.test(err.message));
});

test('HEAD answers even with exposeHeadRoutes: false (and, by default, once: no duplicate route)', async () => {
  const sentinel = pool.make(fastOptions(scriptedAuthority(never), ROOMY));
  for (const exposeHeadRoutes of [false, true]) {
    const a = app({ exposeHeadRoutes });
    await a.register(spendSentinel, { sentinel });
    const head = await a.inject({ method: 'HEAD', url: '/startup' });
    assert.deepEqual([head.statusCode, head.body], [503, ''], `exposeHeadRoutes ${exposeHeadRoutes}`);
    assert.equal(head.headers['cache-control'], 'no-store');
    const get = await a.inject('/startup');
    assert.deepEqual([get.statusCode, get.json()], [503, { status: 'starting' }]);
  }
});

test('fastify.sentinel: decorated; a second registration with the same sentinel is fine, a different one fails unless encapsulated', async () => {
  const sentinel = await readySentinel();
  const other = await readySentinel();
  const a = app();
  await a.register(spendSentinel, { sentinel });
  assert.equal(a.sentinel, sentinel);
  await a.register(spendSentinel, { sentinel, prefix: '/internal' });
  assert.equal((await a.inject('/internal/startup')).statusCode, 200, 'the second registration serves its probes');
  assert.equal((await a.inject('/startup')).statusCode, 200, 'and the first still does');

  const clash = app();
  await clash.register(spendSentinel, { sentinel });
  clash.register(spendSentinel, { sentinel: other, prefix: '/other' });
  await assert.rejects(clash.ready(), (err) => err.code === 'ERR_SPEND_SENTINEL_CONFIG' && /\bsentinel\b/.test(err.message));

  const split = app();
  await split.register(spendSentinel, { sentinel });
  let child;
  await split.register(async (c) => {
    await c.register(spendSentinel, { sentinel: other, prefix: '/other' });
    child = c;
  });
  await split.ready();
  assert.equal(split.sentinel, sentinel);
  assert.equal(child.sentinel, other);
  assert.equal((await split.inject('/other/ready')).statusCode, 200);
});

test('routeOptions: schema and config reach the probe routes (shared, or per probe); the probe markers stay', async () => {
  const sentinel = await readySentinel();
  const a = app();
  const routes = [];
  a.addHook('onRoute', (route) => routes.push(route));
  const shared = { tags: ['ops'], response: { 200: { type: 'object' } } };
  const readySchema = { tags: ['ops'], summary: 'readiness' };
  await a.register(spendSentinel, {
    sentinel,
    routeOptions: { schema: shared, config: { openapi: true, rateLimit: { max: 1 } }, ready: { schema: readySchema, config: { probe: 'r' } } },
  });
  const byUrl = Object.fromEntries(routes.map((r) => [r.url, r]));
  assert.deepEqual(Object.keys(byUrl).sort(), ['/live', '/ready', '/startup']);
  assert.equal(byUrl['/ready'].schema, readySchema);
  assert.equal(byUrl['/live'].schema, shared);
  assert.equal(byUrl['/startup'].schema, shared);
  assert.equal(byUrl['/ready'].config.probe, 'r');
  assert.equal(byUrl['/ready'].config.openapi, true);
  assert.equal(byUrl['/live'].config.probe, undefined);
  for (const route of routes) assert.equal(route.config.rateLimit, false, `${route.url}: probes stay out of rate limiting`);
  const res = await a.inject('/ready');
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().status, 'ready', 'answered by the plugin, not serialized away by the response schema');

  const bad = app();
  bad.register(spendSentinel, { sentinel, routeOptions: { handler: () => {} } });
  await assert.rejects(bad.ready(), (err) => err.code === 'ERR_SPEND_SENTINEL_CONFIG' && /\brouteOptions\b/.test(err.message));
});

test('probes under a prefix still answer before auth added after the plugin', async () => {
  const sentinel = await readySentinel();
  const a = app();
  await a.register(spendSentinel, { sentinel, prefix: '/internal', routeOptions: { config: { auth: true } } });
  a.addHook('onRequest', async (request, reply) => reply.code(401).send({ error: 'unauthorized' }));
  a.get('/api', async () => ({ ok: true }));
  assert.equal((await a.inject('/internal/ready')).statusCode, 200);
  assert.equal((await a.inject('/api')).statusCode, 401);
});

test('a deep check that never settles does not hang fastify.inject() without a listening server', () => {
  // In its own process: there, nothing but the check's bound may keep the event loop alive.
  const script = `
    import { createRequire } from 'node:module';
    const require = createRequire(${JSON.stringify(fileURLToPath(import.meta.url))});
    const { Sentinel } = require('../js/main.js');
    const Fastify = require('fastify');
    const spendSentinel = require('spend-sentinel/fastify');
    const sentinel = new Sentinel({
      budget: { unverifiedUnits: 1000, maxUnitsPerSecond: 100 },
      authority: { inspect: async () => 'valid' },
    });
    const app = Fastify();
    await app.register(spendSentinel, { sentinel, checks: { stuck: () => new Promise(() => {}) }, checkTimeoutMs: 200 });
    const res = await app.inject('/live?deep=1');
    console.log(JSON.stringify({ status: res.statusCode, body: res.json() }));
    await app.close();
    await sentinel.close();
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 10_000 });
  assert.equal(run.status, 0, `exit ${run.status} ${run.signal ?? ''}; stderr: ${run.stderr}`);
  const out = JSON.parse(run.stdout.trim().split('\n').at(-1));
  assert.equal(out.status, 200);
  assert.equal(out.body.checks.stuck, 'timeout');
});
