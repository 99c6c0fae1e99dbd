// gracefulShutdown (the lifecycle in docs/frameworks.md, js/shutdown.js) for Express 5 and Fastify 5.
//
// The signal scenarios run a real service in a child process (fixtures/shutdown-server.mjs) and
// send it real signals; the child prints lifecycle markers so the order can be checked. The
// option checks and `exit: false` + `shutdown()` run in this process.
//
// Timing: a child's exit is an event waited for with a generous bound (EXIT_MS) that only ends a
// hang. Where a test shows that something does not hold the shutdown, what would hold it (a
// drain delay, timeoutMs, a keep-alive connection, a hung request) lasts far longer than that
// bound, so the child exiting at all is the proof; no test bounds from above how long it took.
// The drain delay and hookTimeoutMs are JavaScript timers: their exact moments are checked
// in-process on `mock.timers`. Lower bounds ("not before the drain delay") stay: time cannot run
// faster.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import http from 'node:http';
import net from 'node:net';
import { catchError, deferred, FAST_BUDGET, FAST_REFRESH, now, pollUntil, quietPeriod, withTimeout } from './helpers/wait.mjs';
import { FRAMEWORKS, request } from './helpers/frameworks.mjs';

const require = createRequire(import.meta.url);
const { Sentinel } = require('../js/main.js');
const spendExpress = require('spend-sentinel/express');
const spendFastify = require('spend-sentinel/fastify');

const SERVER = fileURLToPath(new URL('./fixtures/shutdown-server.mjs', import.meta.url));
/** Waiting for a child to exit: ends a hang only (every shutdown here takes about a second). */
const EXIT_MS = 30_000;
/** Longer than EXIT_MS many times over: what a test shows does not hold the shutdown. */
const FOREVER_MS = 600_000;
/** The fixture's keepAliveTimeout: an idle keep-alive connection is closed by the server after it. */
const KEEP_ALIVE_MS = 60_000;

/** Same as the fixture's /slow body. */
const slowBody = (id) => `slow:${id}:${'x'.repeat(200_000)}:end`;
const READY_KEYS = ['evidence_age_seconds', 'reason', 'status'];

/**
 * Starts the fixture; resolves once it prints `listening <port>`. The child is SIGKILLed by the
 * test's cleanup if it is still running.
 */
async function startServer(t, framework, options, { env = process.env } = {}) {
  const child = spawn(process.execPath, [SERVER, framework, JSON.stringify(options)], { stdio: ['pipe', 'pipe', 'pipe'], env });
  const lines = [];
  const waiters = new Set();
  let stderr = '';
  const exited = deferred();
  let exitInfo = null;
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  let pending = '';
  child.stdout.setEncoding('utf8').on('data', (d) => {
    pending += d;
    let nl;
    while ((nl = pending.indexOf('\n')) !== -1) {
      const entry = { text: pending.slice(0, nl), at: now() };
      pending = pending.slice(nl + 1);
      lines.push(entry);
      for (const w of waiters) {
        if (w.re.test(entry.text)) {
          waiters.delete(w);
          w.resolve(entry);
        }
      }
    }
  });
  child.stdin.on('error', () => {}); // the child may be gone when the test writes
  child.once('close', (code, signal) => {
    exitInfo = { code, signal, at: now() };
    exited.resolve(exitInfo);
  });
  t.after(() => {
    if (exitInfo === null) child.kill('SIGKILL');
  });

  const describeState = () => `; stdout so far: ${JSON.stringify(lines.map((l) => l.text))}; stderr: ${stderr}`;
  const ctx = {
    child,
    lines,
    get stderr() {
      return stderr;
    },
    exitInfo: () => exitInfo,
    /** Resolves with the first line matching `re` (already printed or future). */
    waitLine(re, ms = 10_000) {
      const seen = lines.find((l) => re.test(l.text));
      if (seen) return Promise.resolve(seen);
      const d = deferred();
      const waiter = { re, resolve: d.resolve };
      waiters.add(waiter);
      return withTimeout(d.promise, ms, () => `line ${re}${describeState()}`).finally(() => waiters.delete(waiter));
    },
    /**
     * Resolves with { code, signal, at } once the child has exited; `why` says what would keep it
     * running past `ms` (shown when it does).
     */
    exit(ms = EXIT_MS, why = '') {
      return withTimeout(exited.promise, ms, () => `the child to exit${why ? ` (${why})` : ''}${describeState()}`);
    },
    /** Index of the first line matching `re` (-1 when absent). */
    indexOf(re) {
      return lines.findIndex((l) => re.test(l.text));
    },
    release(id) {
      child.stdin.write(`release ${id}\n`);
    },
    describeState,
  };
  const listening = await Promise.race([
    ctx.waitLine(/^listening \d+$/, 60_000), // loading a framework on a busy machine takes a while
    exited.promise.then(() => {
      throw new Error(`the fixture exited before listening${describeState()}`);
    }),
  ]);
  ctx.port = Number(listening.text.split(' ')[1]);
  ctx.url = `http://127.0.0.1:${ctx.port}`;
  return ctx;
}

/** GET with node:http; resolves { status, headers, body } once the whole body arrived. */
function get(url, { agent = false, onSocket } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.once('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
      res.once('error', reject);
    });
    req.once('error', reject);
    if (onSocket) req.once('socket', onSocket);
  });
}

/** 'refused' when a TCP connection to the port is refused, 'connected' when it is accepted. */
function tryConnect(port) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err) => (err.code === 'ECONNREFUSED' ? resolve('refused') : reject(err)));
  });
}


/** Asserts that the markers appear in this order (each present). */
function assertOrder(server, patterns) {
  const indexes = patterns.map((re) => server.indexOf(re));
  for (const [i, re] of patterns.entries()) {
    assert.notEqual(indexes[i], -1, `marker ${re} missing${server.describeState()}`);
    if (i > 0) assert.ok(indexes[i] > indexes[i - 1], `marker ${re} came before ${patterns[i - 1]}${server.describeState()}`);
  }
}

// The scenarios with a child process are independent (each its own server, port and signals), so
// each describe runs them concurrently; the in-process option checks (which count this process's
// signal listeners) stay sequential.
for (const framework of ['express', 'fastify']) {
  describe(`gracefulShutdown on a real SIGTERM (${framework})`, { concurrency: true }, () => {
    test('drain → stop accepting → in-flight request completes → server closed → sentinel closed → exit 0', async (t) => {
      // A drain delay long enough for the probes below; timeoutMs far beyond EXIT_MS, so that
      // nothing but the in-flight request ending lets the server close.
      const DRAIN_MS = 3000;
      const server = await startServer(t, framework, { drainDelayMs: DRAIN_MS, timeoutMs: FOREVER_MS });
      const before = await get(`${server.url}/ready`);
      assert.equal(before.status, 200, `ready before the signal: ${before.body}`);

      // A request in flight across the whole shutdown, on a keep-alive connection.
      const agent = new http.Agent({ keepAlive: true });
      t.after(() => agent.destroy());
      let slowSettled = false;
      const slow = get(`${server.url}/slow?id=1`, { agent }).finally(() => (slowSettled = true));
      slow.catch(() => {}); // asserted below
      await server.waitLine(/^slow-start 1$/);

      const signalledAt = now();
      server.child.kill('SIGTERM');
      await server.waitLine(/^sentinel-drain$/);

      // During the drain delay: /ready 503 shutting_down, /live 200, new connections still served.
      // Each probe is a new connection (agent: false), which the server accepts only until the
      // drain delay ends (it stops accepting then, checked below): an answer is the proof that it
      // came within the drain delay.
      const ready = await pollUntil(
        async () => {
          const r = await get(`${server.url}/ready`);
          return r.status === 503 ? r : null;
        },
        { ms: 10_000, label: '/ready to answer 503 during the drain delay' },
      );
      const readyBody = JSON.parse(ready.body);
      assert.deepEqual(Object.keys(readyBody).sort(), READY_KEYS);
      assert.equal(readyBody.status, 'not_ready');
      assert.equal(readyBody.reason, 'shutting_down');
      const live = await get(`${server.url}/live`);
      assert.equal(live.status, 200, `/live during the drain: ${live.body}`);
      assert.equal(JSON.parse(live.body).status, 'alive');
      await server.waitLine(/^transition ready->not_ready shutting_down$/);

      // After the drain delay the server stops accepting connections, while /slow is still held.
      await pollUntil(async () => (await tryConnect(server.port)) === 'refused', {
        ms: DRAIN_MS + EXIT_MS,
        label: 'new connections to be refused',
        everyMs: 20,
      });
      const refusedAfter = now() - signalledAt;
      assert.ok(refusedAfter >= DRAIN_MS - 100, `connections refused ${refusedAfter.toFixed(0)} ms after SIGTERM, before drainDelayMs ${DRAIN_MS}`);
      assert.equal(slowSettled, false, '/slow must still be in flight');
      // The in-flight request holds the close: nothing closes and the process stays up meanwhile
      // (only timeoutMs, FOREVER_MS away, could force it).
      await quietPeriod(300);
      assert.equal(server.exitInfo(), null, `the child exited with a request in flight${server.describeState()}`);
      assert.equal(server.indexOf(/^server-close$/), -1, 'the server closed with a request in flight');
      assert.equal(server.indexOf(/^sentinel-close$/), -1, 'the sentinel closed before the server');
      assert.equal(await tryConnect(server.port), 'refused', 'still refusing new connections');

      server.release('1');
      const answer = await withTimeout(slow, 10_000, 'the /slow answer');
      assert.equal(answer.status, 200);
      assert.equal(answer.body.length, slowBody('1').length, 'the whole body arrived');
      assert.equal(answer.body, slowBody('1'));
      // js/shutdown.js step 3 promises that in-flight requests finish with `connection: close`.
      // Regression: Fastify's app.close() alone left in-flight keep-alive answers without it, so the
      // socket held the shutdown until timeoutMs.
      assert.equal(
        answer.headers.connection,
        'close',
        'an answer given while closing must tell the client to close its connection (otherwise the idle keep-alive ' +
          'connection holds server.close() until timeoutMs force-closes it)',
      );

      // Exiting at all shows that the keep-alive connection did not hold server.close(): it would
      // until timeoutMs (FOREVER_MS) or the server's keep-alive timeout (60 s), both past EXIT_MS.
      const exit = await server.exit(EXIT_MS, 'the keep-alive connection of the last request held server.close()');
      assert.equal(exit.code, 0, `exit code${server.describeState()}`);
      assertOrder(server, [/^sentinel-drain$/, /^transition ready->not_ready shutting_down$/, /^server-close$/, /^sentinel-close$/, /^exit 0 /]);
      assert.match(server.lines.at(-1).text, /^exit 0 shutting_down admit=false$/);
      assert.equal(server.stderr, '', 'nothing on stderr');
      assert.equal(await tryConnect(server.port), 'refused');
    });

    test('a second signal during the drain delay exits at once with code 1', async (t) => {
      // The drain delay lasts FOREVER_MS: only the second signal can end the child before EXIT_MS.
      const server = await startServer(t, framework, { drainDelayMs: FOREVER_MS, timeoutMs: 10000 });
      server.child.kill('SIGTERM');
      await server.waitLine(/^sentinel-drain$/);
      server.child.kill('SIGTERM');
      const exit = await server.exit(EXIT_MS, 'the second signal was not acted on: the child waits out a 10 min drain delay');
      assert.equal(exit.code, 1, `exit code${server.describeState()}`);
      assert.equal(server.indexOf(/^server-close$/), -1, 'no orderly close after the second signal');
      assert.match(server.lines.at(-1).text, /^exit 1 shutting_down /);
    });

    test('SIGINT is handled like SIGTERM by default', async (t) => {
      const server = await startServer(t, framework, { drainDelayMs: 100, timeoutMs: 5000 });
      server.child.kill('SIGINT');
      const exit = await server.exit();
      assert.equal(exit.code, 0, `exit code${server.describeState()}`);
      assertOrder(server, [/^sentinel-drain$/, /^server-close$/, /^sentinel-close$/, /^exit 0 shutting_down admit=false$/]);
    });

    test('timeoutMs bounds the wait: a request that never answers is cut and the child exits 0', async (t) => {
      const DRAIN_MS = 200;
      const TIMEOUT_MS = 500;
      const server = await startServer(t, framework, { drainDelayMs: DRAIN_MS, timeoutMs: TIMEOUT_MS });
      const hung = new Promise((resolve) => {
        const req = http.get(`${server.url}/hang`, { agent: false }, (res) => resolve({ response: res.statusCode }));
        req.once('error', (err) => resolve({ error: err }));
      });
      await server.waitLine(/^hang-start$/);
      const signalledAt = now();
      server.child.kill('SIGTERM');

      // /hang never answers: only timeoutMs can end the request, and with it the child.
      const outcome = await withTimeout(hung, EXIT_MS, 'the hung request to end (timeoutMs did not bound the wait)');
      assert.ok(outcome.error, `the hung request got an answer: ${JSON.stringify(outcome)}`);
      assert.match(outcome.error.code ?? '', /^(ECONNRESET|ECONNREFUSED)$/, `hung client error: ${outcome.error.message}`);
      const exit = await server.exit(EXIT_MS, 'timeoutMs did not bound the wait for a request that never ends');
      assert.equal(exit.code, 0, `exit code${server.describeState()}`);
      const elapsed = exit.at - signalledAt;
      assert.ok(elapsed >= DRAIN_MS + TIMEOUT_MS - 100, `exited ${elapsed.toFixed(0)} ms after SIGTERM: the in-flight request was not waited for`);
      assertOrder(server, [/^sentinel-drain$/, /^server-close$/, /^sentinel-close$/, /^exit 0 shutting_down admit=false$/]);
    });

    test('an idle keep-alive connection does not hold the shutdown', async (t) => {
      const DRAIN_MS = 300;
      // keepAliveTimeout is 60 s in the fixture and timeoutMs FOREVER_MS: only closing the idle
      // connection lets the child exit within EXIT_MS (half the keep-alive timeout).
      assert.ok(EXIT_MS <= KEEP_ALIVE_MS / 2, 'premise: the bound is well below the keep-alive timeout');
      const server = await startServer(t, framework, { drainDelayMs: DRAIN_MS, timeoutMs: FOREVER_MS });
      const agent = new http.Agent({ keepAlive: true });
      t.after(() => agent.destroy());
      const socketClosed = deferred();
      const first = await get(`${server.url}/live`, {
        agent,
        onSocket: (socket) => socket.once('close', () => socketClosed.resolve(now())),
      });
      assert.equal(first.status, 200);
      assert.notEqual(first.headers.connection, 'close', 'the connection was kept alive');
      const idle = Object.values(agent.freeSockets).flat();
      assert.equal(idle.length, 1, 'one idle keep-alive socket in the agent');

      const signalledAt = now();
      server.child.kill('SIGTERM');
      const exit = await server.exit(EXIT_MS, 'the idle keep-alive connection held the shutdown');
      assert.equal(exit.code, 0, `exit code${server.describeState()}`);
      const elapsed = exit.at - signalledAt;
      assert.ok(elapsed >= DRAIN_MS - 50, `exited ${elapsed.toFixed(0)} ms after SIGTERM, before the drain delay`);
      await withTimeout(socketClosed.promise, 10_000, 'the idle keep-alive socket to be closed');
      assertOrder(server, [/^sentinel-drain$/, /^server-close$/, /^sentinel-close$/, /^exit 0 shutting_down admit=false$/]);
    });
  });
}

/** The environment of a process outside Kubernetes (a developer's terminal), or inside one. */
const { KUBERNETES_SERVICE_HOST: _k8s, ...ENV_OUTSIDE_K8S } = process.env;
const ENV_IN_K8S = { ...ENV_OUTSIDE_K8S, KUBERNETES_SERVICE_HOST: '10.0.0.1' };

describe('gracefulShutdown hooks on a real SIGTERM (express)', { concurrency: true }, () => {
  test('beforeShutdown runs before the drain, onShutdown after the close, then exit 0', async (t) => {
    const server = await startServer(t, 'express', { drainDelayMs: 100, timeoutMs: 3000, beforeShutdown: 'ok', onShutdown: 'ok' });
    server.child.kill('SIGTERM');
    const exit = await server.exit();
    assert.equal(exit.code, 0, `exit code${server.describeState()}`);
    assertOrder(server, [
      /^hook beforeShutdown start$/,
      /^hook beforeShutdown end$/,
      /^sentinel-drain$/,
      /^server-close$/,
      /^sentinel-close$/,
      /^hook onShutdown start$/,
      /^hook onShutdown end$/,
      /^exit 0 shutting_down admit=false$/,
    ]);
    assert.equal(server.stderr, '');
  });

  test('a hook that throws or hangs is logged through `logger`, bounded by hookTimeoutMs, the sequence goes on, and the exit code is 1', async (t) => {
    // The onShutdown hook never settles: only hookTimeoutMs ends it, which the `log-error
    // onShutdown` line shows (its exact moment: the fake-time test of hookTimeoutMs below).
    const HOOK_MS = 400;
    const server = await startServer(t, 'express', {
      drainDelayMs: 100,
      timeoutMs: 3000,
      hookTimeoutMs: HOOK_MS,
      beforeShutdown: 'throw',
      onShutdown: 'hang',
      logger: 'mark',
    });
    server.child.kill('SIGTERM');
    const exit = await server.exit(EXIT_MS, 'the hung onShutdown hook was not bounded');
    assert.equal(exit.code, 1, `a failed hook makes the exit code 1${server.describeState()}`);
    assertOrder(server, [
      /^hook beforeShutdown start$/,
      /^log-error beforeShutdown$/,
      /^sentinel-drain$/,
      /^server-close$/,
      /^sentinel-close$/,
      /^hook onShutdown start$/,
      /^log-error onShutdown$/,
      /^exit 1 shutting_down admit=false$/,
    ]);
    assert.equal(server.indexOf(/^hook onShutdown end$/), -1);
    assert.equal(server.stderr, '', 'with a logger, nothing goes to stderr');
  });

  test('without a logger, a rejecting hook goes to console.error (not swallowed)', async (t) => {
    const server = await startServer(t, 'express', { drainDelayMs: 50, timeoutMs: 3000, onShutdown: 'reject' });
    server.child.kill('SIGTERM');
    const exit = await server.exit();
    assert.equal(exit.code, 1, `exit code${server.describeState()}`);
    assert.match(server.stderr, /gracefulShutdown: onShutdown failed: onShutdown rejected/);
  });
});

describe('SIGINT outside Kubernetes skips the drain delay', { concurrency: true }, () => {
  test('no KUBERNETES_SERVICE_HOST: Ctrl-C exits without waiting drainDelayMs', async (t) => {
    // A drain delay of FOREVER_MS: a child that waited for it could not exit within EXIT_MS.
    const server = await startServer(t, 'express', { drainDelayMs: FOREVER_MS, timeoutMs: 3000 }, { env: ENV_OUTSIDE_K8S });
    server.child.kill('SIGINT');
    const exit = await server.exit(EXIT_MS, 'the 10 min drain delay was waited');
    assert.equal(exit.code, 0, `exit code${server.describeState()}`);
    assertOrder(server, [/^sentinel-drain$/, /^server-close$/, /^sentinel-close$/, /^exit 0 shutting_down admit=false$/]);
  });

  for (const [label, env, options] of [
    ['inside Kubernetes (KUBERNETES_SERVICE_HOST set)', ENV_IN_K8S, {}],
    ['outside Kubernetes with sigintSkipsDrainDelay: false', ENV_OUTSIDE_K8S, { sigintSkipsDrainDelay: false }],
  ]) {
    test(`${label}: SIGINT still waits drainDelayMs`, async (t) => {
      const server = await startServer(t, 'express', { drainDelayMs: 1000, timeoutMs: 3000, ...options }, { env });
      const signalledAt = now();
      server.child.kill('SIGINT');
      const exit = await server.exit();
      assert.equal(exit.code, 0, `exit code${server.describeState()}`);
      assert.ok(exit.at - signalledAt >= 1000 - 50, `exited ${(exit.at - signalledAt).toFixed(0)} ms after SIGINT, before the drain delay`);
    });
  }

  test('SIGTERM outside Kubernetes still waits drainDelayMs', async (t) => {
    const server = await startServer(t, 'express', { drainDelayMs: 1000, timeoutMs: 3000 }, { env: ENV_OUTSIDE_K8S });
    const signalledAt = now();
    server.child.kill('SIGTERM');
    const exit = await server.exit();
    assert.equal(exit.code, 0);
    assert.ok(exit.at - signalledAt >= 1000 - 50, `exited ${(exit.at - signalledAt).toFixed(0)} ms after SIGTERM, before the drain delay`);
  });
});

describe('gracefulShutdown options (in-process)', () => {
  const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGUSR2'];
  const listenerCounts = () => Object.fromEntries(SIGNALS.map((s) => [s, process.listenerCount(s)]));

  /**
   * Fast refreshes, and a 1 h window: the evidence cannot age out while this process's event
   * loop is busy loading a framework (the inspect calls wait for it), however long that takes.
   */
  function makeSentinel(t) {
    const budget = { ...FAST_BUDGET, unverifiedUnits: 360_000 };
    const sentinel = new Sentinel({ budget, refresh: { ...FAST_REFRESH }, authority: { inspect: async () => 'valid' } });
    t.after(() => sentinel.close());
    return sentinel;
  }

  test('bad arguments throw ERR_SPEND_SENTINEL_CONFIG naming the option, and install nothing', (t) => {
    const sentinel = makeSentinel(t);
    const server = http.createServer();
    const expressApp = require('express')();
    const cases = [
      ['a plain object instead of the server', () => spendExpress.gracefulShutdown({}, sentinel), 'server'],
      ['the Express app instead of the server', () => spendExpress.gracefulShutdown(expressApp, sentinel), 'server'],
      ['null instead of the server', () => spendExpress.gracefulShutdown(null, sentinel), 'server'],
      ['a non-Fastify object (fastify entry)', () => spendFastify.gracefulShutdown({ close() {} }, sentinel), 'server'],
      ['signals [SIGKILL]', () => spendExpress.gracefulShutdown(server, sentinel, { signals: ['SIGKILL'] }), 'signals'],
      ['signals [SIGSTOP]', () => spendExpress.gracefulShutdown(server, sentinel, { signals: ['SIGSTOP'] }), 'signals'],
      ['signals []', () => spendExpress.gracefulShutdown(server, sentinel, { signals: [] }), 'signals'],
      ['signals [NOPE]', () => spendExpress.gracefulShutdown(server, sentinel, { signals: ['NOPE'] }), 'signals'],
      ['signals [SIGTERM, NOPE] (no partial install)', () => spendExpress.gracefulShutdown(server, sentinel, { signals: ['SIGTERM', 'NOPE'] }), 'signals'],
      ['signals "SIGTERM" (not an array)', () => spendExpress.gracefulShutdown(server, sentinel, { signals: 'SIGTERM' }), 'signals'],
      ['drainDelayMs -1', () => spendExpress.gracefulShutdown(server, sentinel, { drainDelayMs: -1 }), 'drainDelayMs'],
      ['drainDelayMs NaN', () => spendExpress.gracefulShutdown(server, sentinel, { drainDelayMs: Number.NaN }), 'drainDelayMs'],
      ['timeoutMs "1000"', () => spendExpress.gracefulShutdown(server, sentinel, { timeoutMs: '1000' }), 'timeoutMs'],
      ['exit "no"', () => spendExpress.gracefulShutdown(server, sentinel, { exit: 'no' }), 'exit'],
      ['beforeShutdown "x"', () => spendExpress.gracefulShutdown(server, sentinel, { beforeShutdown: 'x' }), 'beforeShutdown'],
      ['onShutdown {}', () => spendExpress.gracefulShutdown(server, sentinel, { onShutdown: {} }), 'onShutdown'],
      ['hookTimeoutMs -5', () => spendExpress.gracefulShutdown(server, sentinel, { hookTimeoutMs: -5 }), 'hookTimeoutMs'],
      ['logger without error()', () => spendExpress.gracefulShutdown(server, sentinel, { logger: { info() {} } }), 'logger'],
      ['sigintSkipsDrainDelay "yes"', () => spendExpress.gracefulShutdown(server, sentinel, { sigintSkipsDrainDelay: 'yes' }), 'sigintSkipsDrainDelay'],
      ['an unknown key', () => spendExpress.gracefulShutdown(server, sentinel, { drainDelay: 10 }), 'drainDelay'],
      ['a missing sentinel', () => spendExpress.gracefulShutdown(server), 'sentinel'],
      ['a missing sentinel (fastify entry)', () => spendFastify.gracefulShutdown(server, undefined), 'sentinel'],
    ];
    const listenersBefore = listenerCounts();
    const requestListenersBefore = server.listenerCount('request');
    for (const [name, call, option] of cases) {
      const err = catchError(call);
      assert.ok(err instanceof Error, `${name}: an Error`);
      assert.equal(err.code, 'ERR_SPEND_SENTINEL_CONFIG', `${name}: code (message: ${err.message})`);
      assert.ok(err.message.startsWith(`gracefulShutdown: ${option}: `), `${name}: the message names "${option}": ${err.message}`);
      assert.deepEqual(listenerCounts(), listenersBefore, `${name}: no signal listener added`);
      assert.equal(server.listenerCount('request'), requestListenersBefore, `${name}: the server is left untouched`);
    }
    assert.equal(sentinel.readiness().reason === 'shutting_down', false, 'the sentinel was not drained');
  });

  test('good options install one listener per signal, and dispose() removes them', (t) => {
    const sentinel = makeSentinel(t);
    const server = http.createServer();
    const before = listenerCounts();
    const handle = spendExpress.gracefulShutdown(server, sentinel, { signals: ['SIGHUP', 'SIGUSR2', 'SIGHUP'] });
    try {
      assert.equal(typeof handle.shutdown, 'function');
      assert.equal(typeof handle.dispose, 'function');
      assert.deepEqual(listenerCounts(), { ...before, SIGHUP: before.SIGHUP + 1, SIGUSR2: before.SIGUSR2 + 1 });
    } finally {
      handle.dispose();
    }
    assert.deepEqual(listenerCounts(), before);
  });

  /** Lets every pending reaction and I/O callback run (setImmediate is not a mocked timer). */
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  test('exit: false + shutdown() on a real Express server: drain, then close, then the sentinel closes; the drain delay on fake time', async (t) => {
    const sentinel = makeSentinel(t);
    await sentinel.whenReady({ timeoutMs: 30_000 });
    const svc = await FRAMEWORKS.find((f) => f.name === 'express').start(sentinel);
    t.after(() => svc.close());
    const before = listenerCounts();
    const DRAIN_MS = 300;
    const handle = spendExpress.gracefulShutdown(svc.server, sentinel, { exit: false, drainDelayMs: DRAIN_MS, timeoutMs: 3000 });
    t.after(() => handle.dispose());
    assert.deepEqual(listenerCounts(), { ...before, SIGTERM: before.SIGTERM + 1, SIGINT: before.SIGINT + 1 }, 'default signals: SIGTERM and SIGINT');
    assert.equal((await request(`${svc.url}/ready`)).status, 200);

    // The drain delay is a JavaScript timer: on fake time the requests below come within it
    // however slow the machine, and it ends at exactly drainDelayMs. (node:http below, whose
    // own timers are not the mocked global setTimeout.)
    t.mock.timers.enable({ apis: ['setTimeout'] });
    let settled = false;
    const done = handle.shutdown().finally(() => (settled = true));
    assert.equal(sentinel.readiness().reason, 'shutting_down', 'drained at once');
    // During the drain delay the server still serves, /ready says 503 and admission goes on.
    const ready = await get(`${svc.url}/ready`); // agent: false, so `connection: close`
    assert.equal(ready.status, 503);
    assert.equal(JSON.parse(ready.body).reason, 'shutting_down');
    const data = await get(`${svc.url}/api/data`);
    assert.equal(data.status, 200, 'ordinary requests are still served while draining');
    assert.equal(sentinel.admit(1), true, 'admission goes on while draining');
    t.mock.timers.tick(DRAIN_MS - 1);
    await nextTurn();
    assert.equal(svc.server.listening, true, `still accepting ${DRAIN_MS - 1} ms into the drain delay`);
    assert.equal(settled, false, 'shutdown() waits for the drain delay');

    t.mock.timers.tick(1); // the drain delay ends: the close starts (on real timers from here)
    t.mock.timers.reset();
    await withTimeout(done, 10_000, 'shutdown() to resolve');
    assert.equal(svc.server.listening, false, 'the server is closed');
    assert.equal(sentinel.readiness().reason, 'shutting_down');
    assert.equal(sentinel.readiness().status, 'not_ready');
    assert.equal(sentinel.admit(1), false, 'the sentinel is closed: no more admission');
    await withTimeout(handle.shutdown(), 1000, 'a second shutdown() call');

    handle.dispose();
    assert.deepEqual(listenerCounts(), before, 'dispose() removes the signal listeners');
  });

  test('on fake time: a hook that never settles is given up at exactly hookTimeoutMs, logged, and the sequence goes on', async (t) => {
    const sentinel = makeSentinel(t);
    await sentinel.whenReady({ timeoutMs: 30_000 });
    const server = http.createServer();
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => server.close());
    const errors = [];
    const HOOK_MS = 400;
    const handle = spendExpress.gracefulShutdown(server, sentinel, {
      exit: false,
      drainDelayMs: 0,
      timeoutMs: 3000,
      hookTimeoutMs: HOOK_MS,
      beforeShutdown: () => new Promise(() => {}),
      logger: { error: (fields, msg) => errors.push({ fields, msg }) },
    });
    t.after(() => handle.dispose());

    t.mock.timers.enable({ apis: ['setTimeout'] });
    let settled = false;
    const done = handle.shutdown().finally(() => (settled = true));
    t.mock.timers.tick(HOOK_MS - 1);
    await nextTurn();
    assert.deepEqual(errors, [], `nothing logged ${HOOK_MS - 1} ms into the hook`);
    assert.equal(sentinel.readiness().reason, 'verified', 'the drain waits for beforeShutdown');
    assert.equal(settled, false);

    t.mock.timers.tick(1); // hookTimeoutMs: the hook is given up (the rest on real timers)
    t.mock.timers.reset();
    await withTimeout(done, 10_000, 'shutdown() to resolve');
    assert.deepEqual(
      errors.map((e) => [e.fields.event, e.fields.hook, e.msg]),
      [['spend_sentinel.shutdown_hook', 'beforeShutdown', `gracefulShutdown: beforeShutdown failed: beforeShutdown did not finish within hookTimeoutMs = ${HOOK_MS} ms`]],
    );
    assert.equal(sentinel.readiness().reason, 'shutting_down', 'drained after the hook was given up');
    assert.equal(server.listening, false, 'the server is closed');
    assert.equal(sentinel.admit(1), false, 'the sentinel is closed');
  });
});
