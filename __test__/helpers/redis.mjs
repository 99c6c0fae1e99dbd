// A real redis-server for the fleet suites, and a TCP proxy to partition one client from it.
//
// `startRedis()` runs `redis-server` from PATH (Debian package `redis-server`) on 127.0.0.1 with
// no persistence and waits until it answers PING. Commands go through a tiny RESP client over
// node:net (one short connection per command: it survives restarts and CLIENT PAUSE without any
// reconnect logic). Every server started here is also killed when this process exits, so an
// aborted test run leaves no redis-server behind; tests still call `stop()` in their cleanup.
//
// `startRedis({ tls })` serves TLS only (rediss://), and the helper's own client speaks TLS to it;
// `startRedis({ clockShim: true })` runs the server under fixtures/clock-shim.c so the test can
// step its wall clock (`stepClock(seconds)`). Topologies (replicas, cluster, certificates,
// eviction) are in redis-topologies.mjs.
//
// `startProxy(targetPort)` forwards 127.0.0.1:<ephemeral> to a Redis port, with modes switchable
// at runtime: `pass`, `blackhole` (accept and read, forward and answer nothing, existing
// connections included), `reset` (destroy every connection, existing and new) and `partition`
// (a blackhole that passes on no close either: one side closing leaves the other end unaware);
// `retarget(port)` points it at another server (a failover behind one stable address);
// `nextReceived()` resolves when a client next sends bytes (a request on its way).
import { spawn } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { buildClockShim, clockFile } from './clock-shim.mjs';
import { closedPort, deferred, pollUntil, withTimeout } from './wait.mjs';

const LOCALHOST = '127.0.0.1';
const MISSING = 'redis-server was not found on PATH: install the Debian package `redis-server` (apt-get install -y redis-server)';

/** Servers of this process still running: killed synchronously if the process exits. */
const running = new Set();
process.once('exit', () => {
  for (const child of running) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
});

/** The absolute path of `redis-server` on PATH, or null. */
export function findRedisServer() {
  return findOnPath('redis-server');
}

/** The absolute path of the executable `name` on PATH, or null. */
export function findOnPath(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

// ---- RESP (REdis Serialization Protocol) -------------------------------------------------------

/** Encodes a command as a RESP array of bulk strings. */
export function encodeCommand(args) {
  const parts = [`*${args.length}\r\n`];
  for (const arg of args) {
    const bytes = Buffer.from(String(arg));
    parts.push(`$${bytes.length}\r\n`, bytes, '\r\n');
  }
  return Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
}

/** An error reply from Redis (`-ERR ...`); `reply` is its text. */
export class RedisReplyError extends Error {
  constructor(text) {
    super(`redis replied with an error: ${text}`);
    this.name = 'RedisReplyError';
    this.reply = text;
  }
}

/**
 * Parses one RESP reply at `offset` in `buf`. Returns { value, end } or null when incomplete.
 * Simple strings → string, errors → RedisReplyError (as a value), integers → number,
 * bulk strings → string (null for nil), arrays → array (null for nil).
 */
export function parseReply(buf, offset = 0) {
  if (offset >= buf.length) return null;
  const lineEnd = buf.indexOf('\r\n', offset);
  if (lineEnd < 0) return null;
  const type = String.fromCharCode(buf[offset]);
  const line = buf.toString('utf8', offset + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case '+':
      return { value: line, end: next };
    case '-':
      return { value: new RedisReplyError(line), end: next };
    case ':':
      return { value: Number(line), end: next };
    case '$': {
      const length = Number(line);
      if (length < 0) return { value: null, end: next };
      if (buf.length < next + length + 2) return null;
      return { value: buf.toString('utf8', next, next + length), end: next + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { value: null, end: next };
      const items = [];
      let at = next;
      for (let i = 0; i < count; i += 1) {
        const item = parseReply(buf, at);
        if (!item) return null;
        items.push(item.value);
        at = item.end;
      }
      return { value: items, end: at };
    }
    default:
      throw new Error(`unexpected RESP type byte ${JSON.stringify(type)}`);
  }
}

/**
 * Sends `commands` (arrays of arguments) on one fresh connection to 127.0.0.1:`port` and resolves
 * with their replies in order (error replies as RedisReplyError values). Rejects on a connection
 * error (a refused TLS handshake included) or after `timeoutMs` (e.g. a paused server).
 * `tls` (node:tls options: `ca`, `cert`, `key`, ...) makes it a TLS connection; the server's
 * certificate is checked against 127.0.0.1.
 */
export function rawCommands(port, commands, { timeoutMs = 2000, tls } = {}) {
  const done = deferred();
  const socket = tls ? tlsConnect({ ...tls, host: LOCALHOST, port }) : connect({ host: LOCALHOST, port });
  let buf = Buffer.alloc(0);
  const replies = [];
  const send = () => socket.write(Buffer.concat(commands.map(encodeCommand))); // no half-close: a proxy or a paused client would drop the replies
  socket.on(tls ? 'secureConnect' : 'connect', send);
  socket.on('data', (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    try {
      for (;;) {
        const parsed = parseReply(buf);
        if (!parsed) break;
        replies.push(parsed.value);
        buf = buf.subarray(parsed.end);
      }
    } catch (err) {
      done.reject(err);
      socket.destroy();
      return;
    }
    if (replies.length === commands.length) {
      done.resolve(replies);
      socket.destroy();
    }
  });
  socket.on('error', (err) => done.reject(err));
  socket.on('close', () => done.reject(new Error(`redis connection closed after ${replies.length}/${commands.length} replies`)));
  const what = `redis on port ${port} to answer ${commands.map((c) => c[0]).join(', ')}`;
  return withTimeout(done.promise, timeoutMs, what).finally(() => socket.destroy());
}

// ---- redis-server ------------------------------------------------------------------------------

/**
 * The server arguments for TLS only on port `p` (`--port 0` turns the plain port off), with the
 * certificates of makeCerts() (redis-topologies.mjs). The client certificate is also the server's
 * own for its outgoing connections (replication with `--tls-replication yes`): the server
 * certificate is for serverAuth only, which a peer verifying clients would refuse.
 */
function tlsServerArgs(p, { certs, authClients = true }) {
  const f = certs.files;
  return [
    '--port', '0', '--tls-port', String(p),
    '--tls-cert-file', f.serverCert, '--tls-key-file', f.serverKey, '--tls-ca-cert-file', f.ca,
    '--tls-client-cert-file', f.clientCert, '--tls-client-key-file', f.clientKey,
    '--tls-auth-clients', authClients ? 'yes' : 'no',
  ];
}

/**
 * Starts a redis-server on 127.0.0.1 (`port`, or a free ephemeral one) and resolves once it
 * answers PING. `user` + `password` add an ACL user (all commands, all keys) and turn the default
 * user off; `password` alone sets requirepass. The helper's own commands authenticate first.
 * `args` are extra command-line arguments, `env` extra environment variables for the server.
 *
 * `tls: { certs, authClients = true }` (certs from makeCerts()): TLS only on that port, `url` is
 * rediss://, and the helper's own client trusts the CA and presents the client certificate
 * (`tlsClient` is those node:tls options, for other clients).
 *
 * `clockShim: true`: the server runs with LD_PRELOAD=fixtures/clock-shim.c (compiled once per
 * process); `stepClock(seconds)` moves its wall clock (CLOCK_REALTIME, gettimeofday, time) by
 * that much more, `clockOffsetSeconds` is the total. Monotonic time is left alone.
 */
export async function startRedis({ port, user, password, args = [], env = {}, tls, clockShim = false, startTimeoutMs = 15000 } = {}) {
  const bin = findRedisServer();
  if (!bin) throw new Error(MISSING);
  const auth = password === undefined ? [] : [['AUTH', ...(user ? [user] : []), password]];
  const tlsClient = tls ? { ca: tls.certs.caPem, cert: tls.certs.clientCertPem, key: tls.certs.clientKeyPem } : undefined;
  const clock = clockShim ? clockFile() : null;
  const serverEnv = { ...process.env, ...env };
  if (clock) {
    const shim = await buildClockShim();
    serverEnv.LD_PRELOAD = [shim, serverEnv.LD_PRELOAD].filter(Boolean).join(' ');
    Object.assign(serverEnv, clock.env);
  }
  const serverArgs = (p) => [
    ...(tls ? tlsServerArgs(p, tls) : ['--port', String(p)]),
    '--bind', LOCALHOST, '--save', '', '--appendonly', 'no', '--daemonize', 'no',
    ...(password === undefined ? [] : user ? ['--user', 'default', 'off', '--user', user, 'on', `>${password}`, '~*', '&*', '+@all'] : ['--requirepass', password]),
    ...args,
  ];

  let child = null;
  let output = '';
  let exited = deferred();

  async function launch(p) {
    output = '';
    exited = deferred();
    const proc = spawn(bin, serverArgs(p), { env: serverEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (d) => (output = (output + d).slice(-4000)); // the tail, for a failure message
    proc.stdout.setEncoding('utf8').on('data', keep);
    proc.stderr.setEncoding('utf8').on('data', keep);
    const ended = exited;
    proc.once('error', (err) => ended.resolve({ error: err }));
    proc.once('exit', (code, signal) => {
      running.delete(proc);
      ended.resolve({ code, signal });
    });
    running.add(proc);
    child = proc;
    const failedEarly = ended.promise.then((how) => {
      if (how.error?.code === 'ENOENT') throw new Error(MISSING);
      throw new Error(`redis-server exited before answering PING (${JSON.stringify(how)}): ${output.trim().split('\n').slice(-3).join(' | ')}`);
    });
    // The server that answers must be this one: when another test's redis-server took the same
    // ephemeral port first, that one answers while this one fails to bind. Taken for ours, two
    // tests would share a server (a primary listing the other topology's replicas, a "primary"
    // gone when the other test stops it). So the answer's process_id must be this process's.
    let answeredBy = null;
    const answers = pollUntil(
      async () => {
        try {
          const replies = await rawCommands(p, [...auth, ['INFO', 'server']], { timeoutMs: 500, tls: tlsClient });
          const text = replies.at(-1);
          answeredBy = typeof text === 'string' ? Number(/^process_id:(\d+)/m.exec(text)?.[1]) : null;
          if (answeredBy !== null && answeredBy !== proc.pid) {
            throw new Error(`address already in use: port ${p} answered by pid ${answeredBy}, not ${proc.pid}`);
          }
          return answeredBy === proc.pid;
        } catch (err) {
          if (/address already in use/.test(err.message)) throw err;
          return false;
        }
      },
      { ms: startTimeoutMs, everyMs: 20, label: () => `redis-server pid ${proc.pid} on port ${p} to answer (last answered by ${answeredBy})` },
    );
    try {
      await Promise.race([answers, failedEarly]);
    } catch (err) {
      failedEarly.catch(() => {});
      answers.catch(() => {});
      await kill(proc);
      throw err;
    }
    failedEarly.catch(() => {});
  }

  async function kill(proc) {
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise((resolve) => proc.once('exit', resolve));
    try {
      proc.kill('SIGKILL'); // works on a stopped (SIGSTOP) process too
    } catch {
      return;
    }
    await withTimeout(gone, 5000, `redis-server pid ${proc.pid} to exit after SIGKILL`);
  }

  let chosen = port;
  for (let attempt = 1; ; attempt += 1) {
    chosen = port ?? (await closedPort());
    try {
      await launch(chosen);
      break;
    } catch (err) {
      // an ephemeral port taken between closedPort() and the bind: try another one
      const lostRace = port === undefined && /address already in use/i.test(err.message);
      if (!lostRace || attempt >= 3) throw err;
    }
  }

  const signal = (name) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) throw new Error(`redis-server is not running (${name})`);
    process.kill(child.pid, name);
  };

  return {
    port: chosen,
    url: `${tls ? 'rediss' : 'redis'}://${LOCALHOST}:${chosen}`,
    /** node:tls options (CA + client certificate) for a TLS server, else undefined. */
    tlsClient,
    /** The current server's pid (a restart changes it). */
    get pid() {
      return child?.pid;
    },
    /** One command; resolves with its reply, rejects with RedisReplyError on an error reply. */
    async command(...cmd) {
      const replies = await rawCommands(chosen, [...auth, cmd], { tls: tlsClient });
      for (const r of replies) if (r instanceof RedisReplyError) throw r;
      return replies.at(-1);
    },
    /**
     * Several commands pipelined on one connection; resolves with every reply in order, error
     * replies included as RedisReplyError values (the authentication's reply is left out).
     */
    async commands(list, { timeoutMs = 5000 } = {}) {
      const replies = await rawCommands(chosen, [...auth, ...list], { timeoutMs, tls: tlsClient });
      if (auth.length && replies[0] instanceof RedisReplyError) throw replies[0];
      return replies.slice(auth.length);
    },
    /** The wall-clock offset (seconds) with clockShim: true; undefined without. */
    get clockOffsetSeconds() {
      return clock?.offsetSeconds;
    },
    /** With clockShim: true, moves the server's wall clock by `seconds` more (negative: back). */
    stepClock(seconds) {
      if (!clock) throw new Error('stepClock() needs a server started with clockShim: true');
      clock.step(seconds);
    },
    /** SIGSTOP: the server keeps its sockets but answers nothing (see `paused()`). */
    pause() {
      signal('SIGSTOP');
    },
    /**
     * Resolves once the kernel reports the server stopped (state T in /proc/<pid>/stat) after
     * pause(): from then on it runs nothing, so any answer a client got was given before.
     */
    async paused({ ms = 10000 } = {}) {
      const pid = child?.pid;
      const stopped = () => {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8'); // "pid (comm) state ...": comm may hold spaces
        return 'Tt'.includes(stat[stat.lastIndexOf(')') + 2]);
      };
      await pollUntil(stopped, {
        ms,
        everyMs: 1,
        label: `redis-server pid ${pid} to be stopped after SIGSTOP`,
      });
    },
    /** SIGCONT after pause(). */
    resume() {
      signal('SIGCONT');
    },
    /** SIGKILL; resolves when the process has exited (state is lost: no persistence). */
    kill9() {
      return kill(child);
    },
    /** Kills the server if it runs, then starts an empty one on the same port. */
    async restart() {
      await kill(child);
      await launch(chosen);
    },
    /**
     * CLIENT PAUSE `ms`: the server stays up but holds the commands of every client. `ALL` (the
     * default) holds every command, CLIENT UNPAUSE included; `WRITE` holds writes and every script
     * (EVAL, EVALSHA) but lets reads and CLIENT UNPAUSE through.
     */
    clientPause(ms, mode = 'ALL') {
      return this.command('CLIENT', 'PAUSE', String(ms), mode);
    },
    /** CLIENT UNPAUSE (after a `WRITE` pause: an `ALL` pause holds this command too). */
    clientUnpause() {
      return this.command('CLIENT', 'UNPAUSE');
    },
    flushAll() {
      return this.command('FLUSHALL');
    },
    /** Kills the server (also when paused); idempotent. */
    stop() {
      return kill(child);
    },
  };
}

// ---- TCP proxy ---------------------------------------------------------------------------------

const MODES = new Set(['pass', 'blackhole', 'reset', 'partition']);

/**
 * A TCP proxy 127.0.0.1:<ephemeral> → 127.0.0.1:`initialTarget`. A connection that lost data while
 * blackholed is destroyed when the mode goes back to `pass` (its byte stream is no longer whole);
 * connections opened later pass normally. `partition` is a blackhole that also keeps a close to
 * itself, as a network partition drops the FIN: when one side closes, the other end's socket stays
 * open and hears nothing (a replica promoted behind it leaves the primary listing it online).
 * `retarget(port)` sends new connections to another port and destroys the existing ones (their
 * server is no longer the target).
 */
export async function startProxy(initialTarget) {
  let targetPort = initialTarget;
  let mode = 'pass';
  const pairs = new Set();

  const destroy = (pair) => {
    if (!pairs.has(pair)) return;
    pairs.delete(pair);
    // RST, unless the socket already ended its writable side (the peer's FIN makes Node end() it,
    // a shutdown): then libuv refuses the reset (uv_tcp_close_reset → EINVAL) but Node 20 still
    // marks the handle closing, never closes it, and the process spins at exit
    // (Environment::CleanupHandles). A plain destroy() is all such a socket needs.
    const hard = (s) => (typeof s.resetAndDestroy === 'function' && !s.writableEnded && !s.destroyed ? s.resetAndDestroy() : s.destroy());
    hard(pair.client);
    if (pair.upstream) pair.upstream.destroy();
  };

  // One side closed: the other goes too, except in a partition, where it is kept (unaware).
  const ended = (pair) => {
    if (mode === 'partition') pair.tainted = true;
    else destroy(pair);
  };

  const openUpstream = (pair) => {
    const upstream = connect({ host: LOCALHOST, port: targetPort });
    pair.upstream = upstream;
    upstream.on('error', () => ended(pair));
    upstream.on('close', () => ended(pair));
    upstream.on('data', (chunk) => {
      if (mode === 'pass' && !pair.tainted) pair.client.write(chunk);
      else pair.tainted = true;
    });
    for (const chunk of pair.pending) upstream.write(chunk);
    pair.pending = [];
  };

  let received = 0;
  const receiveWaiters = new Set();
  const server = createServer((client) => {
    const pair = { client, upstream: null, pending: [], tainted: false };
    pairs.add(pair);
    client.on('error', () => ended(pair));
    client.on('close', () => ended(pair));
    if (mode === 'reset') {
      destroy(pair);
      return;
    }
    client.on('data', (chunk) => {
      received += 1;
      for (const resolve of receiveWaiters) resolve(received);
      receiveWaiters.clear();
      if (mode !== 'pass' || pair.tainted) {
        pair.tainted = true; // read and dropped
        return;
      }
      if (pair.upstream) pair.upstream.write(chunk);
      else pair.pending.push(chunk);
    });
    if (mode === 'pass') openUpstream(pair);
    else pair.tainted = true; // accepted while blackholed: never forwarded
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, LOCALHOST, resolve);
  });
  const { port } = server.address();

  return {
    port,
    get mode() {
      return mode;
    },
    get connections() {
      return pairs.size;
    },
    /** How many chunks of bytes clients have sent to the proxy, in any mode. */
    get received() {
      return received;
    },
    /**
     * Resolves (with the new count) when a client next sends bytes to the proxy, in any mode: a
     * request of that client is then on its way (or dropped by a blackhole). Waits at most `ms`.
     */
    nextReceived({ ms = 10000 } = {}) {
      const d = deferred();
      receiveWaiters.add(d.resolve);
      return withTimeout(d.promise, ms, `a client to send bytes through the proxy on port ${port}`).finally(() => receiveWaiters.delete(d.resolve));
    },
    /** The port new connections are forwarded to. */
    get target() {
      return targetPort;
    },
    /** `redis://user:pw@host:port/db` of the target → the same URL through this proxy. */
    url(targetUrl) {
      const u = new URL(targetUrl);
      u.hostname = LOCALHOST;
      u.port = String(port);
      return u.toString();
    },
    setMode(next) {
      if (!MODES.has(next)) throw new Error(`proxy mode must be one of ${[...MODES].join(', ')}`);
      mode = next;
      for (const pair of [...pairs]) {
        if (next === 'reset' || (next === 'pass' && pair.tainted)) destroy(pair);
      }
    },
    /** New connections go to 127.0.0.1:`nextPort`; every existing one is destroyed. The mode stays. */
    retarget(nextPort) {
      if (!Number.isInteger(nextPort) || nextPort <= 0 || nextPort > 65535) throw new Error(`retarget(port) needs a TCP port, got ${nextPort}`);
      targetPort = nextPort;
      for (const pair of [...pairs]) destroy(pair);
    },
    close() {
      for (const pair of [...pairs]) destroy(pair);
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** `redis(opts)` and `proxy(port)` that stop what they start through `defer` (see `cleanups`). */
export function stoppedBy(defer) {
  return {
    async redis(opts) {
      const r = await startRedis(opts);
      defer(() => r.stop());
      return r;
    },
    async proxy(port) {
      const p = await startProxy(port);
      defer(() => p.close());
      return p;
    },
  };
}
