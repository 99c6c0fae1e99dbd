// The fleet ceiling on the Redis people actually run, proved against real servers started here
// (helpers/redis-topologies.mjs): the fleet's key deleted or evicted, failovers to a replica that
// was or was not connected, the server's clock stepped both ways, all while the authority is
// silent; then a 3-master Cluster reached through a node that does not own the fleet's slot,
// TLS with a private CA and client certificates, and an ACL user made with the rule of docs/fleet.md.
//
// Ceiling scenarios: node processes (helpers/fleet-nodes.mjs) on b = 240, r = 50/s, maxNodes 4,
// reserve 0.25 (floor 15, pool 180), leaseSeconds 5. Three nodes lease, the authority is cut at T
// with every ledger empty, each node spends its whole budget, the fault strikes, a fourth node
// joins once each of the three has renewed after the fault, and once no window can be open any
// more (b / r = 4.8 s after T) and every node has reported past that moment, the units admitted
// after T by all nodes together must be ≤ b. Without a hold after the fault, the first node to
// renew would be granted the pool again while the others still use theirs, and its window would
// grow past the age of its evidence. Every wait is for an event (a report, a renewal) or for a
// moment to pass (untilPast); none bounds how long something took.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { stoppedBy } from './helpers/redis.mjs';
import { fillUntilEvicted, makeCerts, startCluster, startReplicated } from './helpers/redis-topologies.mjs';
import { cleanups, pollUntil, sentinelPool } from './helpers/wait.mjs';
import { B, R } from './helpers/fleet-numbers.mjs';
import { afterEveryWindow, allLeased, assertCeiling, cutWithEmptyLedgers, epoch, fleetScope, renewedSince } from './helpers/fleet-nodes.mjs';

const { Sentinel } = createRequire(import.meta.url)('../js/main.js');

const MAX_NODES = 4;
const fleetKey = (name) => `{spend-sentinel:${name}}`;

/** Resolves once every node in `nodes` has reported a renewal answered after `since` (epoch ms). */
const allRenewedSince = (nodes, since, what) =>
  Promise.all(nodes.map((n) => n.until((x) => renewedSince(x, since), 15000, `${n.label} to renew after ${what}`)));

/**
 * Three nodes on `url` lease; the authority is cut at T with empty ledgers; `fault(nodes)` strikes
 * once every node has spent; a node joins; units after T ≤ b. Answers the nodes and T for more checks.
 */
async function ceilingThrough(s, url, fault, what) {
  const over = { maxNodes: MAX_NODES };
  const nodes = [s.node(url, over), s.node(url, over), s.node(url, over)];
  await allLeased(nodes);
  const T = await cutWithEmptyLedgers(s, nodes);
  // every node spent its whole budget (it admits as fast as admitted)
  await Promise.all(nodes.map((n) => n.until((x) => x.t > T && x.ledger >= x.nodeBudgetUnits - 1, 5000, `${n.label} to spend its budget`)));
  const faultAt = epoch();
  await fault(nodes);
  // A node joins once the others have renewed after the fault (seen in their reports): it would
  // take the pool itself if it came first, and it has no evidence to spend it.
  await allRenewedSince(nodes, epoch(), `the fault (${what})`);
  const joiner = s.node(url, over);
  nodes.push(joiner);
  await joiner.until((x) => x.mode !== 'connecting', 15000, 'the joiner to reach Redis');
  await afterEveryWindow(nodes, T);
  const { total, detail } = assertCeiling(nodes, T, Infinity, what);
  assert.ok(total >= B / 2, `only ${total} units after T: the scenario did not exercise the ceiling (${detail})`);
  return { nodes, T, faultAt, total, detail };
}

/** Every node that was leased saw the hold begin after the fault. */
function assertHeldAfter(nodes, faultAt, what) {
  for (const n of nodes.slice(0, 3)) {
    const held = n.reports.find((x) => x.t > faultAt && x.growthHeld);
    assert.ok(held, `${what}: ${n.label} never saw growth held after the fault; last ${JSON.stringify(n.latest)}`);
  }
}

describe('the ceiling while Redis loses the fleet\'s state', { concurrency: 2 }, () => {
  test('the fleet\'s key deleted (DEL)', async (t) => {
    const s = fleetScope(t);
    const redis = await s.redis();
    const { nodes, faultAt, total } = await ceilingThrough(s, redis.url, () => redis.command('DEL', fleetKey(s.name)), 'DEL');
    assertHeldAfter(nodes, faultAt, 'DEL');
    t.diagnostic(`units after T: ${total}`);
  });

  for (const policy of ['allkeys-random', 'volatile-lru']) {
    test(`the fleet's key evicted (maxmemory-policy ${policy})`, async (t) => {
      const s = fleetScope(t);
      const redis = await s.redis({ args: ['--maxmemory', '8mb', '--maxmemory-policy', policy] });
      const fill = () => fillUntilEvicted(redis, fleetKey(s.name), policy.startsWith('volatile') ? { fillerTtlMs: 3_600_000 } : {});
      const { nodes, faultAt, total } = await ceilingThrough(s, redis.url, fill, policy);
      assertHeldAfter(nodes, faultAt, policy);
      t.diagnostic(`units after T: ${total}`);
    });
  }

  test('failover to a connected replica (growth was confirmed with WAIT)', async (t) => {
    const s = fleetScope(t);
    const topology = await startReplicated({ replicas: 1 });
    s.defer(() => topology.stop());
    const { nodes, faultAt, total } = await ceilingThrough(s, topology.url, () => topology.failover(0), 'failover, connected replica');
    assertHeldAfter(nodes, faultAt, 'failover');
    t.diagnostic(`units after T: ${total}`);
  });

  test('failover to a replica that was not connected and missed writes', async (t) => {
    const s = fleetScope(t);
    const topology = await startReplicated({ replicas: 1 });
    s.defer(() => topology.stop());
    const fault = async (nodes) => {
      topology.links[0].setMode('reset');
      await topology.waitReplicaDisconnected(0);
      // writes the replica misses: a renewal of every node, answered by the primary alone
      await allRenewedSince(nodes, epoch(), 'the replica was cut');
      await topology.failover(0);
    };
    const { nodes, faultAt, total } = await ceilingThrough(s, topology.url, fault, 'failover, replica not connected');
    assertHeldAfter(nodes, faultAt, 'failover to a stale replica');
    t.diagnostic(`units after T: ${total}`);
  });

  for (const [label, seconds] of [['forward 30 s (six leases)', 30], ['backward 60 s', -60]]) {
    test(`the server's clock stepped ${label}`, async (t) => {
      const s = fleetScope(t);
      const redis = await s.redis({ clockShim: true });
      const before = Number((await redis.command('TIME'))[0]);
      const step = async () => {
        redis.stepClock(seconds);
        const after = Number((await redis.command('TIME'))[0]);
        assert.ok(Math.abs(after - before - seconds) < 15, `the shim stepped TIME by ${after - before} s`);
      };
      const { total } = await ceilingThrough(s, redis.url, step, `clock ${label}`);
      t.diagnostic(`units after T: ${total}`);
    });
  }

  test('6 nodes with maxNodes 4: the two beyond it have no floor of their own', async (t) => {
    const s = fleetScope(t);
    const redis = await s.redis();
    const nodes = Array.from({ length: 6 }, () => s.node(redis.url, { maxNodes: MAX_NODES }));
    await allLeased(nodes);
    await Promise.all(nodes.map((n) => n.until((x) => x.liveNodes === 6 && x.maxNodes === MAX_NODES, 10000, `${n.label} to count 6 live nodes`)));
    const T = await cutWithEmptyLedgers(s, nodes);
    await afterEveryWindow(nodes, T);
    const { total, detail } = assertCeiling(nodes, T, Infinity, '6 nodes, maxNodes 4');
    assert.ok(total >= B / 2, `only ${total} units after T (${detail})`);
    t.diagnostic(`units after T: ${total}`);
  });
});

// ---- where Redis runs ------------------------------------------------------------------------

function scope(t) {
  const defer = cleanups(t);
  const pool = sentinelPool(Sentinel);
  defer(() => pool.closeAll());
  return { defer, make: (options) => pool.make(options), ...stoppedBy(defer) };
}

let names = 0;
const fleetName = () => `ss-topo:${process.pid}.${(names += 1)}`;
const options = (redis, name, fleet = {}) => ({
  budget: { unverifiedUnits: B, maxUnitsPerSecond: R, fleet: { redis, name, maxNodes: MAX_NODES, leaseSeconds: 5, maxSplitSeconds: 0, ...fleet } },
  refresh: { minIntervalMs: 20, maxIntervalMs: 40, timeoutMs: 200 },
  authority: { inspect: async () => 'valid' },
});
const fmt = (s) => JSON.stringify(s.fleet());
const leased = (sentinel, ms = 20000) => pollUntil(() => sentinel.fleet().mode === 'leased', { ms, label: () => `leased; ${fmt(sentinel)}` });

describe('where Redis runs', { concurrency: true }, () => {
  test('Redis Cluster, 3 masters: a URL naming a node that does not own the fleet\'s slot (MOVED is followed)', async (t) => {
    const s = scope(t);
    const cluster = await startCluster({ masters: 3 });
    s.defer(() => cluster.stop());
    const name = fleetName();
    const url = await cluster.urlNotOwning(fleetKey(name));
    const nodes = [s.make(options(url, name)), s.make(options(url, name))];
    await Promise.all(nodes.map((n) => leased(n)));
    const pool = B * 0.75;
    await pollUntil(() => nodes.every((n) => Math.abs(n.fleet().grantUnits - pool / 2) < 1), {
      ms: 10000,
      label: () => `an equal split: ${nodes.map(fmt).join(' ')}`,
    });
    const owner = await cluster.ownerOf(fleetKey(name));
    assert.equal(await owner.command('EXISTS', fleetKey(name)), 1, 'the state lives on the owner');
    for (const n of nodes) assert.equal(n.fleet().redisError, null);
  });

  test('Redis Cluster with the fleet\'s slot being migrated: ASK is followed (ASKING on the importing node)', async (t) => {
    const s = scope(t);
    const cluster = await startCluster({ masters: 3 });
    s.defer(() => cluster.stop());
    const name = fleetName();
    const key = fleetKey(name);
    const slot = await cluster.keySlot(key);
    const owner = await cluster.ownerOf(key);
    const importer = cluster.nodes.find((n) => n.port !== owner.port);
    const idOf = (n) => n.command('CLUSTER', 'MYID');
    await importer.command('CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', await idOf(owner));
    await owner.command('CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', await idOf(importer));
    const sentinel = s.make(options(owner.url, name));
    await leased(sentinel);
    const [, exists] = await importer.commands([['ASKING'], ['EXISTS', key]]);
    assert.equal(exists, 1, 'the state was written on the importing node');
    await assert.rejects(owner.command('EXISTS', key), /ASK/, 'the migrating node has no copy: it asks clients to go on');
    assert.equal(sentinel.fleet().redisError, null);
  });

  test('TLS with a private CA and client certificates (tls-auth-clients yes); the key never shows', async (t) => {
    const s = scope(t);
    const certs = await makeCerts();
    const redis = await s.redis({ tls: { certs, authClients: true } });
    assert.match(redis.url, /^rediss:/);
    const log = [];
    const logger = { info: (f) => log.push(f), warn: (f) => log.push(f), error: (f) => log.push(f) };
    const good = s.make({ ...options(redis.url, fleetName(), { tls: { ca: certs.caPem, cert: certs.clientCertPem, key: certs.clientKeyPem } }), logger });
    const noCert = s.make(options(redis.url, fleetName(), { tls: { ca: certs.caPem } }));
    const otherCa = s.make(options(redis.url, fleetName(), { tls: { ca: certs.otherCaPem, cert: certs.clientCertPem, key: certs.clientKeyPem } }));
    await leased(good);
    for (const [what, sentinel] of [['no client certificate', noCert], ['another CA', otherCa]]) {
      await pollUntil(() => sentinel.fleet().redisError === 'tls', { ms: 15000, label: () => `${what}: redisError tls; ${fmt(sentinel)}` });
    }
    const keyBody = certs.clientKeyPem.split('\n')[1];
    const shown = JSON.stringify([good.fleet(), good.metrics(), log, String(good), JSON.stringify(good)]);
    assert.ok(!shown.includes(keyBody), 'the client key never shows');
  });

  test('an ACL user made with the rule of docs/fleet.md runs a fleet, WAIT included (a primary with a replica)', async (t) => {
    const s = scope(t);
    const topology = await startReplicated({ replicas: 1, linkThroughProxy: false });
    s.defer(() => topology.stop());
    const page = readFileSync(new URL('../docs/fleet.md', import.meta.url), 'utf8');
    const rule = /^ACL SETUSER spend-sentinel (.+)$/m.exec(page);
    assert.ok(rule, 'docs/fleet.md gives the ACL rule on a line of its own');
    const args = rule[1].replace('>CHANGE-ME', '>acl-test-pw').split(/\s+/);
    await topology.primary.command('ACL', 'SETUSER', 'spend-sentinel', ...args);
    const url = topology.url.replace('redis://', 'redis://spend-sentinel:acl-test-pw@');
    const sentinel = s.make(options(url, fleetName()));
    await leased(sentinel);
    const stats = await topology.primary.command('INFO', 'commandstats');
    assert.match(stats, /cmdstat_wait:calls=[1-9]/, 'growth was confirmed with WAIT');
    assert.equal(sentinel.fleet().redisError, null);
    assert.doesNotMatch(JSON.stringify(await topology.primary.command('ACL', 'LOG')), /spend-sentinel/, 'no command was denied');
  });
});
