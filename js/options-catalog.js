'use strict';
// Every option of the framework glue, once: `readOptions` (options.js) checks options against
// these entries and fills in their defaults, and the typings' option fields (common.d.ts,
// fastify.d.ts) and the option tables of docs/frameworks.md are generated from them by
// `node scripts/gen-js-options.mjs` (a test fails when they disagree).
//
// An entry: `name`; `kind`, its type and rule (option-kinds.js); `default`, the parsed value an
// absent option gets, or `defaultOf()` when it depends on the environment, and `shown`, the
// default in words when the value alone would not say it (`undefined`/`null` mean none); `doc`,
// what it is for (Markdown, no links); `also`, a rule beyond the kind's that code elsewhere
// checks; `ts`, its TypeScript type. Texts end without a full stop (the renderers add it).

const kinds = require('./option-kinds');
const { NO_ROUTE_OPTIONS, probeRouteOptions } = require('./route-options');

const hook = kinds.fn('a function (may return a promise)');

/** `probes(sentinel, options)` (Express) and the Fastify plugin. */
const PROBES = {
  name: 'probes',
  options: [
    {
      name: 'readyPath',
      kind: kinds.path,
      default: '/ready',
      also: 'not the path of another probe',
      doc: 'Readiness probe path (the readiness body, 200/503)',
      ts: 'string',
    },
    { name: 'livePath', kind: kinds.path, default: '/live', also: 'not the path of another probe', doc: 'Liveness probe path', ts: 'string' },
    {
      name: 'startupPath',
      kind: kinds.path,
      default: '/startup',
      also: 'not the path of another probe',
      doc: "Startup probe path (200 once the sentinel's first refresh has finished, any outcome)",
      ts: 'string',
    },
    {
      name: 'release',
      kind: kinds.nonEmptyString,
      defaultOf: () => process.env.RELEASE_SHA || 'dev',
      shown: '`RELEASE_SHA` from the environment, else `dev`',
      doc: 'Reported by `/live`',
      ts: 'string',
    },
    {
      name: 'maxEventLoopDelayMs',
      kind: kinds.milliseconds({ min: 1 }),
      default: 1000,
      doc: '`/live` answers 503 `wedged` when the event loop ran later than this',
      ts: 'number',
    },
    {
      name: 'eventLoopSampleMs',
      kind: kinds.milliseconds({ min: 50 }),
      default: 1000,
      doc: 'The event-loop delay is the worst over the last complete interval of this length, the current one, and the tick overdue right now, so a block stays visible for at least one whole interval',
      ts: 'number',
    },
    {
      name: 'checks',
      kind: kinds.functionsByName,
      default: Object.freeze({}),
      doc: '`/live?deep=1` runs these and reports `"ok" | "timeout" | "error"` for each; a check fails when it throws, rejects or resolves to `false`. Never changes the status code',
      ts: 'Record<string, () => unknown | Promise<unknown>>',
    },
    { name: 'checkTimeoutMs', kind: kinds.milliseconds({ min: 1 }), default: 500, doc: 'Bound on each deep check', ts: 'number' },
  ],
};

/**
 * The Fastify plugin's options beyond the probes'. Fastify applies its own registration options
 * (`prefix`, `logLevel`, `logSerializers`) to an encapsulated plugin; this one is not encapsulated
 * (its hook must see the whole app), so it applies them to its routes itself.
 */
const FASTIFY_PLUGIN = {
  name: 'fastify-plugin',
  options: [
    {
      name: 'prefix',
      kind: kinds.routePrefix,
      default: '',
      shown: 'none',
      doc: "Fastify's own registration option, applied to the probe routes: `'/internal'` serves `/internal/ready`, `/internal/live` and `/internal/startup`",
      ts: "RegisterOptions['prefix']",
    },
    {
      name: 'logLevel',
      kind: kinds.logLevel,
      default: 'warn',
      doc: 'Log level of the probe routes, so that probes (frequent) do not flood the request log',
      ts: "RegisterOptions['logLevel']",
    },
    {
      name: 'logSerializers',
      kind: kinds.serializers,
      default: undefined,
      doc: "Fastify's own registration option, applied to the probe routes",
      ts: "RegisterOptions['logSerializers']",
    },
    {
      name: 'routeOptions',
      kind: probeRouteOptions,
      default: NO_ROUTE_OPTIONS,
      shown: 'none',
      doc: 'Fastify route options for the probe routes, e.g. OpenAPI/Swagger `schema`s: shared by the three, or per probe (its `schema` replaces the shared one, its `config` is merged over it). Probes answer in the first `onRequest` hook, so a schema documents them but validates nothing; `config.rateLimit` stays `false`',
      ts: 'ProbeRouteOptions & { ready?: ProbeRouteOptions; live?: ProbeRouteOptions; startup?: ProbeRouteOptions }',
    },
  ],
};

/** `admission(sentinel, options)`, Express and Fastify. */
const ADMISSION = {
  name: 'admission',
  options: [
    {
      name: 'units',
      kind: kinds.unitsOrFunction,
      default: () => 1,
      shown: '1',
      doc: 'Units this request records: a function of the request, or a fixed number (asked of the sentinel once, when the guard is made). With `settle`, the units reserved before the route runs (an upper bound, or a first chunk the route extends). A function answering what `admit` refuses (not a finite number ≥ 0), or `undefined` (say, an optional body field the client left out), gets the client a 400 `InvalidUnitsBody`; one that throws goes to the framework\'s error handler (500)',
      ts: '((req: Req) => number | undefined) | number',
    },
    {
      name: 'settle',
      kind: kinds.fn('a function (req, res) => the units actually used'),
      default: undefined,
      doc: 'Usage known only after the work: the guard reserves `units` before the route and, once the response has finished or the connection closed, settles the reservation at what this returns (the units actually used, `record`ed ones included), given the request and the response (Fastify: the reply). The route reaches the reservation to `extend` it (Express: `res.locals.spendReservation`; Fastify: `request.spendReservation`) or to settle it itself (then this is not called). A `settle` that throws or returns anything but a finite number ≥ 0 settles at the recorded plus held units (nothing refunded) and is logged as an error (Fastify: `request.log.error`; Express: `console.error`)',
      ts: '(req: Req, res: Res) => number',
    },
    {
      name: 'retryAfterSeconds',
      kind: kinds.wholeSeconds,
      default: undefined,
      shown: 'max(1, ⌈w / 2⌉)',
      doc: '`Retry-After` of a refusal. By default, with the default cadence (a refresh every 0.3–0.5 w), a new refresh has landed by then, which is what ends a temporary refusal',
      ts: 'number',
    },
  ],
};

/** `gracefulShutdown(server, sentinel, options)`, Express and Fastify. */
const SHUTDOWN = {
  name: 'shutdown',
  options: [
    {
      name: 'drainDelayMs',
      kind: kinds.milliseconds(),
      default: 5000,
      doc: 'Pause between `drain()` and closing the server, so that load balancers stop routing here',
      ts: 'number',
    },
    {
      name: 'timeoutMs',
      kind: kinds.milliseconds(),
      default: 30000,
      doc: 'Longest wait for in-flight requests before their connections are cut',
      ts: 'number',
    },
    {
      name: 'signals',
      kind: kinds.catchableSignals,
      default: Object.freeze(['SIGTERM', 'SIGINT']),
      doc: 'Signals that start the shutdown; a second one exits at once (code 1)',
      ts: 'NodeJS.Signals[]',
    },
    { name: 'exit', kind: kinds.boolean, default: true, doc: 'Exit the process when done: code 0, or 1 when a hook failed', ts: 'boolean' },
    {
      name: 'beforeShutdown',
      kind: hook,
      default: null,
      doc: 'Runs first, before `sentinel.drain()`; bounded by `hookTimeoutMs`',
      ts: '() => unknown | Promise<unknown>',
    },
    {
      name: 'onShutdown',
      kind: hook,
      default: null,
      doc: 'Runs last, after the server and the sentinel are closed, before exit; bounded by `hookTimeoutMs`',
      ts: '() => unknown | Promise<unknown>',
    },
    {
      name: 'hookTimeoutMs',
      kind: kinds.milliseconds(),
      default: 10000,
      doc: 'Bound on each hook; a hook that runs out is logged as failed (exit code 1)',
      ts: 'number',
    },
    {
      name: 'logger',
      kind: kinds.errorLogger,
      default: null,
      shown: '`console.error`',
      doc: 'Where a failed hook is reported: `logger.error({ event, hook, err }, msg)`',
      ts: '{ error(obj: object, msg: string): void }',
    },
    {
      name: 'sigintSkipsDrainDelay',
      kind: kinds.boolean,
      defaultOf: () => !process.env.KUBERNETES_SERVICE_HOST,
      shown: '`true` when `KUBERNETES_SERVICE_HOST` is unset, else `false`',
      doc: "SIGINT skips `drainDelayMs` (nothing routes to a developer's process)",
      ts: 'boolean',
    },
  ],
};

module.exports = { PROBES, FASTIFY_PLUGIN, ADMISSION, SHUTDOWN };
