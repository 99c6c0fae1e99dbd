// The credential never appears in a readiness result, an event, a thrown error (its
// message or stack), util.inspect / JSON.stringify / String of the sentinel, a configuration error,
// or a log line. A unique credential is driven through many states and every output is scanned
// for it and for its base64 / base64url / hex encodings.
import { describe, test, afterEach, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';
import { startEchoAuthority } from './helpers/echo-authority.mjs';
import { reply as fakeReply, startFakeAuthority } from './helpers/fake-authority.mjs';
import {
  FAST_BUDGET,
  FAST_REFRESH,
  catchError,
  closedPort,
  recordTransitions,
  rejectionOf,
  runNode,
  sentinelPool,
} from './helpers/wait.mjs';

const { Sentinel } = createRequire(import.meta.url)('../js/main.js');
const promClient = createRequire(import.meta.url)('prom-client');
const { collect } = createRequire(import.meta.url)('spend-sentinel/prom-client');

const SECRET = `sk_live_${randomBytes(16).toString('hex')}`;
const SECRET_ENV = `SPEND_SENTINEL_TEST_SECRET_${randomBytes(4).toString('hex').toUpperCase()}`;
process.env[SECRET_ENV] = SECRET;
after(() => delete process.env[SECRET_ENV]);

const bytes = Buffer.from(SECRET);
const FORMS = {
  raw: SECRET,
  base64: bytes.toString('base64'),
  base64url: bytes.toString('base64url'),
  hex: bytes.toString('hex'),
  'base64 of the header value': Buffer.from(`Bearer ${SECRET}`).toString('base64'),
};

/** Text of anything a user could see: strings as is, everything else deeply inspected. */
function render(value) {
  if (typeof value === 'string') return value;
  if (value instanceof Error) return `${value.message}\n${value.stack}\n${inspect(value, { showHidden: true, depth: 10 })}`;
  return inspect(value, { showHidden: true, depth: 10, getters: true });
}

function assertClean(value, where) {
  const text = render(value);
  for (const [form, needle] of Object.entries(FORMS)) {
    assert.ok(!text.includes(needle), `${where} leaks the credential (${form}): ${text.slice(0, 2000)}`);
  }
}

/** Every view of a live sentinel a user might print. */
function assertSentinelClean(sentinel, where) {
  assertClean(sentinel.readiness(), `${where}: readiness()`);
  assertClean(inspect(sentinel, { showHidden: true, depth: 5 }), `${where}: util.inspect(sentinel)`);
  assertClean(inspect(sentinel, { showHidden: true, depth: 5, getters: true }), `${where}: util.inspect(sentinel, getters)`);
  let json;
  try {
    json = String(JSON.stringify(sentinel));
  } catch (err) {
    json = err;
  }
  assertClean(json, `${where}: JSON.stringify(sentinel)`);
  assertClean(String(sentinel), `${where}: String(sentinel)`);
  assertClean(inspect(Object.getPrototypeOf(sentinel), { showHidden: true, depth: 5 }), `${where}: prototype`);
}

const pool = sentinelPool(Sentinel);
afterEach(() => pool.closeAll());

const CREDENTIAL_FORMS = [
  ['credential', { credential: SECRET }],
  ['credentialEnv', { credentialEnv: SECRET_ENV }],
];

function httpOptions(url, credentialForm, extra = {}) {
  return {
    budget: { ...FAST_BUDGET },
    refresh: { ...FAST_REFRESH },
    authority: { url, ...credentialForm, requiredCapability: 'metered-api', allowInsecureHttp: true, ...extra },
  };
}

describe('the credential does not leak from a running sentinel', () => {
  for (const [formName, credentialForm] of CREDENTIAL_FORMS) {
    test(`${formName}: through ready, degraded, denials, stale evidence, drain and close`, async () => {
      const authority = await startEchoAuthority();
      try {
        const sentinel = pool.make(httpOptions(authority.url, credentialForm));
        const transitions = recordTransitions(sentinel);
        assertSentinelClean(sentinel, 'just constructed');

        /** Does `action`, waits for the next transition matching `match`, then scans everything. */
        let cursor = 0; // index after the last transition waited for
        const reach = async (label, match, action = () => {}) => {
          action();
          const event = await transitions.waitFor(match, { ms: 5000, from: cursor, label });
          cursor = transitions.events.indexOf(event) + 1;
          assertSentinelClean(sentinel, label);
        };
        const reply = (...args) => () => authority.reply(...args);
        const VALID = [200, { capabilities: ['metered-api'] }];

        await reach('ready', { to: 'ready' });
        assert.ok(authority.seen.includes(`Bearer ${SECRET}`), 'test premise: the credential is sent to the authority');
        await reach('budget_exhausted', { reason: 'budget_exhausted' }, () => assert.equal(sentinel.admit(sentinel.nodeBudgetUnits), true));
        await reach('ledger cleared by the next valid refresh', { to: 'ready' });
        await reach('degraded (503)', { to: 'degraded' }, reply(503, { error: 'busy' }));
        await reach('invalid_credential (401)', { reason: 'invalid_credential' }, reply(401, { error: 'bad token' }));
        assertClean(await rejectionOf(sentinel.whenReady({ timeoutMs: 50 }), 3000, 'whenReady timeout'), 'whenReady timeout error');
        await reach('ready after the denial', { to: 'ready' }, reply(...VALID));
        await reach('capability_missing', { reason: 'capability_missing' }, reply(200, { capabilities: ['other'] }));
        await reach('ready again', { to: 'ready' }, reply(...VALID));
        await reach('degraded (500)', { to: 'degraded' }, reply(500, { error: 'boom' }));
        await reach('evidence_too_old', { reason: 'evidence_too_old' });

        sentinel.drain();
        assertSentinelClean(sentinel, 'draining');
        sentinel.close();
        assertSentinelClean(sentinel, 'closed');
        assertClean(await rejectionOf(sentinel.whenReady({ timeoutMs: 50 }), 3000, 'whenReady after close'), 'whenReady after close error');
        assert.ok(transitions.events.length >= 9, `saw ${transitions.events.length} transitions`);
        assertClean(transitions.events, 'transition events');
      } finally {
        await authority.close();
      }
    });

    test(`${formName}: unreachable authority (closed port)`, async () => {
      const sentinel = pool.make(httpOptions(`http://127.0.0.1:${await closedPort()}/v1/account`, credentialForm));
      const transitions = recordTransitions(sentinel);
      assertSentinelClean(sentinel, 'no evidence');
      assertClean(await rejectionOf(sentinel.whenReady({ timeoutMs: 400 }), 3000, 'whenReady timeout'), 'whenReady timeout error');
      assertSentinelClean(sentinel, 'after several refused connections');
      sentinel.drain();
      assertSentinelClean(sentinel, 'draining');
      sentinel.close();
      assertSentinelClean(sentinel, 'closed');
      assertClean(transitions.events, 'transition events');
    });
  }

  test('a credential that is not a valid header value does not leak either way', async () => {
    const port = await closedPort();
    const options = httpOptions(`http://127.0.0.1:${port}/v1/account`, { credential: `${SECRET}\r\nx-injected: 1` });
    let sentinel;
    try {
      sentinel = pool.make(options);
    } catch (err) {
      assertClean(err, 'config error for a credential with CR/LF');
      return;
    }
    await rejectionOf(sentinel.whenReady({ timeoutMs: 200 }), 3000, 'whenReady');
    assertSentinelClean(sentinel, 'credential with CR/LF');
  });
});

const CERT = readFileSync(new URL('./fixtures/server-cert.pem', import.meta.url), 'utf8');
/** A PEM block whose body is `body`: what a key pasted into the wrong place looks like. */
const keyLike = (body) => `-----BEGIN PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----\n`;

describe('configuration errors next to the credential do not leak it', () => {
  const url = 'https://127.0.0.1:9/v1/account';
  const withCredential = (authorityExtra = {}, top = {}) => ({
    budget: { ...FAST_BUDGET },
    authority: { url, credential: SECRET, requiredCapability: 'metered-api', ...authorityExtra },
    ...top,
  });
  /** Fleet-budget options around `fleet`; the authority is a harmless inspect. */
  const fleetOptions = (fleet) => ({
    budget: { ...FAST_BUDGET, fleet: { name: 'secrets', maxNodes: 2, ...fleet } },
    authority: { inspect: async () => 'valid' },
  });
  const BAD = [
    ['bad budget', withCredential({}, { budget: { unverifiedUnits: -1, maxUnitsPerSecond: 100 } })],
    ['bad refresh', withCredential({}, { refresh: { timeoutMs: 0 } })],
    ['unknown top-level key', withCredential({}, { verbose: true })],
    ['bad header name', withCredential({ header: 'x api key' })],
    ['bad capabilitiesPointer', withCredential({ capabilitiesPointer: 'capabilities' })],
    ['bad caPem', withCredential({ caPem: `not a pem ${'x'.repeat(10)}` })],
    ['http without allowInsecureHttp', withCredential({ url: 'http://127.0.0.1:9/v1/account' })],
    ['unparsable url', withCredential({ url: 'not a url' })],
    ['unknown authority key', withCredential({ token: 'x' })],
    ['both url and inspect', withCredential({ inspect: async () => 'valid' })],
    ['credential and credentialEnv', withCredential({ credentialEnv: SECRET_ENV })],
    ['credentialEnv and a bad header', { budget: { ...FAST_BUDGET }, authority: { url, credentialEnv: SECRET_ENV, requiredCapability: 'm', header: 'a:b' } }],
    ['allowInsecureHttp not a boolean', withCredential({ allowInsecureHttp: 'yes' })],
    ['credential of the wrong type next to a string secret', withCredential({ credential: [SECRET] })],
    // The value passed where the name belongs (`credentialEnv: process.env.KEY`): never echoed,
    // whether or not it looks like a variable name.
    ['credentialEnv given the credential itself', { budget: { ...FAST_BUDGET }, authority: { url, credentialEnv: SECRET, requiredCapability: 'm' } }],
    ['credentialEnv given the credential with a dash', { budget: { ...FAST_BUDGET }, authority: { url, credentialEnv: `${SECRET}-x`, requiredCapability: 'm' } }],
    ['credential with a non-ASCII letter', withCredential({ credential: `${SECRET}é` })],
    ['credential in the URL', withCredential({ url: `https://user:${SECRET}@127.0.0.1:9/v1/account` })],
    // The fleet budget's Redis URL carries a password: the same rule.
    ['redis URL with a password and a bad fleet option', fleetOptions({ redis: `redis://user:${SECRET}@127.0.0.1:9/0`, maxNodes: 0 })],
    ['redis URL with a password and a bad scheme', fleetOptions({ redis: `http://user:${SECRET}@127.0.0.1:9/0` })],
    ['redisEnv given the URL itself', fleetOptions({ redisEnv: `redis://user:${SECRET}@127.0.0.1:9/0` })],
    ['redisEnv given a name-shaped secret', fleetOptions({ redisEnv: SECRET })],
    ['redisEnv naming a variable with a bad URL', fleetOptions({ redisEnv: SECRET_ENV })],
    // budget.fleet.tls.key is a private key: the same rule.
    ['tls.key not a key', fleetOptions({ redis: 'rediss://127.0.0.1:9', tls: { cert: CERT, key: keyLike(SECRET) } })],
    ['tls.key without a cert', fleetOptions({ redis: 'rediss://127.0.0.1:9', tls: { key: keyLike(SECRET) } })],
    ['tls.key over its length limit', fleetOptions({ redis: 'rediss://127.0.0.1:9', tls: { cert: CERT, key: keyLike(SECRET.repeat(2000)) } })],
    ['tls.key with a redis:// URL', fleetOptions({ redis: 'redis://127.0.0.1:9', tls: { cert: CERT, key: keyLike(SECRET) } })],
    ['tls.key of the wrong type', fleetOptions({ redis: 'rediss://127.0.0.1:9', tls: { cert: CERT, key: [keyLike(SECRET)] } })],
    ['tls.key and an unknown tls option', fleetOptions({ redis: 'rediss://127.0.0.1:9', tls: { cert: CERT, key: keyLike(SECRET), pass: SECRET } })],
  ];
  for (const [name, options] of BAD) {
    test(name, () => {
      const err = catchError(() => pool.make(options));
      assert.equal(err.code, 'ERR_SPEND_SENTINEL_CONFIG', `code of: ${err.message}`);
      assertClean(err, 'configuration error');
    });
  }
});

test('no log line of a child process carries the credential (RUST_LOG=trace)', async () => {
  const child = await runNode(
    [fileURLToPath(new URL('./fixtures/child.mjs', import.meta.url)), 'secrets-logs', String(await closedPort())],
    {
      timeoutMs: 20000,
      env: { ...process.env, SPEND_SENTINEL_CHILD_SECRET: SECRET, RUST_LOG: 'trace', RUST_BACKTRACE: 'full', DEBUG: '*' },
    },
  );
  assert.equal(child.code, 0, `child exit ${child.code}; stderr: ${child.stderr.slice(0, 2000)}`);
  assertClean(child.stdout, 'child stdout');
  assertClean(child.stderr, 'child stderr');
});

// Observability (metrics, metricFamilies, the prom-client bridge, the logger) next to secrets: a
// credential, a URL whose path and query carry secrets of their own (signed URLs, tenant keys),
// and an authority whose answers carry a marker. None of them may show in any metric, family,
// registry output or logged object/message, whatever state the sentinel goes through.
describe('metrics and logs carry no credential, URL secret or authority answer', () => {
  const QUERY_SECRET = `qsec${randomBytes(12).toString('hex')}`;
  const PATH_SECRET = `psec${randomBytes(12).toString('hex')}`;
  const BODY_SECRET = `bsec${randomBytes(12).toString('hex')}`;
  const NEEDLES = {
    ...FORMS,
    'the URL query secret': QUERY_SECRET,
    'the URL path secret': PATH_SECRET,
    'the authority answer marker': BODY_SECRET,
    'base64 of the authority answer marker': Buffer.from(BODY_SECRET).toString('base64'),
  };

  function assertNoSecrets(value, where) {
    const text = render(value);
    for (const [form, needle] of Object.entries(NEEDLES)) {
      assert.ok(!text.includes(needle), `${where} leaks ${form}: ${text.slice(0, 2000)}`);
    }
  }

  const VALID = fakeReply.json(200, { capabilities: ['metered-api'], account: BODY_SECRET, note: `tier of ${BODY_SECRET}` });

  for (const [formName, credentialForm] of CREDENTIAL_FORMS) {
    test(`${formName}: metrics(), metricFamilies(), prom-client output and every log line, through ready, degraded, denials, stale evidence, drain and close`, async () => {
      const authority = await startFakeAuthority({ path: `/v1/accounts/${PATH_SECRET}` });
      const register = new promClient.Registry();
      let remove = () => {};
      try {
        authority.respondWith(VALID);
        const lines = [];
        const logger = {};
        for (const level of ['info', 'warn', 'error']) logger[level] = (obj, msg) => lines.push({ level, obj, msg });
        const url = `${authority.url}?api_key=${QUERY_SECRET}&region=eu`;
        const sentinel = pool.make({ ...httpOptions(url, credentialForm), logger });
        remove = collect(sentinel, register);
        const transitions = recordTransitions(sentinel);

        const scanAll = async (label) => {
          assertNoSecrets(sentinel.metrics(), `${label}: metrics()`);
          assertNoSecrets(JSON.stringify(sentinel.metricFamilies()), `${label}: JSON.stringify(metricFamilies())`);
          assertNoSecrets(sentinel.metricFamilies(), `${label}: util.inspect(metricFamilies())`);
          assertNoSecrets(await register.metrics(), `${label}: prom-client registry.metrics()`);
          assertNoSecrets(JSON.stringify(await register.getMetricsAsJSON()), `${label}: prom-client getMetricsAsJSON()`);
          for (const [i, line] of lines.entries()) {
            assertNoSecrets(line.msg, `${label}: log line ${i} message`);
            assertNoSecrets(JSON.stringify(line.obj), `${label}: log line ${i} fields (JSON)`);
            assertNoSecrets(line.obj, `${label}: log line ${i} fields (inspect)`);
          }
        };
        let cursor = 0;
        const reach = async (label, match, behaviour) => {
          if (behaviour) authority.respondWith(behaviour);
          const event = await transitions.waitFor(match, { ms: 5000, from: cursor, label });
          cursor = transitions.events.indexOf(event) + 1;
          await scanAll(label);
        };

        await reach('ready', { to: 'ready' });
        const sent = authority.requests.at(-1);
        assert.ok(sent.path.includes(QUERY_SECRET) && sent.path.includes(PATH_SECRET), `test premise: the URL secrets are sent (${sent.path})`);
        assert.equal(sent.headers.authorization, `Bearer ${SECRET}`, 'test premise: the credential is sent');
        await reach('degraded (503 HTML page)', { to: 'degraded' }, fakeReply.text(503, `<html><body>${BODY_SECRET}</body></html>`, 'text/html'));
        await reach('invalid_credential (401)', { reason: 'invalid_credential' }, fakeReply.json(401, { error: `token rejected: ${BODY_SECRET}` }));
        await reach('ready after the denial', { to: 'ready' }, VALID);
        await reach('capability_missing', { reason: 'capability_missing' }, fakeReply.json(200, { capabilities: ['other', BODY_SECRET], account: BODY_SECRET }));
        await reach('ready again', { to: 'ready' }, VALID);
        await reach('degraded (broken JSON)', { to: 'degraded' }, fakeReply.json(200, `{"capabilities":["metered-api"],"account":"${BODY_SECRET}"`));
        await reach('evidence_too_old', { reason: 'evidence_too_old' });
        sentinel.drain(); // not_ready already: no transition, but the scans run on the draining sentinel
        await scanAll('draining');
        sentinel.close();
        await scanAll('closed');

        // Premise: the scans saw real lines of every kind.
        const refreshOutcomes = new Set(lines.filter((l) => l.obj.event === 'spend_sentinel.refresh').map((l) => l.obj.outcome));
        assert.deepEqual([...refreshOutcomes].sort(), ['capability_missing', 'indeterminate', 'invalid_credential'], 'refresh lines seen');
        assert.ok(lines.filter((l) => l.obj.event === 'spend_sentinel.transition').length >= 8, `transition lines seen: ${lines.length}`);
      } finally {
        remove();
        await authority.close();
      }
    });
  }
});
