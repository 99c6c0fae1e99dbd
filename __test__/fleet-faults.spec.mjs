// The fleet budget when Redis or the authority misbehave in ordinary ways, one process against a
// real redis-server: a slow authority on a fresh fleet, more nodes than maxNodes, failing Redis
// calls (wrong password, an ACL user without a command, a dead server) and what the logger hears,
// a server that closes idle connections, and a connection reset before close(). A lease that lapses
// while the authority is healthy (the refresh planned for its deadline, no not_ready blip) is
// tested on fake time in src/refresher/cadence_tests.rs.
//
// Synchronisation: waits poll fleet()/readiness (pollUntil, generous bounds) or wait for logger
// lines and transitions; fixed timers only to assert that something does NOT happen. No assertion
// bounds how long something took: those bounds are the code's rules, tested on fake time (the
// hold: src/rules/fleet/tests.rs; a fleet refresh's 2 s: src/rules/cadence.rs; the release's 1 s:
// src/fleet/close_tests.rs).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { stoppedBy } from './helpers/redis.mjs';
import { readExposition } from './helpers/exposition.mjs';
import { cleanups, now, pollUntil, sentinelPool, withTimeout } from './helpers/wait.mjs';

const { Sentinel } = createRequire(import.meta.url)('../js/main.js');

let names = 0;
const fleetName = () => `ss-faults:${process.pid}.${(names += 1)}`;

function scope(t) {
  const defer = cleanups(t);
  const pool = sentinelPool(Sentinel);
  defer(() => pool.closeAll());
  return { defer, make: (options) => pool.make(options), ...stoppedBy(defer) };
}

/** A pino-style logger that records `{ level, fields, message }`. */
function recordingLogger() {
  const lines = [];
  const logger = {};
  for (const level of ['info', 'warn', 'error']) logger[level] = (fields, message) => lines.push({ level, fields, message });
  return { logger, lines, fleet: () => lines.filter((l) => l.fields.event === 'spend_sentinel.fleet') };
}

const metric = (sentinel, name) => {
  const family = readExposition(sentinel.metrics()).get(name);
  return family?.samples ?? [];
};
const errorsTotal = (sentinel) => metric(sentinel, 'spend_sentinel_fleet_redis_errors_total').reduce((sum, s) => sum + s.value, 0);

const fmt = (s) => `fleet ${JSON.stringify(s.fleet())}, readiness ${JSON.stringify(s.readiness())}`;

describe('a slow authority never deadlocks a fresh fleet', { concurrency: true }, () => {
  // docs/fleet.md's example with b = 2000 (r 50, maxStaleSeconds 10, maxNodes 25, reserve 0.25: a
  // floor of 20 units, a 0.4 s window, shorter than the authority's answer; the page shows b = 20000
  // and says so) with the shortest lease, and default refresh options: a refresh is not abandoned
  // before 2 s, so a late valid answer still ends the hold. Every answer comes after the floor's
  // window, so a lease at all shows that such an answer counted; how soon it comes
  // (leaseSeconds × 1.03 + 2 s and three refreshes) is the rule of
  // a_hold_ends_for_this_node_a_lease_times_1_03_plus_two_seconds_after_it_first_saw_it
  // (src/rules/fleet/tests.rs) and a_fleets_nodes_default_refresh_is_not_abandoned_before_two_seconds
  // (src/rules/cadence.rs), on fake time.
  const LEASE = 5;
  for (const latencyMs of [300, 900]) {
    test(`authority answering in ${latencyMs} ms: a fresh fleet gets its lease after the hold, then ready`, async (t) => {
      const s = scope(t);
      const redis = await s.redis();
      const started = now();
      const sentinel = s.make({
        budget: {
          unverifiedUnits: 2000,
          maxUnitsPerSecond: 50,
          maxStaleSeconds: 10,
          fleet: { redis: redis.url, name: fleetName(), maxNodes: 25, leaseSeconds: LEASE, maxSplitSeconds: 0 },
        },
        authority: { inspect: () => sleep(latencyMs).then(() => 'valid') },
      });
      // a generous bound, only to end a hang: the hold (7.15 s) and three refreshes take about 10 s
      await pollUntil(() => sentinel.fleet().mode === 'leased', { ms: 60000, label: () => `leased; ${fmt(sentinel)}` });
      const leasedAfter = now() - started;
      assert.ok(leasedAfter >= (LEASE * 1.03 + 2) * 1000, `leased ${leasedAfter.toFixed(0)} ms after start, before the hold ended`);
      approx(sentinel.fleet().grantUnits, 480, 'grant = want = r × maxStaleSeconds − floor');
      await pollUntil(() => sentinel.readiness().status === 'ready', { ms: 15000, label: () => `ready once leased; ${fmt(sentinel)}` });
      t.diagnostic(`leased after ${leasedAfter.toFixed(0)} ms`);
    });
  }
});

describe('more live nodes than maxNodes', () => {
  test('6 nodes with maxNodes 4: the two beyond it have no floor and lease their whole budget; read-out, metric and one error line each', async (t) => {
    const s = scope(t);
    const redis = await s.redis();
    const name = fleetName();
    const B = 240;
    const FLOOR = (B * 0.25) / 4; // 15
    const POOL = B * 0.75; // 180: every node wants all it can get, so an equal split
    const logs = [];
    const nodes = [];
    // One after the other, so that the first four take the static floors.
    for (let i = 0; i < 6; i += 1) {
      const log = recordingLogger();
      logs.push(log);
      nodes.push(s.make({
        budget: { unverifiedUnits: B, maxUnitsPerSecond: 50, fleet: { redis: redis.url, name, maxNodes: 4, leaseSeconds: 5, maxSplitSeconds: 0 } },
        refresh: { minIntervalMs: 20, maxIntervalMs: 40, timeoutMs: 200 },
        authority: { inspect: async () => 'valid' },
        logger: log.logger,
      }));
      await pollUntil(() => nodes[i].fleet().mode !== 'connecting', { ms: 5000, label: () => `node ${i} answered` });
    }
    const fair = POOL / 6;
    await pollUntil(() => nodes.every((n) => n.fleet().mode === 'leased' && Math.abs(n.fleet().grantUnits - fair) < 0.05 * fair), {
      ms: 20000,
      label: () => `every grant near ${fair}: ${nodes.map((n) => n.fleet().grantUnits).join(', ')}`,
    });
    const total = nodes.reduce((sum, n) => sum + n.fleet().nodeBudgetUnits, 0);
    assert.ok(total <= B + 1e-6, `the node budgets add up to ${total} > b = ${B}`);
    for (const [i, n] of nodes.entries()) {
      const f = n.fleet();
      const beyond = i >= 4;
      assert.deepEqual([f.liveNodes, f.maxNodes, f.beyondMaxNodes, f.floorUnits], [6, 4, beyond, beyond ? 0 : FLOOR], `node ${i} read-out`);
      assert.equal(metric(n, 'spend_sentinel_fleet_live_nodes')[0]?.value, 6);
      assert.equal(metric(n, 'spend_sentinel_fleet_max_nodes')[0]?.value, 4);
      assert.equal(metric(n, 'spend_sentinel_fleet_beyond_max_nodes')[0]?.value, beyond ? 1 : 0);
      const over = logs[i].fleet().filter((l) => l.fields.liveNodes !== undefined);
      assert.equal(over.length, beyond ? 1 : 0, `node ${i}: one line for the episode when beyond, got ${JSON.stringify(over)}`);
      if (beyond) {
        assert.equal(over[0].level, 'error');
        assert.match(over[0].message, /every static floor of maxNodes 4 taken: this node has no floor/);
      }
    }
  });
});

describe('failing Redis calls are visible: redisError, the error metric, one log line per change', { concurrency: true }, () => {
  const options = (url, log) => ({
    budget: { unverifiedUnits: 240, maxUnitsPerSecond: 50, fleet: { redis: url, name: fleetName(), maxNodes: 3, leaseSeconds: 5, maxSplitSeconds: 0 } },
    refresh: { minIntervalMs: 20, maxIntervalMs: 40, timeoutMs: 200 },
    authority: { inspect: async () => 'valid' },
    logger: log.logger,
  });
  /** Waits for `kind` with at least `failures` failed calls, then checks the one line. */
  async function failsAs(sentinel, log, kind, failures = 3) {
    const linesFor = () => log.fleet().filter((l) => l.fields.redisError === kind);
    // The log line reaches the JavaScript thread after the readout changes: wait for it too.
    await pollUntil(() => sentinel.fleet().redisError === kind && errorsTotal(sentinel) >= failures && linesFor().length > 0, {
      ms: 15000,
      label: () => `redisError ${kind} after ${failures} failures, logged; ${fmt(sentinel)}, errors ${errorsTotal(sentinel)}`,
    });
    const lines = linesFor();
    assert.equal(lines.length, 1, `one line for ${kind} however many retries: ${JSON.stringify(log.fleet())}`);
    assert.equal(lines[0].level, 'error');
    const counted = metric(sentinel, 'spend_sentinel_fleet_redis_errors_total').find((x) => x.labels.kind === kind);
    assert.ok(counted?.value >= 1, `the metric counts ${kind}`);
  }

  test('wrong password: auth (the password never shows)', async (t) => {
    const s = scope(t);
    const redis = await s.redis({ user: 'fleet', password: 'right-password-123' });
    const log = recordingLogger();
    const sentinel = s.make(options(`redis://fleet:wrong-password-456@127.0.0.1:${redis.port}`, log));
    await failsAs(sentinel, log, 'auth');
    assert.equal(sentinel.fleet().mode, 'connecting');
    const everything = JSON.stringify([log.lines, sentinel.fleet(), sentinel.metrics()]);
    assert.ok(!everything.includes('wrong-password-456'), 'the password is never shown');
  });

  test('an ACL user that may not run INFO: noperm', async (t) => {
    const s = scope(t);
    const redis = await s.redis();
    await redis.command('ACL', 'SETUSER', 'noinfo', 'on', '>pw-noinfo', '~*', '+@all', '-info');
    const log = recordingLogger();
    const sentinel = s.make(options(`redis://noinfo:pw-noinfo@127.0.0.1:${redis.port}`, log));
    await failsAs(sentinel, log, 'noperm');
  });

  test('a dead server (timeout), then a refusing one (connect), then a healthy one: one line each, the last at info', async (t) => {
    const s = scope(t);
    const redis = await s.redis();
    const proxy = await s.proxy(redis.port);
    proxy.setMode('blackhole');
    const log = recordingLogger();
    const sentinel = s.make(options(proxy.url(redis.url), log));
    await failsAs(sentinel, log, 'timeout', 2);
    proxy.setMode('reset');
    await failsAs(sentinel, log, 'connect', 4);
    proxy.setMode('pass');
    const changes = () => log.fleet().filter((l) => 'redisError' in l.fields).map((l) => [l.level, l.fields.redisError]);
    // The readout changes at once; its log line reaches the JavaScript thread after it: wait for both.
    await pollUntil(() => sentinel.fleet().redisError === null && sentinel.fleet().liveNodes === 1 && changes().length >= 3, {
      ms: 10000,
      label: () => `Redis answering again, and its line logged; ${fmt(sentinel)}; lines ${JSON.stringify(changes())}`,
    });
    assert.deepEqual(changes(), [['error', 'timeout'], ['error', 'connect'], ['info', null]]);
  });
});

describe('connections', { concurrency: true }, () => {
  test('a server that closes idle connections (timeout 2) costs a reconnect, not an error', async (t) => {
    const s = scope(t);
    const redis = await s.redis({ args: ['--timeout', '2'] });
    const connectionsAt = async () => Number(/total_connections_received:(\d+)/.exec(await redis.command('INFO', 'stats'))[1]);
    const before = await connectionsAt();
    const sentinel = s.make({
      // leaseSeconds 9: a renewal every 3 s (± 10 %), longer than the server's 2 s idle timeout
      budget: { unverifiedUnits: 240, maxUnitsPerSecond: 50, fleet: { redis: redis.url, name: fleetName(), maxNodes: 3, leaseSeconds: 9, maxSplitSeconds: 0 } },
      refresh: { minIntervalMs: 20, maxIntervalMs: 40, timeoutMs: 200 },
      authority: { inspect: async () => 'valid' },
    });
    await pollUntil(async () => (await connectionsAt()) - before >= 4, {
      ms: 20000,
      label: () => `four connections (three after idle closes); ${fmt(sentinel)}`,
    });
    assert.equal(errorsTotal(sentinel), 0, `no error counted: ${sentinel.metrics()}`);
    assert.equal(sentinel.fleet().redisError, null);
  });

  test('close() after the connection was reset re-opens it and releases the grant', async (t) => {
    const s = scope(t);
    const redis = await s.redis();
    const proxy = await s.proxy(redis.port);
    const name = fleetName();
    const sentinel = s.make({
      budget: { unverifiedUnits: 240, maxUnitsPerSecond: 50, fleet: { redis: proxy.url(redis.url), name, maxNodes: 3, leaseSeconds: 5, maxSplitSeconds: 0 } },
      refresh: { minIntervalMs: 20, maxIntervalMs: 40, timeoutMs: 200 },
      authority: { inspect: async () => 'valid' },
    });
    await pollUntil(() => sentinel.fleet().mode === 'leased', { ms: 15000, label: () => `leased; ${fmt(sentinel)}` });
    proxy.setMode('reset'); // every connection is destroyed...
    proxy.setMode('pass'); // ...and new ones pass again
    const connections = proxy.connections;
    const closing = sentinel.close();
    assert.ok(closing instanceof Promise, 'close() returns a Promise');
    assert.equal(sentinel.admit(0), false, 'admission stops at close()');
    await withTimeout(closing, 15000, 'close() to resolve');
    // (done within the call's second: src/fleet/close_tests.rs, on fake time)
    assert.equal(connections, 0, 'the reset left no connection open: the release had to open one');
    const state = await redis.command('HGETALL', `{spend-sentinel:${name}}`);
    const fields = state.filter((_, i) => i % 2 === 0);
    assert.deepEqual(fields.filter((f) => f.startsWith('n:')), [], `no lease left: ${JSON.stringify(state)}`);
    assert.equal(fields.filter((f) => f.startsWith('t:')).length, 1, 'the node is remembered as released');
  });
});

function approx(actual, expected, what, eps = 1e-6) {
  assert.ok(Math.abs(actual - expected) <= eps * Math.max(1, Math.abs(expected)), `${what}: ${actual}, expected ${expected}`);
}
