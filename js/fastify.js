'use strict';
// Fastify 5 glue: `await app.register(spendSentinel, { sentinel, ...options })` serves the three
// probes; `spendSentinel.admission(sentinel)` is a preHandler for metered routes;
// `spendSentinel.gracefulShutdown(app, sentinel)` drains and closes through `app.close()`.

const fp = require('fastify-plugin');
const { createProbes } = require('./probes');
const { configError } = require('./options');
const { FASTIFY_PLUGIN } = require('./options-catalog');
const { PROBE_NAMES } = require('./route-options');
const { createAdmission } = require('./admission');
const { Reservation } = require('./reservation');
const { gracefulShutdown: shutdownFor } = require('./shutdown');
const { BASE_HEADERS, isDeep } = require('./http-answer');

/** Marks the probe routes so the early hook recognises them without comparing paths. */
const PROBE_ROUTE = Symbol('spend-sentinel probe route');

async function spendSentinelPlugin(app, opts) {
  const { sentinel, ...options } = opts;
  const p = createProbes('spendSentinel', sentinel, options, FASTIFY_PLUGIN);
  decorateSentinel(app, sentinel);
  // `request.spendReservation`, set by a settling `admission` guard; null on every other request.
  if (!app.hasRequestDecorator('spendReservation')) app.decorateRequest('spendReservation', null);
  app.addHook('onClose', async () => p.close());

  const answer = async (request, reply) => {
    const probe = request.routeOptions.config[PROBE_ROUTE];
    const result = probe === 'live' && isDeep(request.url) ? await p.live(true) : p[probe]();
    return reply.code(result.statusCode).headers(BASE_HEADERS).send(JSON.stringify(result.body));
  };
  // Answered in onRequest, the first hook: a rate limiter or auth check added to the app after
  // this plugin (as an onRequest hook, or as a preHandler) never runs for a probe. So do body
  // parsing and validation: a route `schema` documents the probe, it does not check requests.
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config?.[PROBE_ROUTE] !== undefined) return answer(request, reply);
  });
  for (const probe of PROBE_NAMES) {
    const { schema, config } = p.config.routeOptions[probe];
    app.route({
      // HEAD declared here, not left to Fastify (`exposeHeadRoutes`), so that it answers even
      // in an app created with `exposeHeadRoutes: false`.
      method: ['GET', 'HEAD'],
      exposeHeadRoute: false,
      url: `${p.config.prefix}${p.config[`${probe}Path`]}`,
      logLevel: p.config.logLevel,
      ...(p.config.logSerializers && { logSerializers: p.config.logSerializers }),
      ...(schema && { schema }),
      // The marker and `rateLimit: false` come last: a user's `config` cannot turn them off.
      config: { ...config, [PROBE_ROUTE]: probe, rateLimit: false },
      handler: answer,
    });
  }
}

/**
 * `fastify.sentinel`, as plugins decorate. A second registration in the same context with the
 * same sentinel (another prefix, say) leaves it; with a different one it fails, since
 * `fastify.sentinel` could only name one of them: register that one in its own encapsulated
 * context (`app.register(async (child) => child.register(spendSentinel, …))`).
 */
function decorateSentinel(app, sentinel) {
  if (!Object.hasOwn(app, 'sentinel')) {
    app.decorate('sentinel', sentinel);
  } else if (app.sentinel !== sentinel) {
    throw configError(
      'spendSentinel',
      'sentinel',
      'differs from the `fastify.sentinel` this context already has; register a second sentinel in its own encapsulated context',
      Error,
    );
  }
}

const spendSentinel = fp(spendSentinelPlugin, { fastify: '5.x', name: 'spend-sentinel' });

/**
 * A preHandler for routes that record usage: admitted → continue; otherwise the guard's JSON answer
 * (503 + Retry-After; 400 for units that are not units; 413 for units above the node budget).
 * With `settle`, the units are reserved instead (`request.spendReservation`) and settled once the
 * response is over.
 */
function admission(sentinel, options) {
  const guard = createAdmission('admission', sentinel, options, logSettleFailure);
  return guard.decide === undefined ? reservingAdmission(guard) : admitting(guard.decide);
}

function admitting(decide) {
  return async function spendSentinelAdmission(request, reply) {
    const refused = decide(request);
    if (refused === null) return;
    return refuse(reply, refused);
  };
}

/**
 * Settles on the raw response's 'finish' or 'close', whichever comes first (the later one finds
 * the reservation settled). Not the `onResponse` / `onRequestAbort` hooks: a preHandler cannot
 * add hooks for one request, and `onRequestAbort` misses a client that leaves mid-stream once
 * its request body has arrived (the request is complete then, not aborted), which 'close' sees.
 */
function reservingAdmission({ reserve, settleAtEnd }) {
  return async function spendSentinelAdmission(request, reply) {
    const raw = reply.raw;
    // The client left while an earlier hook ran: the response has closed, so no event would
    // ever settle a reservation, and nobody waits for the route's answer. Stop here.
    if (raw.destroyed) return reply.hijack();
    const answer = reserve(request);
    if (!(answer instanceof Reservation)) return refuse(reply, answer);
    request.spendReservation = answer;
    const settle = () => settleAtEnd(answer, request, reply);
    raw.on('finish', settle);
    raw.on('close', settle);
  };
}

function refuse(reply, { statusCode, headers, body }) {
  return reply.code(statusCode).headers({ ...BASE_HEADERS, ...headers }).send(JSON.stringify(body));
}

function logSettleFailure(request, fields, msg) {
  request.log.error(fields, msg);
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
