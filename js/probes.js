'use strict';
// What the three probes answer, independent of any framework: express.js and fastify.js only
// route requests here and write the `{ statusCode, body }` they get back.
//
// The rules a probe must keep (docs/frameworks.md, The probes): /ready only reads memory; /live never depends on the
// authority and never on draining, only on this process being able to run its event loop;
// /startup latches once the sentinel's first refresh has finished, whatever its outcome, so an
// authority outage during a rollout cannot keep new pods "starting". The latch is the sentinel's
// own (`sentinel.hasRefreshed()`), so every probes instance agrees. No probe returns error text.

const { startLoopDelayMonitor } = require('./loop-delay');
const { readOptions, checkSentinel, configError } = require('./options');
const { PROBES } = require('./options-catalog');

/**
 * Parses the probe options once and starts the event-loop monitor. `extra`, a section of the
 * option catalog, lets a framework adapter accept a few options of its own (returned parsed
 * alongside).
 */
function createProbes(where, sentinel, options, extra = { options: [] }) {
  checkSentinel(where, sentinel);
  const config = readOptions(where, options, { options: [...PROBES.options, ...extra.options] });
  const paths = [config.readyPath, config.livePath, config.startupPath];
  if (new Set(paths).size !== paths.length) {
    throw configError(where, 'readyPath, livePath, startupPath', 'must be three different paths');
  }
  const loop = startLoopDelayMonitor({ maxDelayMs: config.maxEventLoopDelayMs, sampleMs: config.eventLoopSampleMs });
  const deep = new DeepChecks(config.checks, config.checkTimeoutMs);

  const probes = {
    config,
    /** Which probe a request path asks for: 'ready' | 'live' | 'startup' | undefined. */
    route(pathname) {
      if (pathname === config.readyPath) return 'ready';
      if (pathname === config.livePath) return 'live';
      if (pathname === config.startupPath) return 'startup';
      return undefined;
    },
    ready: () => readinessAnswer(sentinel),
    /** Synchronous unless `deep`, then a promise (the checks run, each bounded). */
    live(isDeep) {
      const answer = livenessAnswer(loop.delayMs(), config.maxEventLoopDelayMs, config.release);
      if (!isDeep) return answer;
      return deep.run().then((checks) => ({ statusCode: answer.statusCode, body: { ...answer.body, checks } }));
    },
    startup: () => startupAnswer(sentinel.hasRefreshed()),
    /** Stops the event-loop monitor (Fastify calls it on close). */
    close() {
      loop.stop();
    },
  };
  return probes;
}

/** The readiness table (README): exactly three keys, 200 for ready/degraded, 503 for not_ready. */
function readinessAnswer(sentinel) {
  const r = sentinel.readiness();
  return {
    statusCode: r.httpStatus,
    body: { status: r.status, evidence_age_seconds: r.evidenceAgeSeconds, reason: r.reason },
  };
}

/** Alive unless the event loop was recently blocked for longer than the limit. */
function livenessAnswer(delayMs, maxDelayMs, release) {
  if (delayMs > maxDelayMs) return { statusCode: 503, body: { status: 'wedged' } };
  return { statusCode: 200, body: { status: 'alive', release } };
}

function startupAnswer(started) {
  return started ? { statusCode: 200, body: { status: 'started' } } : { statusCode: 503, body: { status: 'starting' } };
}

/**
 * Runs `/live?deep=1` checks: all at once, each bounded by `timeoutMs`. Concurrent deep probes
 * share one run, so a probe storm cannot multiply the load on the dependencies checked.
 * A check passes when it resolves to anything but `false`; its error text is never returned.
 */
class DeepChecks {
  constructor(checks, timeoutMs) {
    this.checks = Object.entries(checks);
    this.timeoutMs = timeoutMs;
    this.inFlight = null;
  }

  run() {
    if (!this.inFlight) {
      this.inFlight = Promise.all(this.checks.map(([name, check]) => this.runOne(check).then((result) => [name, result])))
        .then(Object.fromEntries)
        .finally(() => {
          this.inFlight = null;
        });
    }
    return this.inFlight;
  }

  runOne(check) {
    let timer;
    const timeout = new Promise((resolve) => {
      // Not unref'd: the bound must fire even when nothing else keeps the process alive (a
      // `fastify.inject()` without a listening server); it lasts `timeoutMs` at most.
      timer = setTimeout(resolve, this.timeoutMs, 'timeout');
    });
    const outcome = new Promise((resolve) => resolve(check())).then(
      (value) => (value === false ? 'error' : 'ok'),
      () => 'error',
    );
    return Promise.race([outcome, timeout]).finally(() => clearTimeout(timer));
  }
}

module.exports = { createProbes };
