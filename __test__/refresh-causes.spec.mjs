// Every indeterminate refresh says why (docs/metrics.md, docs/http-adapter.md): a `cause` in its
// log line and the `cause` label of spend_sentinel_refresh_indeterminate_total, for the mistakes an
// `inspect` function makes (throws, rejects, answers true / 'VALID' / an object / nothing, hangs)
// and for each way the HTTP adapter fails (status class, timeout, connect, TLS, body). A sentinel
// with no logger whose inspect answers a bad value warns once through process.emitWarning,
// naming the value's type and never the value.
//
// Synchronisation: each test waits for the refresh line (the logger's call) or the 'warning'
// event. Metrics are read after close(): no refresh is recorded after it, so the counters are
// still and the causes add up exactly.
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';
import { REFRESH_CAUSES, byLabel, readExposition } from './helpers/exposition.mjs';
import { TLS, refusedUrl, reply, startFakeAuthority } from './helpers/fake-authority.mjs';
import { deferred, fastOptions, never, pollUntil, scriptedAuthority, sentinelPool, withTimeout } from './helpers/wait.mjs';

const { Sentinel } = createRequire(import.meta.url)('spend-sentinel');

const SECRET = `sk_live_${randomBytes(12).toString('hex')}`;
const CAP = 'meter.tokens';
const WAIT_MS = 5000;
const WARNING_CODE = 'SPEND_SENTINEL_INSPECT_VALUE';

const pool = sentinelPool(Sentinel);
afterEach(() => pool.closeAll());

/** A pino-style logger that records every line; `refreshLine()` resolves with the first refresh line. */
function recordingLogger() {
  const lines = [];
  const first = deferred();
  const log = (level) => (obj, msg) => {
    lines.push({ level, obj, msg });
    if (obj?.event === 'spend_sentinel.refresh') first.resolve({ level, obj, msg });
  };
  return {
    lines,
    logger: { info: log('info'), warn: log('warn'), error: log('error') },
    refreshLine: () => withTimeout(first.promise, WAIT_MS, () => `a refresh line; lines: ${JSON.stringify(lines)}`),
  };
}

/** Closes `sentinel` and returns its indeterminate refreshes by cause, checked against refresh_total. */
function closedCounts(sentinel) {
  sentinel.close();
  const text = sentinel.metrics();
  assert.ok(!text.includes(SECRET), 'the secret is in the metrics');
  const families = readExposition(text);
  const byCause = byLabel(families, 'spend_sentinel_refresh_indeterminate_total', 'cause');
  const total = Object.values(byCause).reduce((a, b) => a + b, 0);
  const { indeterminate } = byLabel(families, 'spend_sentinel_refresh_total', 'outcome');
  assert.equal(total, indeterminate, 'the causes add up to refresh_total{outcome="indeterminate"}');
  return byCause;
}

/** The first refresh line says `cause` (and `valueType`), and every indeterminate refresh counted had it. */
async function expectCause(sentinel, log, cause, valueType) {
  const line = await log.refreshLine();
  const expected = { event: 'spend_sentinel.refresh', outcome: 'indeterminate', cause };
  if (valueType) expected.valueType = valueType;
  const { durationMs, ...codes } = line.obj;
  assert.deepEqual(codes, expected);
  assert.equal(typeof durationMs, 'number');
  assert.equal(line.level, 'warn');
  assert.ok(line.msg.includes(`(${cause}${valueType ? `: ${valueType}` : ''})`), line.msg);
  assert.ok(!JSON.stringify(log.lines).includes(SECRET), 'the secret is in a log line');
  const counts = closedCounts(sentinel);
  assert.ok(counts[cause] >= 1, `${cause} counted: ${JSON.stringify(counts)}`);
  for (const other of REFRESH_CAUSES.filter((c) => c !== cause)) assert.equal(counts[other], 0, `${other} counted`);
  return line;
}

describe('inspect: each mistake has its own cause', () => {
  const mistakes = [
    ['throws', () => { throw new Error(`cannot reach billing with ${SECRET}`); }, 'inspect_threw'],
    ['rejects', () => Promise.reject(new Error(`401 for ${SECRET}`)), 'inspect_rejected'],
    ['resolves true', () => Promise.resolve(true), 'inspect_bad_value', 'boolean'],
    ["resolves 'VALID'", () => Promise.resolve('VALID'), 'inspect_bad_value', 'string'],
    ["resolves { status: 'valid' }", () => Promise.resolve({ status: 'valid', token: SECRET }), 'inspect_bad_value', 'object'],
    ['returns nothing (no return)', () => undefined, 'inspect_bad_value', 'undefined'],
    ['returns null at once', () => null, 'inspect_bad_value', 'null'],
    ['resolves the credential itself', () => Promise.resolve(SECRET), 'inspect_bad_value', 'string'],
    ['hangs', never, 'inspect_timeout'],
    ["answers 'indeterminate' itself", () => 'indeterminate', 'inspect_indeterminate'],
  ];
  for (const [name, behaviour, cause, valueType] of mistakes) {
    test(`${name} → ${cause}${valueType ? ` (${valueType})` : ''}`, async () => {
      const auth = scriptedAuthority(behaviour);
      const log = recordingLogger();
      const sentinel = pool.make({ ...fastOptions(auth), logger: log.logger });
      await expectCause(sentinel, log, cause, valueType);
    });
  }

  test('a hang is cut at refresh.timeoutMs', async () => {
    const auth = scriptedAuthority(never);
    const log = recordingLogger();
    pool.make({ ...fastOptions(auth), logger: log.logger });
    const line = await log.refreshLine();
    assert.equal(line.obj.cause, 'inspect_timeout');
    assert.ok(line.obj.durationMs >= 300, `durationMs ${line.obj.durationMs} (timeoutMs 300)`);
  });

  test('a promise collected unsettled is a hang too: inspect_timeout at timeoutMs, not before', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc');
    let collected = false;
    const registry = new FinalizationRegistry(() => (collected = true));
    const started = deferred();
    const inspect = () => {
      const unsettled = new Promise(() => {}); // nothing keeps it: only the addon's callbacks hang on it
      registry.register(unsettled, 'inspect');
      started.resolve();
      return unsettled;
    };
    const log = recordingLogger();
    pool.make({
      budget: { unverifiedUnits: 1000, maxUnitsPerSecond: 100 }, // window 10 s: room for a long timeout
      refresh: { minIntervalMs: 20, maxIntervalMs: 40, timeoutMs: 1500 },
      authority: { inspect },
      logger: log.logger,
    });
    await withTimeout(started.promise, WAIT_MS, 'the first inspect call');
    await pollUntil(() => (gc(), collected), { ms: 1400, label: 'the unsettled promise collected before the timeout' });
    const line = await log.refreshLine();
    assert.equal(line.obj.cause, 'inspect_timeout');
    assert.ok(line.obj.durationMs >= 1500, `ended at ${line.obj.durationMs} ms, before timeoutMs 1500`);
  });
});

describe('spend_sentinel_refresh_indeterminate_total', () => {
  test('every cause is a series from the first scrape, at 0, in the documented order', () => {
    const auth = scriptedAuthority(never);
    const sentinel = pool.make(fastOptions(auth));
    const families = readExposition(sentinel.metrics());
    const family = families.get('spend_sentinel_refresh_indeterminate_total');
    assert.equal(family.type, 'counter');
    assert.deepEqual(
      family.samples.map((s) => s.labels.cause),
      REFRESH_CAUSES,
    );
    assert.ok(family.samples.every((s) => s.value === 0));
  });

  test('docs/metrics.md explains exactly these causes, in this order; docs/http-adapter.md the HTTP ones', () => {
    const doc = (name) => readFileSync(new URL(`../docs/${name}`, import.meta.url), 'utf8');
    const firstCells = (text) => [...text.matchAll(/^\| `([a-z0-9_]+)` \|/gm)].map((m) => m[1]);
    const metrics = doc('metrics.md');
    const section = metrics.slice(metrics.indexOf('\n## Why a refresh was indeterminate'));
    assert.deepEqual(firstCells(section.slice(0, section.indexOf('\n## ', 1))), REFRESH_CAUSES);
    const lastCells = [...doc('http-adapter.md').matchAll(/\| `indeterminate` \| `([a-z0-9_]+)` \|$/gm)].map((m) => m[1]);
    const http = REFRESH_CAUSES.filter((c) => c !== 'breaker_open' && !c.startsWith('inspect_'));
    assert.deepEqual([...lastCells].sort(), [...http].sort());
  });
});

describe('without a logger, a bad inspect value warns once', () => {
  /** Warnings with our code, recorded from now until the test ends. */
  function ourWarnings(t) {
    const seen = [];
    const waiters = new Set();
    const listener = (warning) => {
      if (warning.code !== WARNING_CODE) return;
      seen.push(warning);
      for (const w of waiters) if (seen.length >= w.n) w.resolve(seen);
    };
    process.on('warning', listener);
    t.after(() => process.off('warning', listener));
    return {
      seen,
      /** Resolves once `n` warnings have been seen. */
      count(n) {
        if (seen.length >= n) return Promise.resolve(seen);
        const d = deferred();
        waiters.add({ n, resolve: d.resolve });
        return withTimeout(d.promise, WAIT_MS, `${n} ${WARNING_CODE} warnings (saw ${seen.length})`);
      },
    };
  }

  test('one process warning naming the type, never the value, for many bad refreshes', async (t) => {
    const warnings = ourWarnings(t);
    const auth = scriptedAuthority(() => Promise.resolve({ status: 'valid', token: SECRET }));
    pool.make(fastOptions(auth));
    const [warning] = await warnings.count(1);
    assert.equal(warning.name, 'Warning');
    assert.match(warning.message, /^spend-sentinel: authority\.inspect\(\) answered an object, not one of the outcomes 'valid', 'invalid_credential', 'capability_missing', 'indeterminate': /);
    assert.ok(warning.message.includes('inspect_bad_value'), warning.message);
    assert.ok(!warning.message.includes(SECRET));
    // Refreshes and their warnings share the sentinel's one queue to JavaScript, in order: once
    // call 6 has started, a warning for any of calls 0..4 would have been emitted.
    await auth.call(6);
    await new Promise((resolve) => setImmediate(resolve)); // 'warning' is emitted on the next tick
    assert.equal(warnings.seen.length, 1, 'warned more than once');
  });

  test('a string answered by mistake (the credential) is not echoed', async (t) => {
    const warnings = ourWarnings(t);
    const auth = scriptedAuthority(() => SECRET);
    pool.make(fastOptions(auth));
    const [warning] = await warnings.count(1);
    assert.ok(warning.message.includes('answered a string'), warning.message);
    assert.ok(!warning.message.includes(SECRET), 'the answered string is echoed');
  });

  test('once per sentinel: two sentinels warn once each', async (t) => {
    const warnings = ourWarnings(t);
    const first = scriptedAuthority(() => true);
    const second = scriptedAuthority(() => undefined);
    pool.make(fastOptions(first));
    pool.make(fastOptions(second));
    const seen = await warnings.count(2);
    const kinds = seen.map((w) => (w.message.includes('answered a boolean') ? 'boolean' : w.message.includes('answered undefined') ? 'undefined' : w.message));
    assert.deepEqual(kinds.sort(), ['boolean', 'undefined']);
    await Promise.all([first.call(5), second.call(5)]);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(warnings.seen.length, 2);
  });

  test('with a logger, no warning: the logger hears the cause instead', async (t) => {
    const warnings = ourWarnings(t);
    const auth = scriptedAuthority(() => Promise.resolve(true));
    const log = recordingLogger();
    pool.make({ ...fastOptions(auth), logger: log.logger });
    assert.equal((await log.refreshLine()).obj.cause, 'inspect_bad_value');
    await auth.call(5);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(warnings.seen, []);
  });

  test('other indeterminate refreshes without a logger do not warn', async (t) => {
    const warnings = ourWarnings(t);
    const auth = scriptedAuthority(() => Promise.reject(new Error('down')));
    pool.make(fastOptions(auth));
    await auth.call(5);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(warnings.seen, []);
  });
});

describe('HTTP adapter: each failure has its cause', { timeout: 30000 }, () => {
  async function fakeAuthority(t) {
    const fake = await startFakeAuthority();
    t.after(() => fake.close());
    return fake;
  }

  /** A sentinel asking `url` with a logger; `authority` is merged over the defaults. */
  function httpSentinel(url, log, authority = {}) {
    const options = {
      budget: { unverifiedUnits: 200, maxUnitsPerSecond: 100 },
      refresh: { minIntervalMs: 20, maxIntervalMs: 40, timeoutMs: 300 },
      authority: { url, credential: SECRET, requiredCapability: CAP, ...authority },
      logger: log.logger,
    };
    if (url.startsWith('http:')) options.authority.allowInsecureHttp = true;
    return pool.make(options);
  }

  const answers = [
    ['500', () => reply.json(500, { error: `internal ${SECRET}` }), 'http_5xx'],
    ['503', () => reply.text(503, 'Service Unavailable'), 'http_5xx'],
    ['429', () => reply.json(429, { error: 'slow down' }, { 'retry-after': '1' }), 'http_429'],
    ['404', () => reply.text(404, 'Not Found'), 'http_4xx'],
    ['a redirect (302)', () => reply.redirect('https://example.invalid/'), 'http_3xx'],
    ['no answer in time', () => reply.hang(), 'timeout'],
    ['headers, then a body that stalls', () => reply.stallBody(), 'timeout'],
    ['a 200 that is not JSON', () => reply.text(200, '<html>sign in</html>', 'text/html'), 'body_not_json'],
    ['JSON without the capabilities', () => reply.json(200, { account: { plan: 'pro' } }), 'body_no_capabilities'],
    ['a body over 64 KiB', () => reply.paddedJson(200, { capabilities: [CAP] }, 64 * 1024 + 1), 'body_too_large'],
    ['the connection dropped before an answer', () => (req) => req.socket.destroy(), 'connection_lost'],
  ];
  for (const [name, behaviour, cause] of answers) {
    test(`${name} → ${cause}`, async (t) => {
      const fake = await fakeAuthority(t);
      fake.respondWith(behaviour());
      const log = recordingLogger();
      const sentinel = httpSentinel(fake.url, log);
      await expectCause(sentinel, log, cause);
    });
  }

  test('connection refused → connect', async () => {
    const log = recordingLogger();
    const sentinel = httpSentinel(await refusedUrl(), log);
    await expectCause(sentinel, log, 'connect');
  });

  test('a certificate from a CA not trusted (no caPem) → tls', async (t) => {
    const fake = await fakeAuthority(t);
    fake.respondWith(reply.json(200, { capabilities: [CAP] }));
    const log = recordingLogger();
    const sentinel = httpSentinel(fake.httpsUrl, log);
    await expectCause(sentinel, log, 'tls');
    assert.equal(fake.requests.length, 0, 'a request went through the untrusted connection');
  });

  test('the same server with caPem is valid: no refresh line, no cause counted', async (t) => {
    const fake = await fakeAuthority(t);
    fake.respondWith(reply.json(200, { capabilities: [CAP] }));
    const log = recordingLogger();
    const sentinel = httpSentinel(fake.httpsUrl, log, { caPem: TLS.caPem });
    await sentinel.whenReady({ timeoutMs: WAIT_MS });
    await fake.waitForRequests(3);
    assert.deepEqual(log.lines.filter((l) => l.obj.event === 'spend_sentinel.refresh'), []);
    assert.ok(Object.values(closedCounts(sentinel)).every((n) => n === 0));
  });

  test('a denial (401) logs its outcome and no cause', async (t) => {
    const fake = await fakeAuthority(t);
    fake.respondWith(reply.json(401, { error: 'bad key' }));
    const log = recordingLogger();
    const sentinel = httpSentinel(fake.url, log);
    const line = await log.refreshLine();
    assert.equal(line.level, 'error');
    assert.deepEqual(Object.keys(line.obj), ['event', 'outcome', 'durationMs']);
    assert.equal(line.obj.outcome, 'invalid_credential');
    assert.ok(Object.values(closedCounts(sentinel)).every((n) => n === 0));
  });
});
