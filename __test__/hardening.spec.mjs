// No input may crash the process, no call may be misused silently, no sentinel may leak, and no
// option may put the credential on the wrong header. Each test pins a defect that was reproduced
// (an abort, an accepted misuse, a leak) and fails if it comes back.
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { SEED_BUDGET, catchError, never, runNode, sentinelPool } from './helpers/wait.mjs';

const require = createRequire(import.meta.url);
const { Sentinel, computeBudget, CircuitBreaker } = require('../js/main.js');
const CLI = fileURLToPath(new URL('../js/cli.js', import.meta.url));
const CONFIG = 'ERR_SPEND_SENTINEL_CONFIG';

const inspectOptions = (budget = SEED_BUDGET, extra = {}) => ({ budget: { ...budget }, authority: { inspect: never }, ...extra });
const httpOptions = (authority) => ({
  budget: { ...SEED_BUDGET },
  authority: { url: 'https://127.0.0.1:9/account', credential: 'sk_test_hardening', requiredCapability: 'meter', ...authority },
});

/** Asserts a coded configuration error whose message starts with `path` and matches `rule`. */
function assertConfigError(err, path, rule, ErrorType = Error) {
  assert.ok(err instanceof ErrorType, `expected ${ErrorType.name}, got ${err?.constructor?.name}: ${err?.message}`);
  assert.equal(err.code, CONFIG, err.message);
  assert.ok(err.message.startsWith(`${path}:`), `message should name ${path}: ${err.message}`);
  assert.match(err.message, rule);
}

describe('windows no Duration can hold are refused, not aborted on', () => {
  const pool = sentinelPool(Sentinel);
  afterEach(() => pool.closeAll());

  for (const budget of [
    { unverifiedUnits: 1e20, maxUnitsPerSecond: 1 },
    { unverifiedUnits: 1e19, maxUnitsPerSecond: 1 },
    { unverifiedUnits: Number.MAX_VALUE, maxUnitsPerSecond: 1 },
  ]) {
    test(`new Sentinel and computeBudget refuse ${JSON.stringify(budget)}`, () => {
      for (const call of [() => pool.make(inspectOptions(budget)), () => computeBudget(budget)]) {
        assertConfigError(catchError(call), 'budget.maxStaleSeconds', /604800 s \(7 days\)/);
      }
    });
  }

  test('a window of exactly 7 days through maxStaleSeconds works', () => {
    const s = pool.make(inspectOptions({ unverifiedUnits: 1e20, maxUnitsPerSecond: 1, maxStaleSeconds: 604800 }));
    assert.equal(s.staleWindowSeconds, 604800);
    assert.equal(s.readiness().reason, 'no_evidence');
  });

  test('the window calculator exits 1 with the same message', async () => {
    const { code, signal, stderr } = await runNode([CLI, 'window', '--budget', '1e20', '--rate', '1']);
    assert.equal(signal, null, stderr);
    assert.equal(code, 1, stderr);
    assert.match(stderr, /--max-stale: .*604800 s \(7 days\)/);
  });
});

describe('cadences that hammer the authority are refused', () => {
  test('a 10 µs window (b = 0.01 at 1000/s) explains the window it implies', () => {
    const err = catchError(() => new Sentinel(inspectOptions({ unverifiedUnits: 0.01, maxUnitsPerSecond: 1000 })));
    assertConfigError(err, 'budget', /= 0\.00001 s is too short: refreshes are at least 20 ms apart.*at least 66\.7 ms/);
  });

  test('minIntervalMs 0 is refused; 20 ms is the floor', () => {
    const err = catchError(() => new Sentinel(inspectOptions(SEED_BUDGET, { refresh: { minIntervalMs: 0, maxIntervalMs: 0 } })));
    assertConfigError(err, 'refresh.minIntervalMs', /at least 20 ms \(got 0\)/);
    new Sentinel(inspectOptions(SEED_BUDGET, { refresh: { minIntervalMs: 20, maxIntervalMs: 20 } })).close();
  });
});

describe('misused calls throw coded errors naming the argument', () => {
  const pool = sentinelPool(Sentinel);
  afterEach(() => pool.closeAll());

  test('Sentinel without new is refused and installs nothing on the global object', () => {
    const err = catchError(() => Sentinel(inspectOptions()));
    assert.ok(err instanceof TypeError, err.message);
    assert.equal(err.code, 'ERR_SPEND_SENTINEL_CONSTRUCT');
    for (const name of ['admit', 'status', 'isServing']) assert.equal(Object.hasOwn(globalThis, name), false, name);
  });

  test('Reflect.construct with a foreign new.target is refused; a subclass works', () => {
    const err = catchError(() => Reflect.construct(Sentinel, [inspectOptions()], Object));
    assert.equal(err.code, 'ERR_SPEND_SENTINEL_CONSTRUCT');
    class Metered extends Sentinel {}
    const s = new Metered(inspectOptions());
    s.close();
    assert.equal(s.readiness().reason, 'shutting_down');
  });

  for (const bad of [5, 'x', null, {}, undefined]) {
    test(`onTransition(${JSON.stringify(bad) ?? 'undefined'}) is a TypeError`, () => {
      const s = pool.make(inspectOptions());
      assertConfigError(catchError(() => s.onTransition(bad)), 'onTransition: listener', /must be a function/, TypeError);
    });
  }

  const WHEN_READY = [
    ['x', 'whenReady', /must be an object \(got string\)/],
    [null, 'whenReady', /must be an object \(got null\)/],
    [{ foo: 1 }, 'whenReady.foo', /unknown option/],
    [{ timeoutMs: '5' }, 'whenReady.timeoutMs', /must be a number/],
    [{ timeoutMs: -1 }, 'whenReady.timeoutMs', /from 0 to 2147483647/],
    [{ timeoutMs: Number.MAX_VALUE }, 'whenReady.timeoutMs', /from 0 to 2147483647/],
    [{ timeoutMs: 2 ** 31 }, 'whenReady.timeoutMs', /from 0 to 2147483647/],
  ];
  for (const [bad, path, rule] of WHEN_READY) {
    test(`whenReady(${JSON.stringify(bad)}) is a TypeError naming ${path}`, () => {
      const s = pool.make(inspectOptions());
      assertConfigError(catchError(() => s.whenReady(bad)), path, rule, TypeError);
    });
  }

  test('whenReady with the longest timeout still waits and rejects on close', async () => {
    const s = pool.make(inspectOptions());
    const pending = s.whenReady({ timeoutMs: 2 ** 31 - 1 });
    s.close();
    await assert.rejects(pending, { code: 'ERR_SPEND_SENTINEL_CLOSED' });
  });

  test('a CircuitBreaker timeoutMs past the Node timer limit is refused', () => {
    const err = catchError(() => new CircuitBreaker({ timeoutMs: 2 ** 31 }));
    assert.equal(err.code, CONFIG);
    assert.match(err.message, /timeoutMs: must be at most 2147483647 ms/);
    assert.doesNotThrow(() => new CircuitBreaker({ timeoutMs: 2 ** 31 - 1 }));
  });
});

describe('strings and lists have documented maximums', () => {
  const MB = 'x'.repeat(1 << 20);
  const CASES = [
    ['a 1 MB requiredCapability', { requiredCapability: MB }, 'authority.requiredCapability', /at most 256 bytes/],
    ['100,000 capabilities', { requiredCapability: undefined, requiredCapabilities: Array.from({ length: 100000 }, (_, i) => `m${i}`) }, 'authority.requiredCapabilities', /at most 64 capabilities/],
    ['a 3 KB url', { url: `https://127.0.0.1/${'a'.repeat(3000)}` }, 'authority.url', /at most 2048 bytes/],
    ['a 1 MB credential', { credential: MB }, 'authority.credential', /at most 4096 bytes/],
  ];
  for (const [name, authority, path, rule] of CASES) {
    test(name, () => {
      const options = httpOptions(authority);
      if (authority.requiredCapability === undefined) delete options.authority.requiredCapability;
      const err = catchError(() => new Sentinel(options));
      assertConfigError(err, path, rule);
      assert.ok(err.message.length < 400, `a short message, got ${err.message.length} characters`);
    });
  }

  test('a 1 MB breaker name is refused', () => {
    const err = catchError(() => new CircuitBreaker({ name: 'n'.repeat(1 << 20) }));
    assert.equal(err.code, CONFIG);
    assert.match(err.message, /^CircuitBreaker: name: must be at most 128 bytes/);
  });
});

describe('the credential goes on one header, as the authority expects', () => {
  test('a non-ASCII credential is refused, as the message says, without echoing it', () => {
    const err = catchError(() => new Sentinel(httpOptions({ credential: 'sk_clé_secrète' })));
    assertConfigError(err, 'authority.credential', /visible ASCII/);
    assert.ok(!err.message.includes('secrète'));
  });

  test('userinfo in the URL is refused without echoing it', () => {
    const err = catchError(() => new Sentinel(httpOptions({ url: 'https://alice:pw-hunter2@127.0.0.1:9/account' })));
    assertConfigError(err, 'authority.url', /user name or password/);
    assert.ok(!err.message.includes('hunter2') && !err.message.includes('alice'), err.message);
  });

  for (const header of ['host', 'Host', 'content-length', 'transfer-encoding', 'connection', 'te', 'upgrade', 'keep-alive']) {
    test(`header ${header} is refused`, () => {
      assertConfigError(catchError(() => new Sentinel(httpOptions({ header }))), 'authority.header', /cannot carry the credential/);
    });
  }

  test('a header name that is not a token is refused', () => {
    assertConfigError(catchError(() => new Sentinel(httpOptions({ header: 'x api key' }))), 'authority.header', /valid HTTP header name/);
  });
});

describe('numbers read without float noise', () => {
  test('evidence ages and transition ages are whole milliseconds', async () => {
    const s = new Sentinel(inspectOptions(SEED_BUDGET, { authority: { inspect: async () => 'valid' } }));
    try {
      const events = [];
      s.onTransition((e) => events.push(e));
      await s.whenReady({ timeoutMs: 5000 });
      // Ages of a few ms up: read them until one is non-zero (the first may be exactly 0).
      const ages = [];
      for (let i = 0; i < 200 && ages.filter((a) => a > 0).length < 5; i += 1) {
        ages.push(s.readiness().evidenceAgeSeconds);
        await new Promise((resolve) => setImmediate(resolve));
      }
      for (const age of [...ages, ...events.map((e) => e.evidenceAgeSeconds).filter((a) => a !== null)]) {
        assert.equal(age, Math.round(age * 1000) / 1000, `age ${age} is not a whole number of milliseconds`);
      }
    } finally {
      s.close();
    }
  });
});

describe('sentinels leave nothing behind', () => {
  test('20,000 sentinels created and closed grow RSS by less than 12 MiB after collection', async () => {
    const fixture = fileURLToPath(new URL('./fixtures/many-sentinels.mjs', import.meta.url));
    const { code, signal, stdout, stderr } = await runNode(['--expose-gc', fixture, '20000'], { timeoutMs: 120000 });
    assert.equal(signal, null, stderr);
    assert.equal(code, 0, stderr);
    const { growthKiB } = JSON.parse(stdout);
    // The leak this pins kept ~1.5 KB per sentinel: 27-30 MiB for 20,000; without it the
    // growth measured -0.1 to 5 MiB (allocator noise).
    assert.ok(growthKiB < 12 * 1024, `RSS grew ${growthKiB} KiB over 20,000 sentinels`);
  });
});
