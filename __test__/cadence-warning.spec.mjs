// `new Sentinel` says so, once, when its default refresh cadence may ask the authority more than
// once a second: one `warn` line through the `logger` option (event `spend_sentinel.cadence`),
// written while the constructor runs, so each test reads the captured lines right after `new`.
// The rule (src/rules/cadence.rs): the default pauses are uniform in [0.3 w, 0.5 w] for the
// smallest window the node runs with (a fleet node's floor), so the rate is at most 1 / (0.4 w):
// above one a second below w = 2.5 s. Explicit refresh pauses are the user's own choice: no line.
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { scriptedAuthority, sentinelPool } from './helpers/wait.mjs';

const require = createRequire(import.meta.url);
const { Sentinel } = require('spend-sentinel');
const { windowFigures } = require('../js/native.js');

const pool = sentinelPool(Sentinel);
afterEach(() => pool.closeAll());

/** A pino-style logger recording `{ level, fields, message }`; `cadence()`: the cadence lines. */
function recordingLogger() {
  const lines = [];
  const logger = {};
  for (const level of ['info', 'warn', 'error']) logger[level] = (fields, message) => lines.push({ level, fields, message });
  return { logger, lines, cadence: () => lines.filter((l) => l.fields.event === 'spend_sentinel.cadence') };
}

/** A sentinel on `budget` (and `refresh`) with a logger; its captured log right after `new`. */
function construct(budget, refresh) {
  const log = recordingLogger();
  const auth = scriptedAuthority('valid');
  const sentinel = pool.make({ budget, ...(refresh && { refresh }), authority: { inspect: auth.inspect }, logger: log.logger });
  return { sentinel, log, auth };
}

describe('a default cadence that asks more than once a second makes one warn line', () => {
  test('r = 20, 40 units: w = 2 s, pauses of 0.6–1 s, up to 1.25 calls a second', async () => {
    const budget = { unverifiedUnits: 40, maxUnitsPerSecond: 20 };
    const { log, auth } = construct(budget);
    const [line, ...more] = log.cadence();
    assert.ok(line, `a cadence line at construction; lines: ${JSON.stringify(log.lines)}`);
    assert.deepEqual(more, []);
    assert.equal(line.level, 'warn');
    assert.deepEqual(line.fields, {
      event: 'spend_sentinel.cadence',
      callsPerSecond: 1.25,
      staleWindowSeconds: 2,
      minIntervalMs: 600,
      maxIntervalMs: 1000,
    });
    assert.equal(line.fields.callsPerSecond, windowFigures(budget).node.callsPerSecond, 'the calculator prints the same rate');
    assert.match(line.message, /^spend-sentinel: the default refresh cadence asks the authority up to 1\.25 times a second \(a pause of 600–1000 ms after each refresh, for a 2 s stale window\); a window of at least 2\.5 s keeps it to one call a second: raise budget\.unverifiedUnits or lower budget\.maxUnitsPerSecond/);
    // Once: refreshes go on, no second line. (Two pauses of up to 1 s: a bound that ends a hang.)
    await auth.call(2, 20_000);
    assert.equal(log.cadence().length, 1);
  });

  test('only refresh.timeoutMs given: the pauses are still the defaults, so the line is still due', () => {
    const { log } = construct({ unverifiedUnits: 40, maxUnitsPerSecond: 20 }, { timeoutMs: 300 });
    assert.equal(log.cadence().length, 1);
  });

  test('Sentinel.fromEnv makes the same sentinel, and the same line', () => {
    const log = recordingLogger();
    const vars = { SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS: '40', SPEND_SENTINEL_BUDGET_MAX_UNITS_PER_SECOND: '20' };
    const sentinel = Sentinel.fromEnv(vars, { authority: { inspect: async () => 'valid' }, logger: log.logger });
    try {
      assert.deepEqual(log.cadence().map((l) => [l.level, l.fields.callsPerSecond]), [['warn', 1.25]]);
    } finally {
      sentinel.close();
    }
  });

  test('a fleet node is judged on its floor: 20 units at r = 50, a 0.4 s window, 6.25 calls a second', async () => {
    const log = recordingLogger();
    const budget = { unverifiedUnits: 2000, maxUnitsPerSecond: 50, maxStaleSeconds: 10 };
    const sentinel = pool.make({
      // Redis is never reached (a closed port): nothing here needs it.
      budget: { ...budget, fleet: { redis: 'redis://127.0.0.1:1', name: 'cadence-warning', maxNodes: 25 } },
      authority: { inspect: async () => 'valid' },
      logger: log.logger,
    });
    const [line] = log.cadence();
    assert.ok(line, `a cadence line; lines: ${JSON.stringify(log.lines)}`);
    assert.equal(line.fields.callsPerSecond, 6.25);
    assert.equal(line.fields.staleWindowSeconds, 0.4);
    assert.equal(line.fields.callsPerSecond, windowFigures({ ...budget, fleet: { maxNodes: 25 } }).fleet.floorOnly.callsPerSecond);
    assert.match(line.message, /budget\.fleet\.reserve/);
    await sentinel.close();
  });
});

describe('no line when the authority is asked at most once a second, or when the pauses are explicit', () => {
  for (const [what, budget] of [
    ['w = 2.5 s: pauses of 0.75–1.25 s, exactly one call a second', { unverifiedUnits: 50, maxUnitsPerSecond: 20 }],
    ['the seed budget, w = 5 s', { unverifiedUnits: 200, maxUnitsPerSecond: 20, nodes: 2 }],
  ]) {
    test(what, () => {
      const { log } = construct(budget);
      assert.deepEqual(log.lines, []);
    });
  }

  test('the fleet of docs/fleet.md: a 4 s floor window', async () => {
    const log = recordingLogger();
    const sentinel = pool.make({
      budget: { unverifiedUnits: 20000, maxUnitsPerSecond: 50, maxStaleSeconds: 10, fleet: { redis: 'redis://127.0.0.1:1', name: 'cadence-calm', maxNodes: 25 } },
      authority: { inspect: async () => 'valid' },
      logger: log.logger,
    });
    assert.deepEqual(log.cadence(), []);
    await sentinel.close();
  });

  test('explicit pauses of 20–40 ms in a 1 s window: the user chose them', () => {
    const { log } = construct({ unverifiedUnits: 100, maxUnitsPerSecond: 100 }, { minIntervalMs: 20, maxIntervalMs: 40, timeoutMs: 300 });
    assert.deepEqual(log.cadence(), []);
  });

  test('without a logger nothing is written and nothing throws', () => {
    const sentinel = pool.make({ budget: { unverifiedUnits: 40, maxUnitsPerSecond: 20 }, authority: { inspect: async () => 'valid' } });
    assert.equal(sentinel.staleWindowSeconds, 2);
  });
});
