// The built-in HTTP authority adapter (docs/http-adapter.md): one test per row of the answer → outcome table, plus
// the shape of the request. The sentinel talks to a local fake (helpers/fake-authority.mjs).
//
// How an outcome is observed (readiness is the only public view of it):
// - valid              → `whenReady` resolves with ready/verified;
// - a denial           → readiness becomes not_ready with the denial as reason;
// - indeterminate      → with no evidence yet, readiness stays not_ready/no_evidence although the
//                        fake has been asked at least twice (so one answer was already judged);
//                        after a valid, the same answer gives degraded/refresh_indeterminate (200).
// Everything waited for is an event or a bounded poll of readiness(); plain timers only appear
// where the point is that nothing happens.
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { TLS, refusedUrl, reply, startFakeAuthority } from './helpers/fake-authority.mjs';
import { quietPeriod, sentinelPool } from './helpers/wait.mjs';

const { Sentinel } = createRequire(import.meta.url)('../js/main.js');

const CAP = 'meter.tokens';
const CREDENTIAL = `sk_test_${randomBytes(12).toString('hex')}`;
// Window 2 s (node budget 200 units at 100 units/s). The fast cadence keeps evidence far younger
// than that, so a degraded phase after an indeterminate refresh lasts long enough to observe.
const BUDGET = { unverifiedUnits: 200, maxUnitsPerSecond: 100 };
const REFRESH = { minIntervalMs: 20, maxIntervalMs: 40, timeoutMs: 300 };
const WAIT_MS = 5000; // generous upper bound for anything awaited

const VALID = reply.json(200, { capabilities: ['meter.requests', CAP] });
const NOT_READY = (reason) => ({ status: 'not_ready', reason, httpStatus: 503 });
const NO_EVIDENCE = { ...NOT_READY('no_evidence'), evidenceAgeSeconds: null };
const READY = { status: 'ready', reason: 'verified', httpStatus: 200 };
const DEGRADED = { status: 'degraded', reason: 'refresh_indeterminate', httpStatus: 200 };

const pool = sentinelPool(Sentinel);
afterEach(() => pool.closeAll());

/** A fresh fake per test, closed when the test ends, so no stray request leaks between tests. */
async function fakeAuthority(t, options) {
  const fake = await startFakeAuthority(options);
  t.after(() => fake.close());
  return fake;
}

/**
 * A sentinel pointed at `fake` with fast timings. `overrides.authority` is merged over the
 * defaults; a key set to `undefined` is removed (e.g. requiredCapability when testing
 * requiredCapabilities, since unknown or conflicting keys are configuration errors).
 */
function startSentinel(fake, { authority = {}, refresh = {}, budget = {} } = {}) {
  const auth = { url: fake.url, credential: CREDENTIAL, requiredCapability: CAP, ...authority };
  if (auth.url.startsWith('http:')) auth.allowInsecureHttp = true;
  for (const key of Object.keys(auth)) if (auth[key] === undefined) delete auth[key];
  return pool.make({ budget: { ...BUDGET, ...budget }, refresh: { ...REFRESH, ...refresh }, authority: auth });
}

/** Only the fields of `actual` named in `expected`, for a readable deepEqual. */
const pick = (actual, expected) => Object.fromEntries(Object.keys(expected).map((k) => [k, actual[k]]));

/**
 * Polls readiness() every 5 ms until it matches `expected` (bounded by `ms`). Returns the matching
 * readiness, when it was seen, and every distinct status/reason seen on the way.
 */
async function waitForReadiness(sentinel, expected, ms = WAIT_MS) {
  const deadline = performance.now() + ms;
  const seen = [];
  for (;;) {
    const readiness = sentinel.readiness();
    const label = `${readiness.status}/${readiness.reason}`;
    if (seen.at(-1) !== label) seen.push(label);
    if (Object.entries(expected).every(([k, v]) => readiness[k] === v)) {
      return { readiness, at: performance.now(), seen };
    }
    if (performance.now() > deadline) {
      assert.fail(`readiness never matched ${JSON.stringify(expected)} within ${ms} ms; seen: ${seen.join(' → ')}`);
    }
    await sleep(5);
  }
}

/** whenReady, but a timeout says what the sentinel and the fake saw (to tell addon from test bugs). */
async function whenReady(sentinel, fake) {
  try {
    return await sentinel.whenReady({ timeoutMs: WAIT_MS });
  } catch (err) {
    const now = sentinel.readiness();
    const hint = now.status === 'not_ready' ? '' : ' (whenReady missed a status it admits: not an adapter bug)';
    const seen = `readiness() now ${JSON.stringify(now)}; the fake saw ${fake.requests.length} requests`;
    assert.fail(`${err.code}: ${err.message}; ${seen}${hint}`);
  }
}

async function expectValid(fake, behaviour, overrides) {
  fake.respondWith(behaviour);
  const sentinel = startSentinel(fake, overrides);
  const readiness = await whenReady(sentinel, fake);
  assert.deepEqual(pick(readiness, READY), READY);
  return sentinel;
}

async function expectDenial(fake, behaviour, reason, overrides) {
  fake.respondWith(behaviour);
  const sentinel = startSentinel(fake, overrides);
  const { readiness } = await waitForReadiness(sentinel, { reason }); // not_ready is also the start state
  assert.deepEqual(readiness, { ...NOT_READY(reason), evidenceAgeSeconds: null });
  return sentinel;
}

/**
 * Asserts that `behaviour` is judged indeterminate, both before any evidence and after a valid.
 * With `boundedByTimeout` (an answer that never comes), also that it is judged so only once
 * refresh.timeoutMs has passed: lower bounds from moments measured before the request was sent.
 * That it is judged so right at timeoutMs is the refresh loop's rule, tested on fake time
 * (src/refresher/cadence_tests.rs: a refresh that never answers is inconclusive at its timeout);
 * here the hang ending at all, in an indeterminate outcome, is the event waited for.
 */
async function expectIndeterminate(fake, behaviour, { boundedByTimeout = false, overrides } = {}) {
  const { timeoutMs } = REFRESH;

  // 1. No evidence yet: two requests seen means the first answer was judged (refreshes never
  //    overlap), and it neither produced evidence nor a denial.
  fake.respondWith(behaviour);
  const madeAt = performance.now(); // the first request is sent after this
  const sentinel = startSentinel(fake, overrides);
  const [, second] = await fake.waitForRequests(2);
  assert.deepEqual(sentinel.readiness(), NO_EVIDENCE);
  if (boundedByTimeout) {
    // The second request can only start once the first was abandoned, timeoutMs after it was sent.
    const after = second.at - madeAt;
    assert.ok(after >= timeoutMs, `the second request came ${after.toFixed(0)} ms after the sentinel was made: the first ended before timeoutMs ${timeoutMs}`);
  }

  // 2. Evidence arrives.
  fake.respondWith(VALID);
  assert.deepEqual(pick(await whenReady(sentinel, fake), READY), READY);

  // 3. The same answer after a valid keeps the evidence: degraded, still HTTP 200.
  fake.respondWith(behaviour);
  const judged = await fake.nextRequest(); // the first request that gets `behaviour`
  const { readiness, seen } = await waitForReadiness(sentinel, { status: 'degraded' });
  assert.deepEqual(pick(readiness, DEGRADED), DEGRADED, `seen: ${seen.join(' → ')}`);
  assert.equal(typeof readiness.evidenceAgeSeconds, 'number');
  assert.ok(judged, 'the behaviour was served');
  if (boundedByTimeout) {
    // The sentinel's own clock: the evidence is the last valid refresh, sent before the request
    // that hung, which degrades it only timeoutMs after it was sent (ages are whole ms).
    const age = readiness.evidenceAgeSeconds;
    assert.ok(age >= timeoutMs / 1000 - 0.0005, `degraded at evidence age ${age} s: the hung request was judged before timeoutMs ${timeoutMs}`);
  }
  return sentinel;
}

describe('HTTP authority: answers judged valid (table row 1)', { timeout: 20000 }, () => {
  const cases = [
    ['200, array of strings containing the capability', VALID],
    ['200, object whose member for the capability is true', reply.json(200, { capabilities: { [CAP]: true, 'meter.other': false } })],
    ['any 2xx, not only 200 (201)', reply.json(201, { capabilities: [CAP] })],
    [
      'requiredCapabilities: every one present',
      reply.json(200, { capabilities: ['a', 'b', 'c'] }),
      { authority: { requiredCapability: undefined, requiredCapabilities: ['a', 'b'] } },
    ],
    [
      'requiredCapabilities: every member true',
      reply.json(200, { capabilities: { a: true, b: true, c: false } }),
      { authority: { requiredCapability: undefined, requiredCapabilities: ['a', 'b'] } },
    ],
    [
      // the default location holds nothing useful, so only the custom pointer can make this valid
      'custom capabilitiesPointer /account/meters',
      reply.json(200, { capabilities: [], account: { meters: [CAP] } }),
      { authority: { capabilitiesPointer: '/account/meters' } },
    ],
    [
      'capabilitiesPointer with JSON Pointer escapes (~1 is "/", ~0 is "~")',
      reply.json(200, { 'plan/v2': { 'meters~all': [CAP] } }),
      { authority: { capabilitiesPointer: '/plan~1v2/meters~0all' } },
    ],
    ['a body of exactly 64 KiB (the limit is "over 64 KiB")', reply.paddedJson(200, { capabilities: [CAP] }, 64 * 1024)],
  ];
  for (const [name, behaviour, overrides] of cases) {
    test(name, async (t) => {
      await expectValid(await fakeAuthority(t), behaviour, overrides);
    });
  }
});

describe('HTTP authority: definitive denials (table rows 2-4)', { timeout: 20000 }, () => {
  const cases = [
    ['capability absent from the array', reply.json(200, { capabilities: ['meter.requests'] }), 'capability_missing'],
    ['capability member false', reply.json(200, { capabilities: { [CAP]: false } }), 'capability_missing'],
    ['capability member not the boolean true ("true")', reply.json(200, { capabilities: { [CAP]: 'true' } }), 'capability_missing'],
    [
      'requiredCapabilities: one of them absent',
      reply.json(200, { capabilities: ['a', 'c'] }),
      'capability_missing',
      { authority: { requiredCapability: undefined, requiredCapabilities: ['a', 'b'] } },
    ],
    [
      // the capability is present at the default location, but the configured pointer lacks it
      'custom capabilitiesPointer: capability absent there',
      reply.json(200, { capabilities: [CAP], account: { meters: ['meter.requests'] } }),
      'capability_missing',
      { authority: { capabilitiesPointer: '/account/meters' } },
    ],
    ['401', reply.json(401, { error: 'unauthorized' }), 'invalid_credential'],
    ['403', reply.json(403, { error: 'forbidden' }), 'invalid_credential'],
    ['402', reply.json(402, { error: 'payment required' }), 'capability_missing'],
  ];
  for (const [name, behaviour, reason, overrides] of cases) {
    test(`${name} → ${reason}`, async (t) => {
      await expectDenial(await fakeAuthority(t), behaviour, reason, overrides);
    });
  }

  for (const [name, behaviour, reason] of cases.filter(([n]) => ['401', '402', 'capability absent from the array'].includes(n))) {
    test(`after a valid, ${name} makes readiness not_ready at once (${reason})`, async (t) => {
      const fake = await fakeAuthority(t);
      const sentinel = await expectValid(fake, VALID);
      fake.respondWith(behaviour);
      const { readiness, seen } = await waitForReadiness(sentinel, { status: 'not_ready' });
      assert.deepEqual(pick(readiness, NOT_READY(reason)), NOT_READY(reason));
      assert.ok(!seen.some((s) => s.startsWith('degraded')), `passed through degraded: ${seen.join(' → ')}`);
      assert.equal(typeof readiness.evidenceAgeSeconds, 'number', 'the evidence is kept and its age still reported');
    });
  }

  test('an indeterminate answer (500) never erases a known denial (401)', async (t) => {
    const fake = await fakeAuthority(t);
    const sentinel = await expectDenial(fake, reply.json(401, {}), 'invalid_credential');
    fake.respondWith(reply.json(500, {}));
    const seenSoFar = fake.requests.length;
    await fake.waitForRequests(seenSoFar + 2); // at least one 500 has been judged
    assert.deepEqual(sentinel.readiness(), { ...NOT_READY('invalid_credential'), evidenceAgeSeconds: null });
  });
});

describe('HTTP authority: indeterminate answers (table rows 5-6)', { timeout: 20000 }, () => {
  const cases = [
    ['200 that is not JSON', reply.text(200, '<html><body>OK</body></html>', 'text/html')],
    ['200 JSON lacking the pointer', reply.json(200, { account: { plan: 'pro' } })],
    ['200 JSON with another type at the pointer (a string)', reply.json(200, { capabilities: CAP })],
    ['200 with a body over 64 KiB (80 KiB, chunked)', reply.paddedJson(200, { capabilities: [CAP] }, 80 * 1024)],
    ['200 with a body of 64 KiB + 1 byte', reply.paddedJson(200, { capabilities: [CAP] }, 64 * 1024 + 1)],
    // error statuses carry a body that would be valid on a 200: the status alone must decide
    ...[404, 429, 500, 503].map((status) => [`${status}`, reply.json(status, { capabilities: [CAP] })]),
  ];
  for (const [name, behaviour] of cases) {
    test(name, async (t) => {
      await expectIndeterminate(await fakeAuthority(t), behaviour);
    });
  }

  test('accepts the connection and never answers: bounded by refresh.timeoutMs', async (t) => {
    await expectIndeterminate(await fakeAuthority(t), reply.hang(), { boundedByTimeout: true });
  });

  test('sends headers, then stalls the body: bounded by refresh.timeoutMs', async (t) => {
    await expectIndeterminate(await fakeAuthority(t), reply.stallBody(), { boundedByTimeout: true });
  });

  for (const status of [302, 307]) {
    test(`${status} redirect is not followed (the target is never asked)`, async (t) => {
      const target = await fakeAuthority(t);
      target.respondWith(VALID); // following the redirect would have produced evidence
      const fake = await fakeAuthority(t);
      await expectIndeterminate(fake, reply.redirect(target.url, status));
      assert.equal(target.requests.length, 0, 'the redirect target received a request');
    });
  }

  test('connection refused: no evidence, refreshing goes on, and after a valid it degrades', async (t) => {
    const url = await refusedUrl();
    const sentinel = startSentinel({ url });
    // Nothing can be observed from a refused port, so this is an absence check: across many
    // refresh cycles (interval ≤ 40 ms) the sentinel neither gets evidence nor reports a denial.
    await quietPeriod(400);
    assert.deepEqual(sentinel.readiness(), NO_EVIDENCE);

    // The authority comes up on that very port: the sentinel was still refreshing and recovers.
    const fake = await fakeAuthority(t, { httpPort: Number(new URL(url).port) });
    fake.respondWith(VALID);
    assert.deepEqual(pick(await whenReady(sentinel, fake), READY), READY);

    // It goes away again: refused after a valid is indeterminate, so degraded, not a denial.
    await fake.close();
    const { readiness, seen } = await waitForReadiness(sentinel, { status: 'degraded' });
    assert.deepEqual(pick(readiness, DEGRADED), DEGRADED, `seen: ${seen.join(' → ')}`);
  });
});

describe('HTTP authority: TLS', { timeout: 20000 }, () => {
  /** Node's own client as a control, so a broken fixture is reported here and not as an addon bug. */
  const nodeGet = (url, options) =>
    new Promise((resolve, reject) => {
      https.get(url, options, (res) => res.resume().on('end', () => resolve(res.statusCode))).on('error', reject);
    });

  test('fixtures: Node https trusts server-cert.pem through ca.pem, and only through it', async (t) => {
    const fake = await fakeAuthority(t);
    fake.respondWith(VALID);
    assert.equal(await nodeGet(fake.httpsUrl, { ca: TLS.caPem, agent: false }), 200);
    assert.equal(await nodeGet(fake.httpsUrl.replace('127.0.0.1', 'localhost'), { ca: TLS.caPem, agent: false }), 200);
    await assert.rejects(nodeGet(fake.httpsUrl, { agent: false }), { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
  });

  test('https with caPem trusting the test CA → valid', async (t) => {
    const fake = await fakeAuthority(t);
    await expectValid(fake, VALID, { authority: { url: fake.httpsUrl, caPem: TLS.caPem } });
    assert.equal(fake.requests[0].protocol, 'https');
  });

  test('the same https server without caPem → indeterminate (TLS failure)', async (t) => {
    const fake = await fakeAuthority(t);
    fake.respondWith(VALID);
    const sentinel = startSentinel(fake, { authority: { url: fake.httpsUrl } });
    await fake.waitForTlsFailures(2); // two refreshes tried and failed the handshake
    assert.deepEqual(sentinel.readiness(), NO_EVIDENCE);
    assert.equal(fake.requests.length, 0, 'a request got through an untrusted TLS connection');
  });
});

describe('HTTP authority: the request ("one refresh")', { timeout: 20000 }, () => {
  /** The first request a sentinel configured with `overrides` sends. */
  async function firstRequest(fake, overrides) {
    fake.respondWith(VALID);
    const sentinel = startSentinel(fake, overrides);
    const [request] = await fake.waitForRequests(1);
    return { sentinel, request };
  }

  test('default: GET <url path>, authorization: Bearer <credential>, accept: application/json', async (t) => {
    const fake = await fakeAuthority(t, { path: '/v1/account?view=meters' });
    const { sentinel, request } = await firstRequest(fake);
    assert.equal(request.method, 'GET');
    assert.equal(request.path, '/v1/account?view=meters');
    assert.equal(request.headers.authorization, `Bearer ${CREDENTIAL}`);
    assert.equal(request.headers.accept, 'application/json');
    // The credential went to the authority and nowhere else visible.
    const readiness = await whenReady(sentinel, fake);
    assert.ok(!JSON.stringify(readiness).includes(CREDENTIAL));
  });

  test('custom header and scheme', async (t) => {
    const fake = await fakeAuthority(t);
    const { request } = await firstRequest(fake, { authority: { header: 'x-api-key', scheme: 'Token' } });
    assert.equal(request.headers['x-api-key'], `Token ${CREDENTIAL}`);
    assert.equal(request.headers.authorization, undefined, 'the credential is sent in the configured header only');
    assert.equal(request.headers.accept, 'application/json');
  });

  test("scheme '' sends the bare credential", async (t) => {
    const fake = await fakeAuthority(t);
    const { request } = await firstRequest(fake, { authority: { scheme: '' } });
    assert.equal(request.headers.authorization, CREDENTIAL);
  });

  test('credentialEnv reads the credential from that environment variable', async (t) => {
    const name = `SPEND_SENTINEL_TEST_CREDENTIAL_${process.pid}`;
    const fromEnv = `sk_env_${randomBytes(12).toString('hex')}`;
    process.env[name] = fromEnv;
    t.after(() => delete process.env[name]);
    const fake = await fakeAuthority(t);
    const { request } = await firstRequest(fake, { authority: { credential: undefined, credentialEnv: name } });
    assert.equal(request.headers.authorization, `Bearer ${fromEnv}`);
  });
});
