// Real Redis topologies for the fleet suites, started by the tests themselves on 127.0.0.1
// (ephemeral ports, no persistence, every server SIGKILLed by pid in stop() and on process exit;
// temp dirs removed the same way). Built on redis.mjs (startRedis, startProxy, rawCommands).
//
//   startReplicated()   a primary, replicas each replicating through its own cuttable TCP proxy,
//                       clients on a stable proxy address, failover(i) behind it
//   startCluster()      Redis Cluster, 3 masters, no replicas (redis-cli --cluster create)
//   makeCerts(dir)      a CA, server and client certificates (openssl CLI) for startRedis({ tls })
//   buildClockShim()    the LD_PRELOAD wall-clock shim behind startRedis({ clockShim: true })
//   fillUntilEvicted()  writes filler keys until the server's maxmemory policy evicts a key
//
// Idle timeout needs nothing here: startRedis({ args: ['--timeout', '2'] }) closes a client
// connection idle for 2 s (Redis checks idle clients about once a second, so allow up to ~3 s).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisReplyError, findOnPath, rawCommands, startProxy, startRedis } from './redis.mjs';
import { now, pollUntil } from './wait.mjs';

export { buildClockShim } from './clock-shim.mjs';

const LOCALHOST = '127.0.0.1';

// ---- small things ------------------------------------------------------------------------------

/** Temp dirs of this process still in use: removed if the process exits. */
const tempDirs = new Set();
process.once('exit', () => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});
function makeTempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), `spend-sentinel-${prefix}-`));
  tempDirs.add(dir);
  return dir;
}
async function removeTempDir(dir) {
  await rm(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/** Runs the stop functions pushed on it, last first; a failing one does not stop the others. */
function stopStack() {
  const stack = [];
  return {
    push: (fn) => stack.push(fn),
    async run() {
      while (stack.length) {
        try {
          await stack.pop()();
        } catch {
          // stopping goes on
        }
      }
    },
  };
}

/** `INFO` text → { field: value } (section headers and blank lines skipped). */
export function parseInfo(text) {
  const out = {};
  for (const line of text.split('\r\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.indexOf(':');
    if (at > 0) out[line.slice(0, at)] = line.slice(at + 1);
  }
  return out;
}

/** `ip=127.0.0.1,port=1234,state=online` → { ip, port, state } (the values of `slaveN:` lines). */
function parseFields(value) {
  return Object.fromEntries(value.split(',').map((kv) => kv.split('=')));
}

/** Runs `cmd args` (no shell); resolves with { stdout, stderr }, rejects naming the command. */
function run(cmd, args, { timeoutMs = 30000, missing } = {}) {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err?.code === 'ENOENT') reject(new Error(missing ?? `${cmd} was not found on PATH`));
      else if (err) reject(new Error(`${cmd} ${args.join(' ')} failed (${err.killed ? 'timed out' : `exit ${err.code}`}): ${`${stderr}\n${stdout}`.trim().slice(-1500)}`));
      else resolve({ stdout, stderr });
    });
  });
}

// ---- primary + replicas ------------------------------------------------------------------------

// Every server of a replicated topology gets these first (`args` may override them):
// - repl-diskless-sync-delay 0: Redis 7.0's primary otherwise waits 5 s for more replicas before
//   it starts a full sync (startReplicated took 5 s instead of ~0.15 s);
// - repl-diskless-load swapdb: a replica otherwise writes the primary's RDB to disk and keeps it
//   as dump.rdb in its working directory (--save '' does not stop that);
// - dir: each server its own temp dir anyway, so nothing lands in the caller's cwd.
const replicationArgs = (dir) => ['--repl-diskless-sync-delay', '0', '--repl-diskless-load', 'swapdb', '--dir', dir];

/**
 * A primary with `replicas` replicas. Clients use `url` (a proxy, retargeted by failover(i) so it
 * always reaches the current primary). With `linkThroughProxy` each replica replicates through its
 * own proxy `links[i]`: `links[i].setMode('reset')` cuts replica i at once (both ends see the
 * connection close; the replica retries about once a second, every attempt reset), 'blackhole'
 * silently (the primary still lists the replica as online until `--repl-timeout`, 60 s by
 * default, and gets no acknowledgement from it meanwhile: `SET` + `WAIT 1 100` on one connection
 * answers 0, while a WAIT on a connection that wrote nothing still counts it).
 * `args` go to every server. Resolves once every replica is connected and caught up.
 */
export async function startReplicated({ replicas: count = 1, linkThroughProxy = true, args = [], syncTimeoutMs = 30000 } = {}) {
  const stops = stopStack();
  const dir = makeTempDir('replicated');
  stops.push(() => removeTempDir(dir));
  const serverArgs = async (name, more = []) => {
    await mkdir(join(dir, name));
    return [...replicationArgs(join(dir, name)), ...args, ...more];
  };
  try {
    const first = await startRedis({ args: await serverArgs('primary') });
    stops.push(() => first.stop());
    let primary = first;
    const proxy = await startProxy(first.port);
    stops.push(() => proxy.close());
    const links = [];
    const replicas = [];
    await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        let upstream = first.port;
        if (linkThroughProxy) {
          links[i] = await startProxy(first.port);
          stops.push(() => links[i].close());
          upstream = links[i].port;
        }
        replicas[i] = await startRedis({ args: await serverArgs(`replica-${i}`, ['--replicaof', LOCALHOST, String(upstream)]) });
        stops.push(() => replicas[i].stop());
      }),
    );

    const info = async (server) => parseInfo(await server.command('INFO', 'replication'));
    // The primary lists a replica by the listening port the replica announces (REPLCONF
    // listening-port), not by its connection's address, so replica i is found by its own port
    // even through a link proxy.
    const onPrimary = (primaryInfo, i) => {
      for (const [field, value] of Object.entries(primaryInfo)) {
        if (!/^slave\d+$/.test(field)) continue;
        const entry = parseFields(value);
        if (Number(entry.port) === replicas[i].port) return entry;
      }
      return null;
    };
    const replicaIndex = (i) => {
      if (!replicas[i]) throw new Error(`no replica ${i} (there are ${replicas.length})`);
      if (replicas[i] === primary) throw new Error(`replica ${i} is the primary since failover(${i})`);
      return i;
    };

    const topology = {
      proxy,
      links,
      replicas,
      /** The current primary (a replica after failover()). */
      get primary() {
        return primary;
      },
      /** Through the proxy: always the current primary. */
      url: `redis://${LOCALHOST}:${proxy.port}`,
      /** `connected_slaves` of the current primary. */
      async connectedReplicas() {
        return Number((await info(primary)).connected_slaves);
      },
      /**
       * Replica i as the primary sees it (`state`: online, wait_bgsave, ...; null when not listed,
       * `offset`) and as it sees itself (`link`: master_link_status up/down, its `offset`).
       */
      async replicaState(i) {
        replicaIndex(i);
        // the primary first: `offset >= primaryOffset` then means the replica has everything
        // the primary had produced when asked
        const p = await info(primary);
        const r = await info(replicas[i]);
        const entry = onPrimary(p, i);
        return {
          state: entry?.state ?? null,
          primaryOffset: Number(p.master_repl_offset),
          ackedOffset: entry ? Number(entry.offset) : null,
          link: r.master_link_status ?? null,
          offset: Number(r.slave_repl_offset ?? r.master_repl_offset),
        };
      },
      /**
       * Resolves once the primary lists replica i online, the replica's link is up, and the replica
       * has caught up with the primary's replication offset.
       */
      async waitReplicaConnected(i, { ms = syncTimeoutMs } = {}) {
        replicaIndex(i);
        let last = null;
        await pollUntil(
          async () => {
            last = await topology.replicaState(i).catch((err) => ({ error: err.message }));
            return last.state === 'online' && last.link === 'up' && last.offset >= last.primaryOffset;
          },
          { ms, everyMs: 20, label: () => `replica ${i} (port ${replicas[i].port}) to be connected; last seen ${JSON.stringify(last)}` },
        );
      },
      /** Resolves once the primary no longer lists replica i as online. */
      async waitReplicaDisconnected(i, { ms = syncTimeoutMs } = {}) {
        replicaIndex(i);
        let last = null;
        await pollUntil(
          async () => {
            const p = await info(primary).catch(() => null);
            last = p && onPrimary(p, i);
            return p && last?.state !== 'online';
          },
          { ms, everyMs: 20, label: () => `the primary to stop listing replica ${i} (port ${replicas[i].port}) as online; last seen ${JSON.stringify(last)}` },
        );
      },
      /**
       * Promotes replica i (REPLICAOF NO ONE), SIGKILLs the old primary, points the client proxy at
       * the promoted server, and resolves with it once it answers role:master through the proxy.
       * The other replicas are left as they are (replicating from a dead primary).
       */
      async failover(i, { ms = 15000 } = {}) {
        const next = replicas[replicaIndex(i)];
        await next.command('REPLICAOF', 'NO', 'ONE');
        const old = primary;
        await old.kill9();
        primary = next;
        proxy.retarget(next.port);
        let last = null;
        await pollUntil(
          async () => {
            try {
              const [text] = await rawCommands(proxy.port, [['INFO', 'replication']], { timeoutMs: 500 });
              last = typeof text === 'string' ? parseInfo(text).role : String(text);
              return last === 'master';
            } catch (err) {
              last = err.message;
              return false;
            }
          },
          { ms, everyMs: 20, label: () => `port ${next.port} to answer role:master through the proxy (last: ${last})` },
        );
        return next;
      },
      stop: () => stops.run(),
    };

    await Promise.all(replicas.map((_, i) => topology.waitReplicaConnected(i)));
    return topology;
  } catch (err) {
    await stops.run();
    throw err;
  }
}

// ---- Redis Cluster -----------------------------------------------------------------------------

const CLUSTER_BUS_OFFSET = 10000; // Redis's default: the bus listens on port + 10000

function listenOn(port) {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, LOCALHOST, () => resolve(server));
  });
}
const closeServer = (server) => new Promise((resolve) => server.close(() => resolve()));

/**
 * A port P on 127.0.0.1 with P and P + 10000 (the cluster bus) both free (bound once, released).
 * Another process can still take either before redis-server binds it: startCluster retries.
 */
export async function closedClusterPort() {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const a = await listenOn(0);
    const { port } = a.address();
    try {
      if (port + CLUSTER_BUS_OFFSET > 65535) continue;
      try {
        await closeServer(await listenOn(port + CLUSTER_BUS_OFFSET));
        return port;
      } catch {
        // the bus port is taken: another pair
      }
    } finally {
      await closeServer(a);
    }
  }
  throw new Error('no free port P with P + 10000 free on 127.0.0.1 after 50 tries');
}

async function startClusterNode(dir, args) {
  for (let attempt = 1; ; attempt += 1) {
    const port = await closedClusterPort();
    try {
      return await startRedis({
        port,
        args: ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--dir', dir, ...args],
      });
    } catch (err) {
      // lost the race for P or P + 10000 between closedClusterPort() and the bind
      if (!/address already in use/i.test(err.message) || attempt >= 5) throw err;
    }
  }
}

/**
 * Redis Cluster with `masters` (>= 3, redis-cli's minimum) masters and no replicas, all 16384
 * slots assigned by `redis-cli --cluster create`; resolves once every node reports
 * cluster_state:ok. `nodes` are startRedis handles (port, url, pid, command, kill9, ...).
 * Keys like `{spend-sentinel:NAME}` hash on the braces' content: one slot per NAME.
 */
export async function startCluster({ masters = 3, args = [], readyTimeoutMs = 20000 } = {}) {
  if (!Number.isInteger(masters) || masters < 3) throw new Error(`startCluster needs masters >= 3 (redis-cli --cluster create refuses fewer), got ${masters}`);
  const cli = findOnPath('redis-cli');
  if (!cli) throw new Error('redis-cli was not found on PATH: install the Debian package `redis-tools` (a dependency of `redis-server`)');
  const dir = makeTempDir('cluster');
  const stops = stopStack();
  stops.push(() => removeTempDir(dir));
  const nodes = [];
  try {
    const started = now();
    await Promise.all(
      Array.from({ length: masters }, async (_, i) => {
        nodes[i] = await startClusterNode(dir, args);
        stops.push(() => nodes[i].stop());
      }),
    );
    const up = now();
    await run(cli, ['--cluster', 'create', ...nodes.map((n) => `${LOCALHOST}:${n.port}`), '--cluster-replicas', '0', '--cluster-yes'], { timeoutMs: readyTimeoutMs });
    const created = now();
    const states = new Map();
    await pollUntil(
      async () => {
        const infos = await Promise.all(nodes.map((n) => n.command('CLUSTER', 'INFO').then(parseInfo, (err) => ({ cluster_state: err.message }))));
        infos.forEach((x, i) => states.set(nodes[i].port, x.cluster_state));
        return infos.every((x) => x.cluster_state === 'ok');
      },
      { ms: readyTimeoutMs, everyMs: 50, label: () => `cluster_state:ok on every node (now ${JSON.stringify(Object.fromEntries(states))})` },
    );

    /** CLUSTER SLOTS as [{ start, end, port }] (masters only: there are no replicas). */
    const slotRanges = async () => (await nodes[0].command('CLUSTER', 'SLOTS')).map(([start, end, [, port]]) => ({ start, end, port }));
    const keySlot = async (key) => Number(await nodes[0].command('CLUSTER', 'KEYSLOT', key));
    const ownerOf = async (key) => {
      const slot = await keySlot(key);
      const range = (await slotRanges()).find((r) => r.start <= slot && slot <= r.end);
      const owner = range && nodes.find((n) => n.port === range.port);
      if (!owner) throw new Error(`no node owns slot ${slot} of ${key}`);
      return owner;
    };

    return {
      nodes,
      dir,
      /** Milliseconds: servers started, `redis-cli --cluster create`, then until cluster_state:ok everywhere. */
      timings: { serversMs: Math.round(up - started), createMs: Math.round(created - up), okMs: Math.round(now() - created) },
      /** The hash slot of `key` (CLUSTER KEYSLOT). */
      keySlot,
      slotRanges,
      /** The node that owns `key`'s slot (CLUSTER SLOTS). */
      ownerOf,
      /** The url of a node that does not own `key` (it answers MOVED for it). */
      async urlNotOwning(key) {
        const owner = await ownerOf(key);
        return nodes.find((n) => n !== owner).url;
      },
      stop: () => stops.run(),
    };
  } catch (err) {
    await stops.run();
    throw err;
  }
}

// ---- TLS certificates --------------------------------------------------------------------------

const NO_OPENSSL = 'openssl was not found on PATH: install the Debian package `openssl`';
const openssl = (args) => run('openssl', args, { missing: NO_OPENSSL });
// EC P-256 keys (fast to make) and spelled-out extensions, as in fixtures/README.md: rustls
// refuses an end-entity certificate marked CA:TRUE and a CA without keyCertSign, and matches the
// SAN only, never the CN; OpenSSL (redis-server) checks extendedKeyUsage against the role.
const NEW_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
const DAYS = '30'; // a shimmed clock stepped by hours still sees valid certificates
const CA_EXT = ['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'];
const leafExt = (usage, san) =>
  ['basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature', `extendedKeyUsage=${usage}`, ...(san ? [`subjectAltName=${san}`] : [])].join('\n') + '\n';

/**
 * Writes into `dir` (created if missing; default a temp dir removed at exit) a self-signed CA, a
 * server certificate for 127.0.0.1 (SAN IP:127.0.0.1, DNS:localhost) and a client certificate
 * signed by it, plus an unrelated CA and a client certificate signed by that one (for "wrong
 * client" tests). Resolves with the PEM strings and `files` (paths).
 */
export async function makeCerts(dir = makeTempDir('certs')) {
  await mkdir(dir, { recursive: true });
  const f = (name) => join(dir, name);
  const files = {
    ca: f('ca.pem'),
    caKey: f('ca-key.pem'),
    serverCert: f('server-cert.pem'),
    serverKey: f('server-key.pem'),
    clientCert: f('client-cert.pem'),
    clientKey: f('client-key.pem'),
    otherCa: f('other-ca.pem'),
    otherCaKey: f('other-ca-key.pem'),
    otherClientCert: f('other-client-cert.pem'),
    otherClientKey: f('other-client-key.pem'),
  };
  const selfSigned = (cert, key, cn) => openssl(['req', '-x509', '-new', ...NEW_KEY, '-keyout', key, '-out', cert, '-days', DAYS, '-subj', `/CN=${cn}`, ...CA_EXT]);
  const request = (key, csr, cn) => openssl(['req', '-new', ...NEW_KEY, '-keyout', key, '-out', csr, '-subj', `/CN=${cn}`]);
  const sign = async (csr, ca, caKey, ext, cert) =>
    openssl(['x509', '-req', '-in', csr, '-CA', ca, '-CAkey', caKey, '-set_serial', `0x${randomBytes(16).toString('hex')}`, '-days', DAYS, '-extfile', ext, '-out', cert]);

  // Two rounds of independent openssl runs (keys and requests, then signatures): ~10 processes.
  await Promise.all([
    selfSigned(files.ca, files.caKey, 'spend-sentinel test CA'),
    selfSigned(files.otherCa, files.otherCaKey, 'spend-sentinel unrelated CA'),
    request(files.serverKey, f('server.csr'), 'localhost'),
    request(files.clientKey, f('client.csr'), 'spend-sentinel test client'),
    request(files.otherClientKey, f('other-client.csr'), 'spend-sentinel unrelated client'),
    writeFile(f('server.ext'), leafExt('serverAuth', 'IP:127.0.0.1,DNS:localhost')),
    writeFile(f('client.ext'), leafExt('clientAuth')),
  ]);
  await Promise.all([
    sign(f('server.csr'), files.ca, files.caKey, f('server.ext'), files.serverCert),
    sign(f('client.csr'), files.ca, files.caKey, f('client.ext'), files.clientCert),
    sign(f('other-client.csr'), files.otherCa, files.otherCaKey, f('client.ext'), files.otherClientCert),
  ]);
  await Promise.all(['server.csr', 'client.csr', 'other-client.csr', 'server.ext', 'client.ext'].map((n) => rm(f(n), { force: true })));

  const pem = (path) => readFile(path, 'utf8');
  const [caPem, serverCertPem, serverKeyPem, clientCertPem, clientKeyPem, otherCaPem, otherClientCertPem, otherClientKeyPem] = await Promise.all(
    [files.ca, files.serverCert, files.serverKey, files.clientCert, files.clientKey, files.otherCa, files.otherClientCert, files.otherClientKey].map(pem),
  );
  return { dir, caPem, serverCertPem, serverKeyPem, clientCertPem, clientKeyPem, otherCaPem, otherClientCertPem, otherClientKeyPem, files };
}

// ---- eviction ----------------------------------------------------------------------------------

/**
 * Writes 1 KB filler keys (pipelined, `EXISTS key` after each) into `redis` (a startRedis handle
 * with --maxmemory and an evicting --maxmemory-policy) until `key` is gone; resolves with how
 * many filler keys it took. Under a volatile-* policy the fillers get a TTL (`fillerTtlMs`,
 * default 1 h) so that there is always something evictable; under allkeys-* they get none.
 * Fails after `maxKeys` fillers or `maxMs`, or on a refused write (OOM: nothing left to evict).
 */
export async function fillUntilEvicted(redis, key, { maxMs = 60000, maxKeys = 200000, valueBytes = 1024, batch = 250, fillerTtlMs } = {}) {
  if ((await redis.command('EXISTS', key)) !== 1) throw new Error(`fillUntilEvicted: ${key} does not exist to begin with`);
  const [, policy] = await redis.command('CONFIG', 'GET', 'maxmemory-policy');
  const [, maxmemory] = await redis.command('CONFIG', 'GET', 'maxmemory');
  if (policy === 'noeviction' || maxmemory === '0') {
    throw new Error(`fillUntilEvicted: nothing is ever evicted with maxmemory ${maxmemory} and policy ${policy} (start the server with e.g. --maxmemory 4mb --maxmemory-policy allkeys-random)`);
  }
  const ttl = fillerTtlMs ?? (policy.startsWith('volatile-') ? 3_600_000 : null);
  const value = 'x'.repeat(valueBytes);
  const prefix = `filler:${randomBytes(4).toString('hex')}:`;
  const started = now();
  let written = 0;
  while (written < maxKeys) {
    if (now() - started > maxMs) break;
    const n = Math.min(batch, maxKeys - written);
    const cmds = [];
    for (let j = 0; j < n; j += 1) {
      const name = `${prefix}${written + j}`;
      cmds.push(ttl === null ? ['SET', name, value] : ['SET', name, value, 'PX', String(ttl)], ['EXISTS', key]);
    }
    const replies = await redis.commands(cmds, { timeoutMs: 10000 });
    for (let j = 0; j < n; j += 1) {
      const set = replies[2 * j];
      if (set instanceof RedisReplyError) throw new Error(`fillUntilEvicted: filler ${written + j} refused (${set.reply}) while ${key} still exists (policy ${policy})`);
      if (replies[2 * j + 1] === 0) return written + j + 1;
    }
    written += n;
  }
  const mem = parseInfo(await redis.command('INFO', 'memory')).used_memory_human;
  const { evicted_keys: evicted } = parseInfo(await redis.command('INFO', 'stats'));
  throw new Error(`fillUntilEvicted: ${key} still exists after ${written} filler keys in ${Math.round(now() - started)} ms (policy ${policy}, maxmemory ${maxmemory}, used ${mem}, evicted_keys ${evicted})`);
}
