'use strict';
// Graceful shutdown for a server behind a Kubernetes Service: the order matters.
//   1. sentinel.drain(): /ready says shutting_down, so endpoints stop routing here; /live stays
//      200 (restarting a draining pod would cut its in-flight requests).
//   2. wait drainDelayMs: endpoint removal takes a few seconds to reach every proxy; requests
//      keep arriving meanwhile and are still served (admission goes on while draining).
//   3. stop accepting connections, close idle keep-alive sockets, let in-flight requests finish
//      (their responses say `connection: close`), forcing the rest closed after timeoutMs.
//   4. sentinel.close() (awaited: a fleet budget's grant is released), then exit 0. A second signal exits at once with code 1.
// The user's hooks run around it: `beforeShutdown` before step 1, `onShutdown` after step 4, each
// bounded by `hookTimeoutMs`; a hook that throws, rejects or runs out of time is logged and makes
// the exit code 1 (the rest of the sequence still runs). Everything is bounded, so the process
// exits within beforeShutdown + drainDelayMs + timeoutMs + 1 s (sentinel.close) + onShutdown.
// Outside Kubernetes (no KUBERNETES_SERVICE_HOST), SIGINT skips the drain delay: nobody routes
// to a developer's Ctrl-C'd process, so waiting for endpoint removal only wastes their time.

const http = require('node:http');
const https = require('node:https');
const { readOptions, checkSentinel, configError } = require('./options');
const { SHUTDOWN } = require('./options-catalog');

/**
 * Installs the signal handlers; returns `{ shutdown(), dispose() }`. `shutdown()` runs the same
 * sequence without a signal (it resolves when done, before exiting when `exit` is true);
 * `dispose()` removes the handlers.
 */
function gracefulShutdown(where, target, sentinel, options) {
  const closer = closerFor(where, target);
  checkSentinel(where, sentinel);
  const config = readOptions(where, options, SHUTDOWN);
  closer.track();

  let running = null;
  const run = (signal) => {
    running ??= drainAndClose(closer, sentinel, config, signal).then((ok) => {
      if (config.exit) process.exit(ok ? 0 : 1);
    });
    return running;
  };
  const shutdown = () => run(null);
  const onSignal = (signal) => {
    if (running) process.exit(1); // second signal: the operator wants out now
    run(signal);
  };
  for (const signal of config.signals) process.on(signal, onSignal);
  const dispose = () => {
    for (const signal of config.signals) process.removeListener(signal, onSignal);
  };
  return { shutdown, dispose };
}

/** Resolves `true` when every hook succeeded. */
async function drainAndClose(closer, sentinel, config, signal) {
  const { drainDelayMs, timeoutMs } = config;
  // Without a beforeShutdown hook the drain happens synchronously, as the signal arrives.
  let ok = config.beforeShutdown === null || (await runHook('beforeShutdown', config));
  sentinel.drain();
  const skipDelay = signal === 'SIGINT' && config.sigintSkipsDrainDelay;
  if (!skipDelay) await new Promise((resolve) => setTimeout(resolve, drainDelayMs));
  try {
    await closer.close(timeoutMs);
  } finally {
    // With a fleet budget, close() returns the unused grant to Redis (bounded by 1 s) before
    // resolving; waiting for it hands the capacity to the rest of the fleet before exit.
    await sentinel.close();
  }
  ok = (await runHook('onShutdown', config)) && ok;
  return ok;
}

/**
 * Runs the hook `name` (if given), bounded by `hookTimeoutMs`. Resolves `false` when it threw,
 * rejected or ran out of time, after logging it; never rejects.
 */
async function runHook(name, { [name]: fn, hookTimeoutMs, logger }) {
  if (fn === null) return true;
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${name} did not finish within hookTimeoutMs = ${hookTimeoutMs} ms`)), hookTimeoutMs);
  });
  try {
    await Promise.race([(async () => fn())(), timeout]);
    return true;
  } catch (err) {
    const fields = { event: 'spend_sentinel.shutdown_hook', hook: name, err };
    const msg = `gracefulShutdown: ${name} failed: ${err instanceof Error ? err.message : String(err)}`;
    try {
      if (logger) logger.error(fields, msg);
      else console.error(msg, err);
    } catch {
      // a broken logger must not stop the shutdown
    }
    return false;
  } finally {
    clearTimeout(timer);
  }
}

function closerFor(where, target) {
  if (target instanceof http.Server || target instanceof https.Server) return serverCloser(target);
  if (isFastify(target)) return fastifyCloser(target);
  throw configError(
    where,
    'server',
    'must be the node:http Server that app.listen() returns, or a Fastify instance',
  );
}

function isFastify(target) {
  return (
    target !== null &&
    typeof target === 'object' &&
    typeof target.close === 'function' &&
    typeof target.addHook === 'function' &&
    target.server instanceof http.Server
  );
}

/**
 * Tracks the requests in flight on `server`, so that once closing begins each of their responses
 * says `connection: close` and its socket is closed as soon as it is idle: a keep-alive socket
 * must not hold the shutdown until `timeoutMs`. Neither node:http's nor Fastify's close does
 * this for requests already in flight.
 */
function inFlightTracker(server) {
  const inFlight = new Set();
  let closing = false;
  const dropKeepAlive = (res) => {
    if (!res.headersSent) res.setHeader('connection', 'close');
  };
  return {
    track() {
      // Prepended so it runs before the app writes anything.
      server.prependListener('request', (req, res) => {
        if (closing) dropKeepAlive(res);
        inFlight.add(res);
        res.once('close', () => {
          inFlight.delete(res);
          if (closing) setImmediate(() => server.closeIdleConnections());
        });
      });
    },
    beginClosing() {
      closing = true;
      for (const res of inFlight) dropKeepAlive(res);
    },
  };
}

/** Runs `close()` (a promise), cutting every connection of `server` if it takes over `timeoutMs`. */
async function boundedClose(server, timeoutMs, close) {
  const force = setTimeout(() => server.closeAllConnections(), timeoutMs);
  try {
    await close();
  } finally {
    clearTimeout(force);
  }
}

/** A plain node:http server (what Express's app.listen() returns). */
function serverCloser(server) {
  const tracker = inFlightTracker(server);
  return {
    track: tracker.track,
    close(timeoutMs) {
      tracker.beginClosing();
      return boundedClose(server, timeoutMs, () => {
        const closed = new Promise((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        return closed;
      });
    },
  };
}

/**
 * A Fastify instance: `app.close()` stops listening, closes idle connections, answers new
 * requests 503, waits for in-flight ones and runs the app's onClose hooks.
 */
function fastifyCloser(app) {
  const tracker = inFlightTracker(app.server);
  return {
    track: tracker.track,
    close(timeoutMs) {
      tracker.beginClosing();
      return boundedClose(app.server, timeoutMs, () => app.close());
    },
  };
}

module.exports = { gracefulShutdown };
