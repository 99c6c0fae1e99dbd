// The fleet-wide budget leased from Redis (`budget.fleet`), one process, against a real
// redis-server (helpers/redis.mjs) and scripted `inspect` authorities, so the authority can be cut
// at a known moment. Multi-process scenarios are in fleet-processes.spec.mjs.
//
// Numbers: b = 240, r = 50/s, maxNodes 3, reserve 0.25 → floor 20 units (window 0.4 s), pool 180.
// Refresh pauses 20–40 ms with a 250 ms timeout fit any window from 0.29 s up. leaseSeconds 5
// (the minimum): a fresh fleet runs on floors for 7.15 s; a lease is usable 5 × 0.97 − 1 = 3.85 s
// after its request was sent; renewals every 5/3 s ± 10 %.
//
// Synchronisation: waits poll `fleet()` (pollUntil, generous bounds) or wait for transitions and
// inspect calls; fixed timers only to assert that something does NOT happen (quietPeriod) or to let
// a moment pass (untilPast). No assertion bounds how long something took: a Redis call giving up
// after 1 s and close() being done 1 s after asking Redis are tested on fake time in
// src/fleet/close_tests.rs; the grant lapsing at its deadline in src/rules/sentinel_state.rs. The
// lease tests run concurrently (each has its own redis-server), so cleanup is per test.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { stoppedBy } from './helpers/redis.mjs';
import { crossCheck, readExposition } from './helpers/exposition.mjs';
import {
  catchError,
  cleanups,
  closedPort,
  held,
  now,
  pollUntil,
  quietPeriod,
  recordTransitions,
  scriptedAuthority,
  sentinelPool,
  sequence,
  untilPast,
  withTimeout,
} from './helpers/wait.mjs';
import { B, R, MAX_NODES, RESERVE, LEASE, MAX_SPLIT, FLOOR, POOL, REFRESH, HOLD_MS, LEASE_VALID_MS, READOUT_MS } from './helpers/fleet-numbers.mjs';

const { Sentinel } = createRequire(import.meta.url)('../js/main.js');

const GRANT_WAIT_MS = HOLD_MS + 8000; // generous bound for a fresh fleet's first grant
const FLEET_KEYS = ['beyondMaxNodes', 'chargedUnits', 'configured', 'floorUnits', 'grantUnits', 'growthHeld', 'leaseRemainingSeconds', 'leaseSeconds', 'liveNodes', 'maxNodes', 'maxSplitSeconds', 'mode', 'nodeBudgetUnits', 'redisError', 'reserve'];
const MODES = ['connecting', 'leased', 'floor'];

const PW = `pw${randomBytes(12).toString('hex')}`;
const fixture = (name) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const [CA, CERT, KEY] = ['ca.pem', 'server-cert.pem', 'server-key.pem'].map(fixture);
const PW_FORMS = {
  raw: PW,
  base64: Buffer.from(PW).toString('base64'),
  'base64 of user:pw': Buffer.from(`fleetuser:${PW}`).toString('base64'),
  hex: Buffer.from(PW).toString('hex'),
};

let names = 0;
const fleetName = () => `ss-test:${process.pid}.${(names += 1)}`;

/** Per-test resources, released LIFO after the test whatever it asserted. */
function scope(t) {
  const defer = cleanups(t);
  const pool = sentinelPool(Sentinel);
  defer(() => pool.closeAll());
  return {
    defer,
    make: (options) => pool.make(options),
    ...stoppedBy(defer),
    /**
     * Records { t, f: fleet(), status, after } every `everyMs` until the test ends: `t` just before
     * the reads and `after` just after, so each read happened in [t, after] however slow the machine.
     */
    watch(sentinel, everyMs = 10) {
      const samples = [];
      const take = () => samples.push({ t: now(), f: sentinel.fleet(), status: sentinel.status(), after: now() });
      take();
      const timer = setInterval(take, everyMs);
      defer(() => clearInterval(timer));
      return samples;
    },
  };
}

/** Options for a fleet sentinel; `over.budget` / `over.fleet` are merged (undefined deletes a key). */
function fleetOptions(auth, redis, over = {}) {
  const fleet = prune({ redis, name: fleetName(), maxNodes: MAX_NODES, reserve: RESERVE, leaseSeconds: LEASE, maxSplitSeconds: MAX_SPLIT, ...over.fleet });
  const budget = prune({ unverifiedUnits: B, maxUnitsPerSecond: R, ...over.budget, fleet });
  const { budget: _b, fleet: _f, ...rest } = over;
  return { budget, refresh: REFRESH, authority: { inspect: auth.inspect }, ...rest };
}
const prune = (o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

const approx = (actual, expected, what, eps = 1e-6) =>
  assert.ok(Math.abs(actual - expected) <= eps * Math.max(1, Math.abs(expected)), `${what}: ${actual}, expected ${expected}`);

const fmt = (f) => (f ? `${f.mode} grant=${f.grantUnits} nb=${f.nodeBudgetUnits} lease=${f.leaseRemainingSeconds}` : String(f));

/** The fleet families of `sentinel.metrics()`, read strictly. */
function fleetMetrics(sentinel) {
  const text = sentinel.metrics();
  const families = readExposition(text);
  crossCheck(text, families);
  const fam = (name) => families.get(name);
  const one = (name) => fam(name)?.samples[0]?.value;
  return {
    families,
    grant: one('spend_sentinel_fleet_grant_units'),
    floor: one('spend_sentinel_fleet_floor_units'),
    live: one('spend_sentinel_fleet_live_nodes'),
    charged: one('spend_sentinel_fleet_charged_units'),
    held: one('spend_sentinel_fleet_growth_held'),
    mode: Object.fromEntries((fam('spend_sentinel_fleet_mode')?.samples ?? []).map((s) => [s.labels.mode, s.value])),
    errors: (fam('spend_sentinel_fleet_redis_errors_total')?.samples ?? []).reduce((sum, s) => sum + s.value, 0),
  };
}

/** Polls until `fleet().mode` is `mode`; resolves with that fleet() object. */
function untilMode(sentinel, mode, ms = GRANT_WAIT_MS) {
  return pollUntil(() => (sentinel.fleet()?.mode === mode ? sentinel.fleet() : null), {
    ms,
    label: () => `fleet mode ${mode}; now ${fmt(sentinel.fleet())}, readiness ${JSON.stringify(sentinel.readiness())}`,
  });
}

/** A fleet() and nodeBudgetUnits read with no renewal in between (two equal fleet() around the getter). */
async function stableRead(sentinel) {
  return pollUntil(() => {
    const a = sentinel.fleet();
    const getter = sentinel.nodeBudgetUnits;
    const w = sentinel.staleWindowSeconds;
    const b = sentinel.fleet();
    return a.grantUnits === b.grantUnits && a.mode === b.mode ? { f: a, getter, w } : null;
  }, { ms: 10000, label: 'a stable fleet() read' });
}

/**
 * The first sample (of `scope.watch`) that is not leased although it was read before the deadline
 * of the last leased sample before it: its deadline is at least that sample's `t` + its
 * leaseRemainingSeconds. Undefined if the grant was never dropped early.
 */
function droppedBeforeDeadline(samples) {
  let deadline = -Infinity;
  for (const x of samples) {
    if (x.f.mode === 'leased') deadline = deadlineBounds(x).low;
    else if (x.after < deadline) return { ...x, deadline };
  }
  return undefined;
}

/**
 * Bounds of the lease deadline a leased sample shows: it was read between `t` and `after`, and
 * leaseRemainingSeconds is the time left rounded up to the millisecond (READOUT_MS).
 */
function deadlineBounds(x) {
  const left = x.f.leaseRemainingSeconds * 1000;
  return { low: x.t + left - READOUT_MS, high: x.after + left };
}

/**
 * Asserts that `calls` never wait on Redis, whatever the machine's speed. Redis must be unable to
 * answer (stopped, or paused for scripts) until this resolves, and the sentinel must reach it
 * through `proxy`: each of its Redis calls then ends only at its timeout, which the error counter
 * counts. When the proxy sees a call leave (bytes sent: a call is in flight), `rounds` rounds of
 * `calls` run with nothing awaited in between. A round during which the error count did not move
 * saw no Redis call end, so none of its calls waited for one (a waiting call returns only once the
 * call in flight has ended). A round that met a timeout by chance proves nothing: it is tried again
 * on the next call, until `proofs` rounds proved it (the bound on tries only ends a hang).
 */
async function assertNeverWaitsOnRedis(sentinel, proxy, calls, { rounds = 500, proofs = 3 } = {}) {
  const errors = () => fleetMetrics(sentinel).errors;
  let proved = 0;
  let tries = 0;
  while (proved < proofs) {
    assert.ok(tries < 30, `in ${tries} rounds started while a Redis call was in flight, only ${proved} saw no call end`);
    tries += 1;
    await proxy.nextReceived({ ms: 20000 });
    const ended = errors();
    for (let i = 0; i < rounds; i += 1) for (const call of calls) call();
    if (errors() === ended) proved += 1;
  }
  return { proved, tries };
}

// ---- options ---------------------------------------------------------------------------------

describe('budget.fleet options', () => {
  let url;
  const ENV_OK = `SS_TEST_FLEET_URL_${randomBytes(3).toString('hex').toUpperCase()}`;
  const ENV_BAD = `${ENV_OK}_BAD`;
  const ENV_UNSET = `${ENV_OK}_UNSET`;
  const base = () => ({ redis: url, name: 'fleet-a', maxNodes: 3 });

  /** [label, budget fields (incl. fleet), expected start of the message (string or RegExp)] */
  const BAD = [
    ['fleet not an object', () => ({ fleet: url }), 'budget.fleet'],
    ['fleet null', () => ({ fleet: null }), 'budget.fleet'],
    ['name missing', () => ({ fleet: { ...base(), name: undefined } }), 'budget.fleet.name'],
    ['name empty', () => ({ fleet: { ...base(), name: '' } }), 'budget.fleet.name'],
    ['name 101 characters', () => ({ fleet: { ...base(), name: 'n'.repeat(101) } }), 'budget.fleet.name'],
    ['name with a space', () => ({ fleet: { ...base(), name: 'a b' } }), 'budget.fleet.name'],
    ['name with a slash', () => ({ fleet: { ...base(), name: 'a/b' } }), 'budget.fleet.name'],
    ['name with a brace (hash tag)', () => ({ fleet: { ...base(), name: 'a{b}' } }), 'budget.fleet.name'],
    ['name non-ASCII', () => ({ fleet: { ...base(), name: 'flotte-é' } }), 'budget.fleet.name'],
    ['name a number', () => ({ fleet: { ...base(), name: 42 } }), 'budget.fleet.name'],
    ['maxNodes missing', () => ({ fleet: { ...base(), maxNodes: undefined } }), 'budget.fleet.maxNodes'],
    ['maxNodes 0', () => ({ fleet: { ...base(), maxNodes: 0 } }), 'budget.fleet.maxNodes'],
    ['maxNodes -1', () => ({ fleet: { ...base(), maxNodes: -1 } }), 'budget.fleet.maxNodes'],
    ['maxNodes 1.5', () => ({ fleet: { ...base(), maxNodes: 1.5 } }), 'budget.fleet.maxNodes'],
    ['maxNodes a string', () => ({ fleet: { ...base(), maxNodes: '3' } }), 'budget.fleet.maxNodes'],
    ['maxNodes NaN', () => ({ fleet: { ...base(), maxNodes: NaN } }), 'budget.fleet.maxNodes'],
    ['maxNodes Infinity', () => ({ fleet: { ...base(), maxNodes: Infinity } }), 'budget.fleet.maxNodes'],
    ['reserve negative', () => ({ fleet: { ...base(), reserve: -0.01 } }), 'budget.fleet.reserve'],
    ['reserve 1', () => ({ fleet: { ...base(), reserve: 1 } }), 'budget.fleet.reserve'],
    ['reserve 1.5', () => ({ fleet: { ...base(), reserve: 1.5 } }), 'budget.fleet.reserve'],
    ['reserve NaN', () => ({ fleet: { ...base(), reserve: NaN } }), 'budget.fleet.reserve'],
    ['reserve a string', () => ({ fleet: { ...base(), reserve: '0.25' } }), 'budget.fleet.reserve'],
    ['leaseSeconds 4.9', () => ({ fleet: { ...base(), leaseSeconds: 4.9 } }), 'budget.fleet.leaseSeconds'],
    ['leaseSeconds 601', () => ({ fleet: { ...base(), leaseSeconds: 601 } }), 'budget.fleet.leaseSeconds'],
    ['leaseSeconds 0', () => ({ fleet: { ...base(), leaseSeconds: 0 } }), 'budget.fleet.leaseSeconds'],
    ['leaseSeconds NaN', () => ({ fleet: { ...base(), leaseSeconds: NaN } }), 'budget.fleet.leaseSeconds'],
    ['leaseSeconds a string', () => ({ fleet: { ...base(), leaseSeconds: '30' } }), 'budget.fleet.leaseSeconds'],
    ['redis http:// scheme', () => ({ fleet: { ...base(), redis: `http://fleetuser:${PW}@127.0.0.1:6379` } }), 'budget.fleet.redis'],
    ['redis ftp:// scheme', () => ({ fleet: { ...base(), redis: `ftp://fleetuser:${PW}@127.0.0.1/` } }), 'budget.fleet.redis'],
    ['redis without a scheme', () => ({ fleet: { ...base(), redis: '127.0.0.1:6379' } }), 'budget.fleet.redis'],
    ['redis unparsable port', () => ({ fleet: { ...base(), redis: `redis://fleetuser:${PW}@127.0.0.1:notaport` } }), 'budget.fleet.redis'],
    ['redis empty', () => ({ fleet: { ...base(), redis: '' } }), 'budget.fleet.redis'],
    ['redis a number', () => ({ fleet: { ...base(), redis: 6379 } }), 'budget.fleet.redis'],
    ['redisEnv names an unset variable', () => ({ fleet: { ...base(), redis: undefined, redisEnv: ENV_UNSET } }), 'budget.fleet.redisEnv'],
    ['redisEnv holds a bad scheme', () => ({ fleet: { ...base(), redis: undefined, redisEnv: ENV_BAD } }), 'budget.fleet.redisEnv'],
    ['redis and redisEnv both', () => ({ fleet: { ...base(), redisEnv: ENV_OK } }), /^budget\.fleet(\.redis|\.redisEnv)?\b/],
    ['neither redis nor redisEnv', () => ({ fleet: { ...base(), redis: undefined } }), /^budget\.fleet(\.redis|\.redisEnv)?\b/],
    ['fleet with budget.nodes', () => ({ nodes: 2, fleet: base() }), /^budget\.(fleet|nodes)\b/],
    ['fleet with budget.share', () => ({ share: 0.5, fleet: base() }), /^budget\.(fleet|share)\b/],
    ['unknown key in fleet', () => ({ fleet: { ...base(), ttl: 30 } }), 'budget.fleet.ttl'],
    ['tls with a redis:// URL', () => ({ fleet: { ...base(), tls: { ca: CA } } }), 'budget.fleet.tls'],
    ['tls not an object', () => ({ fleet: { ...tlsBase(), tls: CA } }), 'budget.fleet.tls'],
    ['tls.ca not PEM', () => ({ fleet: { ...tlsBase(), tls: { ca: 'not a certificate' } } }), 'budget.fleet.tls.ca'],
    ['tls.cert without tls.key', () => ({ fleet: { ...tlsBase(), tls: { cert: CERT } } }), 'budget.fleet.tls.key'],
    ['tls.cert not PEM', () => ({ fleet: { ...tlsBase(), tls: { cert: 'x', key: KEY } } }), 'budget.fleet.tls.cert'],
    ['tls.key not a key', () => ({ fleet: { ...tlsBase(), tls: { cert: CERT, key: CA } } }), 'budget.fleet.tls.key'],
    ['unknown key in tls', () => ({ fleet: { ...tlsBase(), tls: { ca: CA, insecure: true } } }), 'budget.fleet.tls.insecure'],
  ];

  const ACCEPTED = [
    ['defaults (reserve, leaseSeconds)', () => ({ fleet: base() })],
    ['rediss:// with user, password and db', () => ({ fleet: { ...base(), redis: url.replace('redis://', 'rediss://') } })],
    ['redisEnv', () => ({ fleet: { ...base(), redis: undefined, redisEnv: ENV_OK } })],
    ['name of 100 allowed characters', () => ({ fleet: { ...base(), name: `Az09_.:-${'x'.repeat(92)}` } })],
    ['maxNodes 1, reserve 0, leaseSeconds 5', () => ({ fleet: { ...base(), maxNodes: 1, reserve: 0, leaseSeconds: 5 } })],
    ['reserve 0.99, leaseSeconds 600', () => ({ fleet: { ...base(), reserve: 0.99, leaseSeconds: 600 } })],
    ['rediss:// with tls ca, cert and key', () => ({ fleet: { ...tlsBase(), tls: { ca: CA, cert: CERT, key: KEY } } })],
    ['rediss:// with tls ca only', () => ({ fleet: { ...tlsBase(), tls: { ca: CA } } })],
  ];
  const tlsBase = () => ({ ...base(), redis: url.replace('redis://', 'rediss://') });

  const build = (budgetFields) => {
    const { fleet, ...rest } = budgetFields;
    const budget = { unverifiedUnits: B, maxUnitsPerSecond: R, ...rest };
    if (fleet !== undefined) budget.fleet = fleet && typeof fleet === 'object' ? prune(fleet) : fleet;
    return { budget, refresh: REFRESH, authority: { inspect: async () => 'valid' } };
  };

  before(async () => {
    // a closed port: nothing listens there (construction must not need Redis anyway)
    url = `redis://fleetuser:${PW}@127.0.0.1:${await closedPort()}/2`;
    process.env[ENV_OK] = url;
    process.env[ENV_BAD] = `http://fleetuser:${PW}@127.0.0.1:1/`;
  });
  after(() => {
    delete process.env[ENV_OK];
    delete process.env[ENV_BAD];
  });

  for (const [label, fields, path] of BAD) {
    test(`refused: ${label}`, (t) => {
      const s = scope(t);
      const err = catchError(() => s.make(build(fields())));
      assert.ok(err instanceof Error, `expected an Error, got ${inspect(err)}`);
      assert.equal(err.code, 'ERR_SPEND_SENTINEL_CONFIG', `code of: ${err.message}`);
      if (typeof path === 'string') assert.ok(err.message.startsWith(path), `message must start with ${path}: ${err.message}`);
      else assert.match(err.message, path);
      if (typeof path === 'string' && !path.endsWith('fleet')) {
        const next = err.message[path.length];
        assert.ok(next === ':' || next === ' ', `the path is ${path}, not a longer one: ${err.message}`);
      }
      assertNoPassword(`${err.message}\n${err.stack}\n${inspect(err, { showHidden: true, depth: 5 })}`, label);
    });
  }

  for (const [label, fields] of ACCEPTED) {
    test(`accepted: ${label}`, (t) => {
      const s = scope(t);
      const sentinel = s.make(build(fields()));
      assert.equal(sentinel.fleet().mode, 'connecting');
    });
  }
});

function assertNoPassword(text, where) {
  for (const [form, needle] of Object.entries(PW_FORMS)) {
    assert.ok(!String(text).includes(needle), `${where} leaks the Redis password (${form}): ${String(text).slice(0, 600)}`);
  }
}

// ---- fleet() and the floor, without a grant ---------------------------------------------------

// Independent tests (per-test scope, own Redis or none): run together, so the absence checks
// (quietPeriod) of two of them overlap.
describe('fleet() and the floor (no grant)', { concurrency: true }, () => {
  test('fleet() is null without a fleet', (t) => {
    const s = scope(t);
    const auth = scriptedAuthority('valid');
    assert.equal(s.make({ budget: { unverifiedUnits: B, maxUnitsPerSecond: R }, refresh: REFRESH, authority: { inspect: auth.inspect } }).fleet(), null);
    assert.equal(s.make({ budget: { unverifiedUnits: B, maxUnitsPerSecond: R, nodes: 3 }, refresh: REFRESH, authority: { inspect: auth.inspect } }).fleet(), null);
  });

  const FLOORS = [
    // b, reserve (undefined: default 0.25), maxNodes, floor
    [240, undefined, 3, 20],
    [240, 0, 2, 0],
    [1000, 0.5, 8, 62.5],
    [240, 0.9, 1, 216],
  ];
  for (const [b, reserve, maxNodes, floor] of FLOORS) {
    test(`floorUnits = b × reserve / maxNodes: ${b} × ${reserve ?? 'default 0.25'} / ${maxNodes} = ${floor}; connecting before Redis answers`, async (t) => {
      const s = scope(t);
      const auth = scriptedAuthority('valid');
      const sentinel = s.make(
        fleetOptions(auth, `redis://127.0.0.1:${await closedPort()}`, { budget: { unverifiedUnits: b }, fleet: { reserve, maxNodes } }),
      );
      const f = sentinel.fleet();
      assert.deepEqual(Object.keys(f).sort(), FLEET_KEYS);
      assert.equal(f.mode, 'connecting');
      // Before Redis answers, the fleet's shape is this node's own.
      const own = { maxNodes, reserve: reserve ?? 0.25, leaseSeconds: 5, maxSplitSeconds: MAX_SPLIT };
      assert.deepEqual([f.maxNodes, f.reserve, f.leaseSeconds, f.beyondMaxNodes], [own.maxNodes, own.reserve, own.leaseSeconds, false]);
      assert.deepEqual(f.configured, own);
      approx(f.floorUnits, floor, 'floorUnits');
      assert.equal(f.grantUnits, 0);
      approx(f.nodeBudgetUnits, floor, 'nodeBudgetUnits');
      assert.equal(f.leaseRemainingSeconds, 0);
      // decided: before any answer from Redis, liveNodes and chargedUnits are null or 0
      assert.ok(f.liveNodes === null || f.liveNodes === 0, `liveNodes ${f.liveNodes}`);
      assert.ok(f.chargedUnits === null || f.chargedUnits === 0, `chargedUnits ${f.chargedUnits}`);
      approx(sentinel.nodeBudgetUnits, floor, 'nodeBudgetUnits getter');
    });
  }

  test('an unreachable Redis at start is not a config error: connecting, the node runs on its floor', async (t) => {
    const s = scope(t);
    const auth = scriptedAuthority(sequence(['valid'], 'indeterminate'));
    const sentinel = s.make(fleetOptions(auth, `redis://127.0.0.1:${await closedPort()}`));
    const transitions = recordTransitions(sentinel);
    await transitions.waitFor({ to: 'ready' });
    assert.equal(sentinel.fleet().mode, 'connecting');
    approx(sentinel.nodeBudgetUnits, FLOOR, 'nodeBudgetUnits (the floor)');
    approx(sentinel.staleWindowSeconds, FLOOR / R, 'staleWindowSeconds (floor / r)');
    assert.equal(sentinel.admit(FLOOR), true, 'the floor is admitted');
    assert.equal(sentinel.admit(1), false, 'nothing beyond the floor');
    await quietPeriod(1500); // longer than one bounded Redis call: still nothing answered
    assert.equal(sentinel.fleet().mode, 'connecting');
  });

  test('reserve 0 and no grant: not_ready / no_fleet_lease, after no_evidence', async (t) => {
    const s = scope(t);
    const auth = scriptedAuthority('valid');
    auth.hold();
    const sentinel = s.make(fleetOptions(auth, `redis://127.0.0.1:${await closedPort()}`, { fleet: { reserve: 0 } }));
    const first = await auth.call(0);
    assert.deepEqual(pick(sentinel.readiness()), { status: 'not_ready', reason: 'no_evidence', httpStatus: 503 });
    auth.set('valid');
    first.release('valid');
    await pollUntil(() => sentinel.readiness().reason === 'no_fleet_lease', {
      ms: 3000,
      label: () => `reason no_fleet_lease; readiness ${JSON.stringify(sentinel.readiness())}`,
    });
    assert.deepEqual(pick(sentinel.readiness()), { status: 'not_ready', reason: 'no_fleet_lease', httpStatus: 503 });
    assert.equal(sentinel.admit(1), false);
    const f = sentinel.fleet();
    assert.deepEqual([f.mode, f.floorUnits, f.grantUnits, f.nodeBudgetUnits], ['connecting', 0, 0, 0]);
  });

  test('before Redis answers the mode is connecting; once it does (fresh fleet): floor', async (t) => {
    const s = scope(t);
    const redis = await s.redis();
    const proxy = await s.proxy(redis.port);
    proxy.setMode('blackhole');
    const auth = scriptedAuthority('valid');
    const sentinel = s.make(fleetOptions(auth, proxy.url(redis.url)));
    await sentinel.whenReady({ timeoutMs: 3000 });
    await quietPeriod(1500);
    assert.equal(sentinel.fleet().mode, 'connecting', 'Redis (behind a blackhole) never answered');
    approx(sentinel.nodeBudgetUnits, FLOOR, 'on the floor');
    proxy.setMode('pass');
    const f = await untilMode(sentinel, 'floor', 10000);
    assert.equal(f.grantUnits, 0, 'a fresh fleet grants nothing yet');
    assert.equal(typeof f.liveNodes, 'number');
    assert.equal(typeof f.chargedUnits, 'number');
  });

  test('metrics: the fleet families, mode one-hot, Redis errors counted', async (t) => {
    const s = scope(t);
    const auth = scriptedAuthority('valid');
    const sentinel = s.make(fleetOptions(auth, `redis://127.0.0.1:${await closedPort()}`));
    const m = fleetMetrics(sentinel);
    const types = Object.fromEntries([...m.families].map(([name, f]) => [name, f.type]));
    for (const name of ['grant_units', 'floor_units', 'live_nodes', 'charged_units', 'mode']) {
      assert.equal(types[`spend_sentinel_fleet_${name}`], 'gauge', `spend_sentinel_fleet_${name} is a gauge`);
    }
    assert.equal(types.spend_sentinel_fleet_redis_errors_total, 'counter');
    assert.deepEqual(Object.keys(m.mode).sort(), [...MODES].sort(), 'one mode series per mode');
    assert.deepEqual(m.mode, { connecting: 1, leased: 0, floor: 0 });
    assert.equal(m.grant, 0);
    approx(m.floor, FLOOR, 'floor_units');
    for (const s2 of m.families.get('spend_sentinel_fleet_redis_errors_total').samples) {
      assert.deepEqual(Object.keys(s2.labels), ['kind'], 'errors carry exactly a kind label');
    }
    await pollUntil(() => fleetMetrics(sentinel).errors > 0, { ms: 5000, label: 'a Redis error counted (connection refused)' });
  });

  test('the Redis password never appears in errors, fleet(), readiness, metrics, logs, inspect or JSON', async (t) => {
    const s = scope(t);
    const redis = await s.redis({ user: 'fleetuser', password: PW });
    const lines = [];
    const logger = {};
    for (const level of ['info', 'warn', 'error']) logger[level] = (obj, msg) => lines.push({ level, obj, msg });
    const good = `redis://fleetuser:${PW}@127.0.0.1:${redis.port}/0`;
    const wrong = `redis://fleetuser:${PW}x@127.0.0.1:${redis.port}/0`;
    const unreachable = `redis://fleetuser:${PW}@127.0.0.1:${await closedPort()}/0`;
    const env = `SS_TEST_FLEET_SECRET_${randomBytes(3).toString('hex').toUpperCase()}`;
    process.env[env] = good;
    s.defer(() => delete process.env[env]);

    const auth = scriptedAuthority('valid');
    const make = (fleet) => {
      const sentinel = s.make({ ...fleetOptions(auth, undefined, { fleet }), logger });
      const events = recordTransitions(sentinel).events;
      return { sentinel, events };
    };
    const goodOne = make({ redis: good });
    const envOne = make({ redis: undefined, redisEnv: env });
    const wrongOne = make({ redis: wrong });
    const deadOne = make({ redis: unreachable });

    await untilMode(goodOne.sentinel, 'floor', 10000); // authenticated: Redis answered
    await untilMode(envOne.sentinel, 'floor', 10000);
    await pollUntil(() => fleetMetrics(wrongOne.sentinel).errors > 0 && fleetMetrics(deadOne.sentinel).errors > 0, {
      ms: 5000,
      label: 'Redis errors counted for the wrong password and the closed port',
    });
    assert.notEqual(wrongOne.sentinel.fleet().mode, 'leased');

    for (const [what, { sentinel, events }] of Object.entries({ goodOne, envOne, wrongOne, deadOne })) {
      const views = {
        'fleet()': inspect(sentinel.fleet()),
        readiness: inspect(sentinel.readiness()),
        metrics: sentinel.metrics(),
        metricFamilies: inspect(sentinel.metricFamilies(), { depth: 10 }),
        'util.inspect': inspect(sentinel, { showHidden: true, depth: 5, getters: true }),
        'JSON.stringify': (() => {
          try {
            return String(JSON.stringify(sentinel));
          } catch (err) {
            return `${err.message}\n${err.stack}`;
          }
        })(),
        String: String(sentinel),
        events: inspect(events, { depth: 5 }),
      };
      for (const [view, text] of Object.entries(views)) assertNoPassword(text, `${what}: ${view}`);
      await sentinel.close();
    }
    assertNoPassword(inspect(lines, { depth: 10 }), 'log lines');
  });
});

const pick = ({ status, reason, httpStatus }) => ({ status, reason, httpStatus });

// ---- leases (each test ≥ 7 s: a fresh fleet's hold; they run concurrently) ---------------------

describe('leases against a real Redis', { concurrency: true }, () => {
  // The hold is maxSplitSeconds + leaseSeconds × 1.03 + 2 s: 7.15 s without a split, 9.15 s with 2 s.
  for (const [maxStaleSeconds, maxSplitSeconds] of [[undefined, MAX_SPLIT], [2, 2]]) {
    const want = maxStaleSeconds === undefined ? Infinity : R * maxStaleSeconds - FLOOR;
    const expectedGrant = Math.min(POOL, want);
    const holdMs = HOLD_MS + (maxSplitSeconds - MAX_SPLIT) * 1000;
    test(`fresh fleet: floors for maxSplitSeconds (${maxSplitSeconds}) + leaseSeconds × 1.03 + 2 s and until a valid refresh sent after that settles it; then grant ${expectedGrant} (maxStaleSeconds ${maxStaleSeconds ?? 'none'})`, async (t) => {
      const s = scope(t);
      const redis = await s.redis();
      // Call 0 answers valid; every later call stays pending (and times out) until set('valid'):
      // by construction no valid refresh is sent after the hold began until the test says so,
      // however slow the machine.
      const auth = scriptedAuthority(sequence(['valid'], held));
      const t0 = now();
      const sentinel = s.make(fleetOptions(auth, redis.url, { budget: { maxStaleSeconds }, fleet: { maxSplitSeconds } }));
      const samples = s.watch(sentinel);
      await untilMode(sentinel, 'floor', 10000); // Redis answered: a fresh fleet, no grant
      const answeredBy = now(); // the hold began at that answer, so it ends by answeredBy + holdMs
      assert.equal(fleetMetrics(sentinel).held, 1, 'a fresh fleet shows its hold in the metrics');
      await untilPast(answeredBy + holdMs);
      // Absence: the hold is over, and with valid refreshes a grant would follow at once (a valid
      // refresh that may end a hold starts a renewal); without one, none comes.
      await quietPeriod(1000);
      const early = samples.find((x) => x.f.mode === 'leased' || x.f.grantUnits > 0);
      assert.equal(early, undefined, `a grant before a valid refresh after the hold: ${early && fmt(early.f)} at ${early && (early.t - t0).toFixed(0)} ms`);

      const validAt = now();
      auth.set('valid');
      await untilMode(sentinel, 'leased');
      const first = samples.find((x) => x.f.mode === 'leased');
      const grantedAt = first ? first.t : now();
      assert.ok(grantedAt - t0 >= holdMs, `first grant ${(grantedAt - t0).toFixed(0)} ms after start`);
      assert.ok(grantedAt >= validAt, 'the first grant came before any valid refresh after the hold');
      assert.ok(
        auth.calls.some((c) => c.startedAt >= validAt && c.settledAt !== null && c.settledAt <= grantedAt),
        'no valid refresh sent after the hold settled before the grant',
      );

      const { f, getter, w } = await stableRead(sentinel);
      assert.deepEqual(Object.keys(f).sort(), FLEET_KEYS);
      assert.equal(f.mode, 'leased');
      assert.ok(f.grantUnits > 0);
      approx(f.grantUnits, expectedGrant, 'grantUnits (one live node: min(pool, want))', 1e-3);
      approx(f.floorUnits, FLOOR, 'floorUnits');
      approx(f.nodeBudgetUnits, FLOOR + f.grantUnits, 'nodeBudgetUnits = floor + grant');
      approx(getter, f.nodeBudgetUnits, 'the nodeBudgetUnits getter agrees');
      approx(w, Math.min(f.nodeBudgetUnits / R, maxStaleSeconds ?? Infinity), 'staleWindowSeconds = node budget / r, capped');
      assert.ok(f.leaseRemainingSeconds > 0 && f.leaseRemainingSeconds <= LEASE_VALID_MS / 1000 + 0.01, `leaseRemainingSeconds ${f.leaseRemainingSeconds}`);
      assert.equal(f.liveNodes, 1);
      // Charged units are expired or released grants waiting to be settled: none in a fresh,
      // single-node fleet.
      assert.equal(f.chargedUnits, 0, `chargedUnits ${f.chargedUnits}`);
      for (const x of samples) {
        if (x.f.mode === 'leased') assert.ok(x.f.grantUnits > 0 && x.f.leaseRemainingSeconds > 0, `leased without a usable grant: ${fmt(x.f)}`);
        else assert.equal(x.f.grantUnits, 0, `grant outside leased: ${fmt(x.f)}`);
      }
      const firstAnswered = samples.findIndex((x) => x.f.mode !== 'connecting');
      assert.ok(samples.slice(firstAnswered).every((x) => x.f.mode !== 'connecting'), 'connecting only before Redis first answered');

      const m = await pollUntil(() => {
        const read = fleetMetrics(sentinel);
        return read.mode.leased === 1 ? read : null;
      }, { ms: 10000, label: 'metrics mode leased' });
      assert.deepEqual(m.mode, { connecting: 0, leased: 1, floor: 0 });
      approx(m.grant, expectedGrant, 'fleet_grant_units', 1e-3);
      approx(m.floor, FLOOR, 'fleet_floor_units');
      assert.equal(m.live, 1);
      assert.equal(m.charged, 0);
      assert.equal(m.held, 0, 'growth no longer held once settled');
    });
  }

  test('CLIENT PAUSE and reset connections: held calls give up as timeouts, resets count as connect errors, admit never waits on Redis, the lease recovers', async (t) => {
    const s = scope(t);
    const redis = await s.redis();
    const proxy = await s.proxy(redis.port);
    const auth = scriptedAuthority('valid');
    const sentinel = s.make(fleetOptions(auth, proxy.url(redis.url)));
    await untilMode(sentinel, 'leased');
    const errorsOf = (kind) =>
      readExposition(sentinel.metrics()).get('spend_sentinel_fleet_redis_errors_total').samples.find((x) => x.labels.kind === kind).value;
    // CLIENT PAUSE WRITE holds every script call until CLIENT UNPAUSE (which it lets through):
    // each renewal gives up as a timeout (after 1 s: src/fleet/close_tests.rs, on fake time).
    await redis.clientPause(600000, 'WRITE');
    await pollUntil(() => errorsOf('timeout') > 0, { ms: 15000, label: 'a renewal timing out under CLIENT PAUSE' });
    const proof = await assertNeverWaitsOnRedis(sentinel, proxy, [() => sentinel.admit(0)]);
    t.diagnostic(`admit never waited: ${proof.proved} of ${proof.tries} rounds ran while a call was in flight and none ended`);
    await redis.clientUnpause();
    // Then every connection is reset: connect errors, and the task reconnects once it passes.
    proxy.setMode('reset');
    await pollUntil(() => errorsOf('connect') > 0, { ms: 15000, label: 'a connect error while connections are reset' });
    proxy.setMode('pass');
    const passAt = now();
    const leased = await pollUntil(() => {
      const t1 = now();
      const f = sentinel.fleet();
      return f.mode === 'leased' && t1 + f.leaseRemainingSeconds * 1000 > passAt + LEASE_VALID_MS ? f : null;
    }, { ms: 20000, label: 'a lease renewed after the faults' });
    assert.ok(leased.grantUnits > 0);
  });

  test('default cadence follows the window: on its floor a node pauses for the floor\'s window, leased for the leased one', async (t) => {
    // No refresh options: pauses are drawn from [0.3 w, 0.5 w] of the moment. On the floor (a
    // fresh fleet's hold: w = 0.4 s, pauses 0.12–0.2 s, timeout 2 s) vs leased (w = 4 s, pauses
    // 1.2–2 s). The loop's timing itself (the jitter range, a running pause never lengthened, a
    // pause cut short before a lease deadline but never below the floor's shortest, no flap
    // through a lapse) is tested on fake time in src/refresher/cadence_tests.rs
    // (the_scaled_cadence_follows_the_window_of_the_moment_and_the_node_stays_ready_through_a_lapse);
    // this checks, with lower bounds only, that a fleet node without refresh options plans with
    // the window its real floor and lease give it. A pause runs from a call's answer (settledAt,
    // before the addon sees it) to the next call (startedAt, after the addon sent it).
    const floorPause = 0.3 * (FLOOR / R) * 1000; // 120 ms
    const leasedPause = 0.3 * ((FLOOR + POOL) / R) * 1000; // 1200 ms
    const halfFloorWindow = 0.5 * (FLOOR / R) * 1000; // a pause may be cut to end this long before the lease deadline
    const s = scope(t);
    const redis = await s.redis();
    const proxy = await s.proxy(redis.port);
    proxy.setMode('blackhole'); // Redis answers only once the node has refreshed on its floor a few times
    const auth = scriptedAuthority('valid');
    const { refresh: _r, ...options } = fleetOptions(auth, proxy.url(redis.url));
    const sentinel = s.make(options);
    const samples = s.watch(sentinel);
    await auth.call(3, 10000);
    proxy.setMode('pass');
    const passAt = now();
    await untilMode(sentinel, 'leased');
    const leasedAt = samples.find((x) => x.f.mode === 'leased')?.after ?? now();
    // The hold began at Redis's first answer, after passAt: on the floor all that time.
    assert.ok(leasedAt - passAt >= HOLD_MS, `leased ${(leasedAt - passAt).toFixed(0)} ms after Redis could first answer`);

    // Never a pause shorter than the floor's shortest, on the floor or leased.
    const pauses = auth.calls.slice(1).map((c, i) => ({ at: c.startedAt, ms: c.startedAt - auth.calls[i].settledAt }));
    const floorPauses = pauses.filter((p) => p.at < leasedAt);
    assert.ok(floorPauses.length >= 3, `${floorPauses.length} pauses on the floor`);
    const short = pauses.find((p) => !(p.ms >= floorPause - 1));
    assert.equal(short, undefined, `a pause of ${short?.ms.toFixed(1)} ms (the floor's shortest: ${floorPause} ms)`);

    // Leased, a pause lasts at least 0.3 × 4 s, unless cut short to end half the floor's window
    // before the lease deadline: wait for a call answered while the deadline was far enough off
    // that no cut could apply, and take the pause after it.
    for (let tries = 1; ; tries += 1) {
      const call = await auth.nextCall(10000);
      const next = await auth.nextCall(10000);
      const known = samples.findLast((x) => x.after <= call.settledAt);
      const deadline = known?.f.mode === 'leased' ? known.t + known.f.leaseRemainingSeconds * 1000 : -Infinity;
      if (deadline - halfFloorWindow >= call.settledAt + leasedPause) {
        const pause = next.startedAt - call.settledAt;
        assert.ok(pause >= leasedPause - 1, `a pause of ${pause.toFixed(0)} ms while leased (at least ${leasedPause} ms expected)`);
        break;
      }
      assert.ok(tries < 20, `no call answered with its lease deadline ${leasedPause + halfFloorWindow} ms off in ${tries} tries`);
    }
    assert.equal(sentinel.fleet().mode, 'leased');
  });

  test('close() with Redis stopped: admission stops at once, close() returns a Promise at once, which resolves while Redis is still stopped', async (t) => {
    // How long it takes (the release gives up 1 s after it was sent) is tested on fake time in
    // src/fleet/close_tests.rs; that the release reaches a running Redis, in fleet-faults.spec.mjs.
    const s = scope(t);
    const redis = await s.redis();
    const auth = scriptedAuthority('valid');
    const sentinel = s.make(fleetOptions(auth, redis.url));
    await untilMode(sentinel, 'leased');
    assert.equal(sentinel.admit(1), true);
    redis.pause();
    await redis.paused();
    const closing = sentinel.close();
    assert.ok(closing instanceof Promise, 'close() returns a Promise');
    assert.equal(sentinel.admit(1), false, 'admit after close()');
    assert.equal(sentinel.admit(0), false, 'admit(0) after close()');
    assert.equal(sentinel.readiness().reason, 'shutting_down');
    await withTimeout(closing, 15000, 'close() to resolve with Redis stopped');
    await redis.paused(); // still stopped: close() did not wait for Redis's answer
    assert.equal(sentinel.admit(1), false);
  });

  test('Redis stopped: admit/readiness never wait on it; the grant holds until the lease deadline, then floor, and the transition arrives', async (t) => {
    // r = 25 here: floor window 0.8 s, leased window 8 s, so the evidence (last valid at the pause)
    // outlives the lease deadline (≤ 3.85 s) while leased and is too old on the floor. How soon
    // after the deadline the grant is gone and the transition comes is the code's rule, tested on
    // fake time: a_fleet_node_runs_on_floor_plus_grant_until_the_lease_deadline
    // (src/rules/sentinel_state.rs: the deadline is the next expiry, not_ready at it) and the
    // refresher's transition watcher, woken at the next expiry (src/refresher/cadence_tests.rs).
    const r = 25;
    const s = scope(t);
    const redis = await s.redis();
    const proxy = await s.proxy(redis.port); // to see each Redis call of the sentinel leave
    const auth = scriptedAuthority('valid');
    const sentinel = s.make(fleetOptions(auth, proxy.url(redis.url), { budget: { maxUnitsPerSecond: r } }));
    const transitions = recordTransitions(sentinel);
    await untilMode(sentinel, 'leased');
    auth.set('indeterminate');
    await transitions.next({ to: 'degraded' }, { ms: 10000 });
    assert.equal(sentinel.admit(FLOOR + 10), true, 'more than the floor, under the leased budget');
    const errorsBefore = fleetMetrics(sentinel).errors;
    const samples = s.watch(sentinel);

    const notReady = transitions.next({ to: 'not_ready' }, { ms: LEASE_VALID_MS + 30000 });
    notReady.catch(() => {});
    redis.pause();
    await redis.paused();
    const stoppedAt = now(); // Redis answers nothing from here on
    const calls = [() => sentinel.admit(0), () => sentinel.readiness(), () => sentinel.status(), () => sentinel.fleet()];
    const proof = await assertNeverWaitsOnRedis(sentinel, proxy, calls);
    t.diagnostic(`no call waited: ${proof.proved} of ${proof.tries} rounds ran while a call was in flight and none ended`);
    await untilMode(sentinel, 'floor', LEASE_VALID_MS + 30000);
    const event = await notReady;

    // The last renewal answered was sent before Redis stopped, so its deadline is at most
    // stoppedAt + LEASE_VALID_MS; each leased sample bounds it from below (read after `t`).
    const leased = samples.filter((x) => x.f.mode === 'leased');
    const deadline = Math.max(...leased.map((x) => deadlineBounds(x).low)); // the last lease's, at least
    const latest = Math.max(...leased.map((x) => deadlineBounds(x).high));
    assert.ok(latest <= stoppedAt + LEASE_VALID_MS + 1, `lease deadline ${(latest - stoppedAt).toFixed(0)} ms after Redis stopped`);
    const dropped = droppedBeforeDeadline(samples);
    assert.equal(dropped, undefined, `the grant was dropped ${dropped && (dropped.deadline - dropped.after).toFixed(0)} ms before its deadline: ${dropped && fmt(dropped.f)}`);
    const empty = leased.find((x) => !(x.f.grantUnits > 0 && x.f.leaseRemainingSeconds > 0));
    assert.equal(empty, undefined, `leased without a usable grant: ${empty && fmt(empty.f)}`);
    assert.equal(event.from, 'degraded');
    // A spent budget on the floor is degraded (it refuses requests, not the pod): only the evidence,
    // too old for the floor's window, withdraws the node.
    assert.equal(event.reason, 'evidence_too_old');
    assert.ok(event.at >= deadline, `the transition came ${(deadline - event.at).toFixed(0)} ms before the lease deadline`);

    const { f, getter, w } = await stableRead(sentinel);
    assert.deepEqual([f.mode, f.grantUnits, f.leaseRemainingSeconds], ['floor', 0, 0]);
    approx(f.nodeBudgetUnits, FLOOR, 'node budget on the floor');
    approx(getter, FLOOR, 'nodeBudgetUnits getter on the floor');
    approx(w, FLOOR / r, 'staleWindowSeconds on the floor');
    assert.equal(sentinel.admit(1), false);
    await pollUntil(() => fleetMetrics(sentinel).errors > errorsBefore, { ms: 15000, label: 'Redis calls against the stopped server counted as errors' });
  });
});
