// Self-test of helpers/redis-topologies.mjs (and the TLS, clock-shim and retarget additions to
// helpers/redis.mjs) against real servers, without the addon: a broken topology fails here, not as
// a mysterious fleet failure. Needs redis-server and redis-cli (Debian `redis-server`), openssl
// and cc (Debian `openssl`, `gcc libc6-dev`) on PATH.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { RedisReplyError, rawCommands, stoppedBy } from './helpers/redis.mjs';
import { buildClockShim, fillUntilEvicted, makeCerts, parseInfo, startCluster, startReplicated } from './helpers/redis-topologies.mjs';
import { cleanups, deferred, now, pollUntil, withTimeout } from './helpers/wait.mjs';

// WAIT's timeout for a replica that is connected: it answers as soon as the replica acknowledged,
// so this only ends a hang; and the helper's own timeout for a command, above it.
const WAIT_MS = '15000';
const ASK_MS = 30000;

/** Starts a topology and stops it (servers, proxies, temp dir) after the test, whatever happened. */
async function topology(defer, start, opts) {
  const t0 = now();
  const topo = await start(opts);
  defer(() => topo.stop());
  topo.startedMs = Math.round(now() - t0);
  return topo;
}

/** A raw connection that only reports when it is closed (by a proxy, by the server). */
function watchClose(port, defer) {
  const socket = connect({ host: '127.0.0.1', port });
  defer(() => socket.destroy());
  const closed = deferred();
  socket.on('error', () => {});
  socket.on('close', () => closed.resolve());
  const opened = new Promise((resolve) => socket.once('connect', resolve));
  return { opened, closed: closed.promise };
}

/** The server's TIME in seconds, and the local wall clock around the call. */
async function serverTime(redis) {
  const sent = Date.now() / 1000;
  const [sec, usec] = await redis.command('TIME');
  const received = Date.now() / 1000;
  return { server: Number(sec) + Number(usec) / 1e6, sent, received };
}

/** Asserts TIME - local clock ≈ `offset` s (the local clock around the call, ± `slack` s). */
async function assertClockOffset(redis, offset, slack = 1) {
  const { server, sent, received } = await serverTime(redis);
  const low = sent + offset - slack;
  const high = received + offset + slack;
  assert.ok(low <= server && server <= high, `TIME ${server.toFixed(3)} not within [${low.toFixed(3)}, ${high.toFixed(3)}] (offset ${offset} s)`);
}

describe('redis topologies', { concurrency: true }, () => {
  describe('proxy retarget', { concurrency: true }, () => {
    test('new connections reach the new target; existing ones are destroyed; the mode stays', async (t) => {
      const defer = cleanups(t);
      const start = stoppedBy(defer);
      const [a, b] = await Promise.all([start.redis(), start.redis()]);
      await Promise.all([a.command('SET', 'who', 'a'), b.command('SET', 'who', 'b')]);
      const p = await start.proxy(a.port);
      assert.deepEqual(await rawCommands(p.port, [['GET', 'who']]), ['a']);
      const old = watchClose(p.port, defer);
      await old.opened;
      await pollUntil(() => p.connections === 1, { ms: 2000, label: 'the proxy to hold one connection' });

      p.retarget(b.port);
      assert.equal(p.target, b.port);
      await withTimeout(old.closed, 2000, 'the connection to the old target to be destroyed');
      assert.deepEqual(await rawCommands(p.port, [['GET', 'who']]), ['b']);

      p.setMode('reset');
      p.retarget(a.port);
      assert.equal(p.mode, 'reset');
      await assert.rejects(rawCommands(p.port, [['PING']], { timeoutMs: 10000 }), /ECONNRESET|closed after 0/);
      p.setMode('pass');
      assert.deepEqual(await rawCommands(p.port, [['GET', 'who']]), ['a']);
      assert.throws(() => p.retarget(0), /needs a TCP port/);
    });
  });

  describe('startReplicated', { concurrency: true }, () => {
    test('a connected replica gets every write; a cut one (reset) misses them until the link is back', async (t) => {
      const defer = cleanups(t);
      const topo = await topology(defer, startReplicated, { replicas: 1 });
      console.log(`# primary + 1 replica in sync in ${topo.startedMs} ms`);
      assert.equal(topo.url, `redis://127.0.0.1:${topo.proxy.port}`);
      assert.equal(await topo.connectedReplicas(), 1);
      const [replica] = topo.replicas;
      const ask = (...cmds) => rawCommands(topo.proxy.port, cmds, { timeoutMs: ASK_MS });

      // WAIT counts the replicas that acknowledged this connection's last write. It answers as soon
      // as they have, so a connected replica gets a generous timeout (an upper bound on the
      // acknowledgement would fail on a busy machine); a cut one gets 100 ms (it can never answer).
      assert.deepEqual(await ask(['SET', 'before', 'v'], ['WAIT', '1', WAIT_MS]), ['OK', 1]);
      assert.equal(await replica.command('GET', 'before'), 'v');
      assert.equal(await replica.command('SET', 'x', 'y').catch((err) => err.reply), 'READONLY You can\'t write against a read only replica.');

      topo.links[0].setMode('reset');
      await topo.waitReplicaDisconnected(0);
      assert.equal(await topo.connectedReplicas(), 0);
      assert.deepEqual(await ask(['SET', 'during', 'v'], ['WAIT', '1', '100']), ['OK', 0]);
      assert.equal(await replica.command('GET', 'during'), null, 'a write made while the link was cut reached the replica');
      assert.equal(await replica.command('GET', 'before'), 'v', 'the cut replica still serves what it had');
      assert.equal((await topo.replicaState(0)).link, 'down');

      const t0 = now();
      topo.links[0].setMode('pass');
      await topo.waitReplicaConnected(0);
      console.log(`# a cut replica reconnected ${Math.round(now() - t0)} ms after its link came back`);
      assert.equal(await replica.command('GET', 'during'), 'v', 'the replica caught up on reconnection');
      assert.deepEqual(await ask(['SET', 'after', 'v'], ['WAIT', '1', WAIT_MS]), ['OK', 1]);
    });

    test('blackhole: the primary lists the replica until repl-timeout, but WAIT gets no acknowledgement', async (t) => {
      const defer = cleanups(t);
      // A repl-timeout needs a ping period below it, or an idle link would time out too. 10 s: the
      // primary drops the silent replica 9 s after the blackhole at the earliest (its last
      // acknowledgement is at most 1 s older), and the checks "still listed" must come before.
      const topo = await topology(defer, startReplicated, { replicas: 1, args: ['--repl-timeout', '10', '--repl-ping-replica-period', '1'] });
      const ask = (...cmds) => rawCommands(topo.proxy.port, cmds, { timeoutMs: ASK_MS });
      topo.links[0].setMode('blackhole');
      const t0 = now();
      assert.deepEqual(await ask(['SET', 'during', 'v'], ['WAIT', '1', '100']), ['OK', 0]);
      assert.equal((await topo.replicaState(0)).state, 'online', 'a blackholed replica is still listed at first');
      // WAIT on a connection that wrote nothing has nothing to wait for: it counts the listed replicas
      assert.deepEqual(await ask(['WAIT', '1', '100']), [1]);
      await topo.waitReplicaDisconnected(0, { ms: 60000 });
      console.log(`# the primary dropped a blackholed replica after ${Math.round(now() - t0)} ms (repl-timeout 10 s)`);
      assert.equal(await topo.replicas[0].command('GET', 'during'), null);
      topo.links[0].setMode('pass');
      await topo.waitReplicaConnected(0);
      assert.equal(await topo.replicas[0].command('GET', 'during'), 'v');
    });

    test('failover(i) behind the proxy: acknowledged writes survive, the url reaches a writable master', async (t) => {
      const defer = cleanups(t);
      const topo = await topology(defer, startReplicated, { replicas: 2 });
      const ask = (...cmds) => rawCommands(topo.proxy.port, cmds, { timeoutMs: ASK_MS });
      assert.deepEqual(await ask(['SET', 'before', 'v'], ['WAIT', '2', WAIT_MS]), ['OK', 2]);
      topo.links[1].setMode('reset'); // replica 1 misses the next write, replica 0 gets it
      await topo.waitReplicaDisconnected(1);
      assert.deepEqual(await ask(['SET', 'while-1-cut', 'v'], ['WAIT', '1', WAIT_MS]), ['OK', 1]);

      const old = topo.primary;
      const oldPid = old.pid;
      const t0 = now();
      const promoted = await topo.failover(0);
      console.log(`# failover through the proxy in ${Math.round(now() - t0)} ms`);
      assert.equal(promoted, topo.replicas[0]);
      assert.equal(topo.primary, promoted);
      assert.equal(topo.proxy.target, promoted.port);
      assert.throws(() => process.kill(oldPid, 0), { code: 'ESRCH' }, 'the old primary still runs');
      await assert.rejects(rawCommands(old.port, [['PING']], { timeoutMs: 10000 }), /ECONNREFUSED/);

      const [acked, whileCut, info, write] = await ask(['GET', 'before'], ['GET', 'while-1-cut'], ['INFO', 'replication'], ['SET', 'after', 'v']);
      assert.equal(acked, 'v');
      assert.equal(whileCut, 'v');
      assert.equal(parseInfo(info).role, 'master');
      assert.equal(write, 'OK');
      // the other replica is left alone: it replicates from a dead primary
      assert.equal(await topo.connectedReplicas(), 0);
      assert.equal(await topo.replicas[1].command('GET', 'while-1-cut'), null);
      await assert.rejects(topo.waitReplicaConnected(0), /is the primary since failover\(0\)/);
    });

    test('failover to a replica that was cut loses the writes it missed', async (t) => {
      const defer = cleanups(t);
      const topo = await topology(defer, startReplicated, { replicas: 1 });
      const ask = (...cmds) => rawCommands(topo.proxy.port, cmds, { timeoutMs: ASK_MS });
      assert.deepEqual(await ask(['SET', 'before', 'v'], ['WAIT', '1', WAIT_MS]), ['OK', 1]);
      topo.links[0].setMode('reset');
      await topo.waitReplicaDisconnected(0);
      assert.deepEqual(await ask(['SET', 'lost', 'v'], ['WAIT', '1', '100']), ['OK', 0]);
      await topo.failover(0);
      assert.deepEqual(await ask(['GET', 'before'], ['GET', 'lost']), ['v', null]);
    });

    test('without linkThroughProxy replicas connect directly', async (t) => {
      const defer = cleanups(t);
      const topo = await topology(defer, startReplicated, { replicas: 2, linkThroughProxy: false });
      assert.deepEqual(topo.links, []);
      assert.equal(await topo.connectedReplicas(), 2);
      const state = await topo.replicaState(1);
      assert.equal(state.state, 'online');
      assert.equal(state.link, 'up');
    });
  });

  describe('startCluster', { concurrency: true }, () => {
    test('3 masters own all 16384 slots; ownerOf agrees with the MOVED reply of a non-owner', async (t) => {
      const defer = cleanups(t);
      const cluster = await topology(defer, startCluster);
      console.log(`# cluster of 3 masters ready in ${cluster.startedMs} ms (${JSON.stringify(cluster.timings)})`);
      assert.equal(cluster.nodes.length, 3);
      for (const node of cluster.nodes) {
        assert.equal(node.url, `redis://127.0.0.1:${node.port}`);
        assert.ok(Number.isInteger(node.pid));
        const info = parseInfo(await node.command('CLUSTER', 'INFO'));
        assert.equal(info.cluster_state, 'ok');
        assert.equal(info.cluster_slots_assigned, '16384');
        assert.equal(info.cluster_known_nodes, '3');
      }
      const ranges = await cluster.slotRanges();
      assert.equal(ranges.reduce((sum, r) => sum + r.end - r.start + 1, 0), 16384);

      const owners = new Set();
      for (const name of ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta']) {
        const key = `{spend-sentinel:${name}}`;
        const slot = await cluster.keySlot(key);
        assert.equal(await cluster.keySlot(`${key}:lease`), slot, 'the hash tag decides the slot');
        const owner = await cluster.ownerOf(key);
        owners.add(owner.port);
        assert.equal(await owner.command('SET', key, name), 'OK');
        const notOwning = await cluster.urlNotOwning(key);
        const stranger = cluster.nodes.find((n) => n.url === notOwning);
        assert.notEqual(stranger, owner);
        const refused = await stranger.command('SET', key, name).catch((err) => err);
        assert.ok(refused instanceof RedisReplyError, `SET on a non-owner answered ${refused}`);
        assert.equal(refused.reply, `MOVED ${slot} 127.0.0.1:${owner.port}`);
      }
      assert.ok(owners.size >= 2, `six names all hashed to one node (${[...owners]})`);
    });
  });

  describe('TLS', { concurrency: true }, () => {
    let certs;
    before(async () => {
      const t0 = now();
      certs = await makeCerts();
      console.log(`# makeCerts (2 CAs, server + 2 client certificates) in ${Math.round(now() - t0)} ms`);
    });
    after(async () => {
      if (certs) await rm(certs.dir, { recursive: true, force: true });
    });

    test('makeCerts: PEM strings and files for a CA, a server and clients', () => {
      for (const k of ['caPem', 'serverCertPem', 'clientCertPem', 'otherClientCertPem']) assert.match(certs[k], /^-----BEGIN CERTIFICATE-----/);
      for (const k of ['serverKeyPem', 'clientKeyPem', 'otherClientKeyPem']) assert.match(certs[k], /^-----BEGIN PRIVATE KEY-----/);
      for (const path of Object.values(certs.files)) assert.ok(path.startsWith(certs.dir));
    });

    test('authClients: true: the CA + client certificate get PONG; no or a foreign client certificate is refused', async (t) => {
      const defer = cleanups(t);
      const r = await stoppedBy(defer).redis({ tls: { certs, authClients: true } });
      assert.equal(r.url, `rediss://127.0.0.1:${r.port}`);
      assert.equal(await r.command('PING'), 'PONG');
      assert.equal(await r.command('SET', 'k', 'v'), 'OK');
      assert.deepEqual(await r.commands([['GET', 'k'], ['CONFIG', 'GET', 'port']]), ['v', ['port', '0']]); // no plain port
      assert.deepEqual(await rawCommands(r.port, [['PING']], { tls: { ca: certs.caPem, cert: certs.clientCertPem, key: certs.clientKeyPem } }), ['PONG']);
      await assert.rejects(rawCommands(r.port, [['PING']], { tls: { ca: certs.caPem } }), /certificate required|ECONNRESET|closed after 0/);
      await assert.rejects(
        rawCommands(r.port, [['PING']], { tls: { ca: certs.caPem, cert: certs.otherClientCertPem, key: certs.otherClientKeyPem } }),
        /unknown ca|ECONNRESET|closed after 0/,
      );
      await assert.rejects(rawCommands(r.port, [['PING']], { timeoutMs: 1000 }), /ECONNRESET|closed after 0|timed out/, 'plain RESP on the TLS port');
    });

    test('authClients: false: a client trusting the CA needs no certificate; one not trusting it fails', async (t) => {
      const defer = cleanups(t);
      const r = await stoppedBy(defer).redis({ tls: { certs, authClients: false } });
      assert.deepEqual(await rawCommands(r.port, [['PING']], { tls: { ca: certs.caPem } }), ['PONG']);
      await assert.rejects(rawCommands(r.port, [['PING']], { tls: {} }), /self[- ]signed|unable to verify|UNABLE_TO_GET_ISSUER/i);
      await assert.rejects(rawCommands(r.port, [['PING']], { tls: { ca: certs.otherCaPem } }), /self[- ]signed|unable to verify|UNABLE_TO_GET_ISSUER/i);
    });
  });

  describe('clock shim', { concurrency: true }, () => {
    test('stepClock moves TIME by +3600 s then -60 s; TTLs follow; another server keeps its clock', async (t) => {
      const defer = cleanups(t);
      const t0 = now();
      await buildClockShim();
      console.log(`# clock shim compiled in ${Math.round(now() - t0)} ms`);
      const start = stoppedBy(defer);
      const [r, other] = await Promise.all([start.redis({ clockShim: true }), start.redis({ clockShim: true })]);
      assert.equal(r.clockOffsetSeconds, 0);
      await assertClockOffset(r, 0);
      await r.command('SET', 'lease', 'v', 'EX', '1800');

      r.stepClock(3600);
      assert.equal(r.clockOffsetSeconds, 3600);
      await assertClockOffset(r, 3600);
      assert.equal(await r.command('GET', 'lease'), null, 'a key with 30 min to live survived a one-hour step');
      await assertClockOffset(other, 0);

      const setAt = now();
      await r.command('SET', 'lease', 'v', 'EX', '100');
      r.stepClock(-60);
      assert.equal(r.clockOffsetSeconds, 3540);
      await assertClockOffset(r, 3540);
      const ttl = await r.command('TTL', 'lease');
      // 100 s to live, 60 s more after the step back, less the time that really passed (TTL rounds down)
      const passed = Math.ceil((now() - setAt) / 1000);
      assert.ok(ttl >= 160 - passed - 1 && ttl <= 160, `TTL after stepping back 60 s: ${ttl} (${passed} s passed)`);

      assert.equal(await r.command('PING'), 'PONG');
      assert.deepEqual(await r.commands([['SET', 'k', 'v'], ['GET', 'k']]), ['OK', 'v']);
      assert.throws(() => r.stepClock(Number.NaN), /finite number/);
      const plain = await start.redis();
      assert.equal(plain.clockOffsetSeconds, undefined);
      assert.throws(() => plain.stepClock(1), /clockShim: true/);
    });
  });

  describe('fillUntilEvicted', { concurrency: true }, () => {
    const maxmemory = (policy) => ({ args: ['--maxmemory', '4mb', '--maxmemory-policy', policy] });

    test('allkeys-random evicts the target key', async (t) => {
      const defer = cleanups(t);
      const r = await stoppedBy(defer).redis(maxmemory('allkeys-random'));
      await r.command('SET', 'target', 'v');
      const fillers = await fillUntilEvicted(r, 'target');
      console.log(`# allkeys-random: target evicted after ${fillers} filler keys`);
      assert.ok(fillers > 0);
      assert.equal(await r.command('EXISTS', 'target'), 0);
      assert.ok(Number(parseInfo(await r.command('INFO', 'stats')).evicted_keys) > 0);
    });

    test('volatile-lru evicts the target key (it has a TTL)', async (t) => {
      const defer = cleanups(t);
      const r = await stoppedBy(defer).redis(maxmemory('volatile-lru'));
      await r.command('SET', 'target', 'v', 'PX', '600000');
      const fillers = await fillUntilEvicted(r, 'target');
      console.log(`# volatile-lru: target evicted after ${fillers} filler keys`);
      assert.equal(await r.command('EXISTS', 'target'), 0);
    });

    test('refuses a server that never evicts, and stops by itself at maxKeys', async (t) => {
      const defer = cleanups(t);
      const start = stoppedBy(defer);
      const [plain, big] = await Promise.all([start.redis(), start.redis({ args: ['--maxmemory', '512mb', '--maxmemory-policy', 'allkeys-random'] })]);
      await plain.command('SET', 'target', 'v');
      await assert.rejects(fillUntilEvicted(plain, 'target'), /nothing is ever evicted/);
      await big.command('SET', 'target', 'v');
      await assert.rejects(fillUntilEvicted(big, 'target', { maxKeys: 500 }), /still exists after 500 filler keys/);
      await assert.rejects(fillUntilEvicted(big, 'missing'), /does not exist to begin with/);
    });
  });
});
