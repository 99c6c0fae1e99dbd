'use strict';
// Fastify 5 glue: `await app.register(spendSentinel, { sentinel, ...options })` serves the three
// probes; `spendSentinel.admission(sentinel)` is a preHandler for metered routes;
// `spendSentinel.gracefulShutdown(app, sentinel)` drains and closes through `app.close()`.

const fp = require('fastify-plugin');
const { createProbes } = require('./probes');
const { createAdmission } = require('./admission');
const { gracefulShutdown: shutdownFor } = require('./shutdown');
const { BASE_HEADERS, isDeep } = require('./http-answer');

const FASTIFY_OPTIONS = {
  // Probes arrive every few seconds from every kubelet: keep them out of the info-level log.
  logLevel: (value, fail) => {
    if (value === undefined) return 'warn';
    if (typeof value !== 'string' || value === '') fail('must be a Fastify log level such as "warn"');
    return value;
  },
};

/** Marks the probe routes so the early hook recognises them without comparing paths. */
const PROBE_ROUTE = Symbol('spend-sentinel probe route');

async function spendSentinelPlugin(app, opts) {
  const { sentinel, ...options } = opts;
  const p = createProbes('spendSentinel', sentinel, options, FASTIFY_OPTIONS);
  app.addHook('onClose', async () => p.close());

  const answer = async (request, reply) => {
    const probe = request.routeOptions.config[PROBE_ROUTE];
    const result = probe === 'live' && isDeep(request.url) ? await p.live(true) : p[probe]();
    return reply.code(result.statusCode).headers(BASE_HEADERS).send(JSON.stringify(result.body));
  };
  // Answered in onRequest, the first hook: a rate limiter or auth check added to the app after
  // this plugin (as an onRequest hook, or as a preHandler) never runs for a probe.
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config?.[PROBE_ROUTE] !== undefined) return answer(request, reply);
  });
  for (const [probe, url] of [
    ['ready', p.config.readyPath],
    ['live', p.config.livePath],
    ['startup', p.config.startupPath],
  ]) {
    app.route({
      method: 'GET', // Fastify adds the HEAD route itself (exposeHeadRoutes)
      url,
      logLevel: p.config.logLevel,
      config: { [PROBE_ROUTE]: probe, rateLimit: false },
      handler: answer,
    });
  }
}

const spendSentinel = fp(spendSentinelPlugin, { fastify: '5.x', name: 'spend-sentinel' });

/** A preHandler for routes that record usage: admitted → continue; refused → 503 + Retry-After. */
function admission(sentinel, options) {
  const decide = createAdmission('admission', sentinel, options);
  return async function spendSentinelAdmission(request, reply) {
    const refused = decide(request);
    if (refused === null) return;
    return reply.code(refused.statusCode).headers({ ...BASE_HEADERS, ...refused.headers }).send(JSON.stringify(refused.body));
  };
}

/** SIGTERM/SIGINT → drain, wait, `app.close()` (bounded), close the sentinel, exit 0. */
function gracefulShutdown(app, sentinel, options) {
  return shutdownFor('gracefulShutdown', app, sentinel, options);
}

// The plugin is the module (`require('spend-sentinel/fastify')`, ESM default import) and carries
// the helpers as properties. Each is assigned as `module.exports.name = …`, the form Node's
// CommonJS export detection (cjs-module-lexer) sees, so that ESM
// `import { admission, gracefulShutdown } from 'spend-sentinel/fastify'` works as the typings say;
// properties set on the function under another name are invisible to it.
module.exports = spendSentinel;
module.exports.admission = admission;
module.exports.gracefulShutdown = gracefulShutdown;
module.exports.spendSentinel = spendSentinel;
module.exports.default = spendSentinel;
