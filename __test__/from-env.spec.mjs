// Sentinel.fromEnv (docs/api.md, Options from the environment): the options from SPEND_SENTINEL_*
// variables named after the option paths, overrides merged over them key by key, errors that
// name the variable and never show a secret.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { inspect, promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startFakeAuthority, refusedUrl, reply } from './helpers/fake-authority.mjs';
import { catchError } from './helpers/wait.mjs';
import { countingGetters } from './helpers/read-once.mjs';

const { Sentinel } = createRequire(import.meta.url)('spend-sentinel');
const CHILD = fileURLToPath(new URL('./fixtures/from-env-child.mjs', import.meta.url));
const SECRET = `sk_live_${randomBytes(12).toString('hex')}`;
const CAPABLE = reply.json(200, { capabilities: ['meter.requests', 'meter.tokens'] });

/** b 300 over 3 nodes at r 20/s: node budget 100, window 5 s. */
const BUDGET = {
  SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS: '300',
  SPEND_SENTINEL_BUDGET_MAX_UNITS_PER_SECOND: '20',
  SPEND_SENTINEL_BUDGET_NODES: '3',
};
const VALID = { authority: { inspect: async () => 'valid' } };

/** Runs the child with only `vars` (and PATH) as its environment; resolves what it printed. */
async function child(mode, vars) {
  const env = { PATH: process.env.PATH, ...vars };
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [CHILD, mode], { env, timeout: 15_000 });
  assert.equal(stderr, '');
  return { printed: stdout, ...JSON.parse(stdout) };
}

/** `Sentinel.fromEnv(env, overrides)`, closed after the test. */
function fromEnv(env, overrides) {
  const sentinel = Sentinel.fromEnv(env, overrides);
  after(() => sentinel.close());
  return sentinel;
}

/** The error `Sentinel.fromEnv(env, overrides)` throws: a configuration error. */
function configError(env, overrides) {
  const err = catchError(() => fromEnv(env, overrides));
  assert.ok(err instanceof Error && !(err instanceof TypeError), `${err}`);
  assert.equal(err.code, 'ERR_SPEND_SENTINEL_CONFIG', err.message);
  return err;
}

describe('in a process configured by its environment (Sentinel.fromEnv() reads process.env)', () => {
  test('the HTTP adapter: URL, capabilities, a credential named by credentialEnv from a file (one newline)', async () => {
    const authority = await startFakeAuthority();
    after(() => authority.close());
    authority.respondWith(CAPABLE);
    const out = await child('http', {
      ...BUDGET,
      SPEND_SENTINEL_AUTHORITY_URL: authority.url,
      SPEND_SENTINEL_AUTHORITY_ALLOW_INSECURE_HTTP: 'true',
      SPEND_SENTINEL_AUTHORITY_CREDENTIAL_ENV: 'BILLING_API_KEY',
      SPEND_SENTINEL_AUTHORITY_REQUIRED_CAPABILITIES: 'meter.requests, meter.tokens',
      SPEND_SENTINEL_REFRESH_BREAKER: 'true',
      BILLING_API_KEY: `${SECRET}\n`,
    });
    assert.deepEqual(out, { printed: out.printed, nodeBudgetUnits: 100, staleWindowSeconds: 5, status: 'ready', fleet: null });
    assert.equal(authority.requests.at(-1).headers.authorization, `Bearer ${SECRET}`);
  });

  test('a fleet budget: maxNodes, reserve and the Redis URL by name; the read-out says so', async () => {
    const out = await child('fleet', {
      SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS: '2000',
      SPEND_SENTINEL_BUDGET_MAX_UNITS_PER_SECOND: '50',
      SPEND_SENTINEL_BUDGET_FLEET_NAME: 'metering',
      SPEND_SENTINEL_BUDGET_FLEET_MAX_NODES: '25',
      SPEND_SENTINEL_BUDGET_FLEET_RESERVE: '0.5',
      SPEND_SENTINEL_BUDGET_FLEET_REDIS_ENV: 'REDIS_URL',
      REDIS_URL: `${(await refusedUrl('/')).replace('http:', 'redis:')}\n`,
    });
    // floor = b × reserve / maxNodes = 2000 × 0.5 / 25 = 40; w = 40 / 50 on the floor alone.
    assert.deepEqual(out.fleet, { maxNodes: 25, floorUnits: 40, mode: 'connecting' });
    assert.equal(out.nodeBudgetUnits, 40);
    assert.equal(out.staleWindowSeconds, 0.8);
  });

  test('a bad value names its variable, and an unknown SPEND_SENTINEL_ variable is refused', async () => {
    const bad = await child('fleet', { ...BUDGET, SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS: '200k' });
    assert.deepEqual(bad, {
      printed: bad.printed,
      code: 'ERR_SPEND_SENTINEL_CONFIG',
      message: 'SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS: must be a number (got "200k")',
    });
    const typo = await child('fleet', { ...BUDGET, SPEND_SENTINEL_BUDGET_FLEET_MAXNODES: '25' });
    assert.equal(typo.code, 'ERR_SPEND_SENTINEL_CONFIG');
    assert.match(typo.message, /^SPEND_SENTINEL_BUDGET_FLEET_MAXNODES: is not the variable of any option; did you mean SPEND_SENTINEL_BUDGET_FLEET_MAX_NODES\?/);
  });
});

describe('Sentinel.fromEnv(env, overrides)', () => {
  test('makes the sentinel the same options would: read-outs, the per-instance methods, reserve', async () => {
    const sentinel = fromEnv(BUDGET, VALID);
    const made = new Sentinel({ budget: { unverifiedUnits: 300, maxUnitsPerSecond: 20, nodes: 3 }, ...VALID });
    after(() => made.close());
    assert.ok(sentinel instanceof Sentinel);
    assert.deepEqual([sentinel.nodeBudgetUnits, sentinel.staleWindowSeconds], [made.nodeBudgetUnits, made.staleWindowSeconds]);
    const own = (s) => Object.getOwnPropertyNames(s).sort();
    assert.ok(own(made).includes('admit'), `the constructor's instance: ${own(made)}`);
    assert.deepEqual(own(sentinel), own(made), 'the per-instance native methods (admit, status, …)');
    assert.equal((await sentinel.whenReady({ timeoutMs: 5000 })).status, 'ready');
    assert.equal(sentinel.admit(40), true);
    assert.ok(sentinel.reserve(10));
    assert.equal(sentinel.exposureUnits, 50);
  });

  test('overrides win key by key; code gives inspect and the logger there', async () => {
    const lines = [];
    const logger = { info: (obj, msg) => lines.push(msg), warn: () => {}, error: () => {} };
    const { SPEND_SENTINEL_BUDGET_NODES, ...withoutNodes } = BUDGET;
    const sentinel = fromEnv(withoutNodes, { budget: { maxUnitsPerSecond: 40, share: 0.5 }, ...VALID, logger });
    // b 300 (the environment's) × share 0.5 (an override) / r 40 (an override over the 20 of the environment).
    assert.equal(sentinel.nodeBudgetUnits, 150);
    assert.equal(sentinel.staleWindowSeconds, 3.75);
    await sentinel.whenReady({ timeoutMs: 5000 });
    assert.ok(lines.length > 0, 'the logger of the overrides hears the transition to ready');
    // What the constructor refuses together is refused here too; the message names both sources.
    assert.equal(
      configError({ ...withoutNodes, SPEND_SENTINEL_BUDGET_NODES }, { budget: { share: 0.5 }, ...VALID }).message,
      'budget.share: give either SPEND_SENTINEL_BUDGET_NODES or budget.share, not both',
    );
  });

  test('the overrides are read once: the logger and inspect the config validated are the ones it runs with', async () => {
    const overrides = {};
    const { reads, firstLine } = countingGetters(overrides);
    fromEnv(BUDGET, overrides);
    assert.deepEqual(await firstLine, { logger: 'validated', said: 'invalid_credential' });
    assert.deepEqual(reads, { logger: 1, authority: 1, inspect: 1 });
  });

  // (Without `env`, process.env: the child processes above.)
  test('an undefined override changes nothing', () => {
    const sentinel = fromEnv(BUDGET, { budget: { nodes: undefined }, refresh: undefined, ...VALID });
    assert.equal(sentinel.nodeBudgetUnits, 100);
  });

  test('a bad value names its variable; one the parser refuses too; one of the overrides names its option', () => {
    assert.equal(
      configError({ ...BUDGET, SPEND_SENTINEL_BUDGET_NODES: '2.5e' }, VALID).message,
      'SPEND_SENTINEL_BUDGET_NODES: must be a number (got "2.5e")',
    );
    assert.match(configError({ ...BUDGET, SPEND_SENTINEL_BUDGET_NODES: '0' }, VALID).message, /^SPEND_SENTINEL_BUDGET_NODES: .*whole number/);
    assert.match(configError({ ...BUDGET, SPEND_SENTINEL_REFRESH_BREAKER: 'false' }, VALID).message, /^SPEND_SENTINEL_REFRESH_BREAKER: must be true\b/);
    assert.match(configError({ ...BUDGET, SPEND_SENTINEL_AUTHORITY_ALLOW_INSECURE_HTTP: 'yes' }, VALID).message, /^SPEND_SENTINEL_AUTHORITY_ALLOW_INSECURE_HTTP: must be true or false/);
    assert.match(configError(BUDGET, { budget: { nodes: 0 }, ...VALID }).message, /^budget\.nodes: /);
    assert.match(configError({ SPEND_SENTINEL_BUDGET_NODES: 3 }, VALID).message, /^SPEND_SENTINEL_BUDGET_NODES: must be a string \(got number\)/);
    assert.match(configError(BUDGET).message, /^authority: is required.*SPEND_SENTINEL_AUTHORITY_\*/);
    assert.match(configError(null).message, /^env: must be an object/);
    assert.match(configError(BUDGET, 'valid').message, /^overrides: must be an options object/);
  });

  test('an unknown SPEND_SENTINEL_ variable is refused; the package\'s own and other variables are left alone', () => {
    const err = configError({ ...BUDGET, SPEND_SENTINEL_BUDGET_UNVERIFED_UNITS: '300' }, VALID);
    assert.match(err.message, /^SPEND_SENTINEL_BUDGET_UNVERIFED_UNITS: .*did you mean SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS\?/);
    const sentinel = fromEnv({ ...BUDGET, SPEND_SENTINEL_NO_INSTALL: '1', FLEET_MAX_NODES: '25', HOME: '/' }, VALID);
    assert.equal(sentinel.nodeBudgetUnits, 100);
  });

  test('a secret with a trailing newline works: one newline is dropped, not two', async () => {
    const authority = await startFakeAuthority();
    after(() => authority.close());
    authority.respondWith(CAPABLE);
    const http = { ...BUDGET, SPEND_SENTINEL_AUTHORITY_URL: authority.url, SPEND_SENTINEL_AUTHORITY_ALLOW_INSECURE_HTTP: 'true', SPEND_SENTINEL_AUTHORITY_REQUIRED_CAPABILITY: 'meter.requests' };
    const sentinel = fromEnv({ ...http, SPEND_SENTINEL_AUTHORITY_CREDENTIAL: `${SECRET}\n` });
    await sentinel.whenReady({ timeoutMs: 5000 });
    assert.equal(authority.requests.at(-1).headers.authorization, `Bearer ${SECRET}`);
    const two = configError({ ...http, SPEND_SENTINEL_AUTHORITY_CREDENTIAL: `${SECRET}\n\n` });
    assert.match(two.message, /^SPEND_SENTINEL_AUTHORITY_CREDENTIAL: must be visible ASCII/);
    assert.ok(!two.message.includes(SECRET), two.message);
  });

  test('credentialEnv is looked up in the same env, not in the process\'s', () => {
    process.env.FROM_ENV_TEST_KEY = SECRET;
    after(() => delete process.env.FROM_ENV_TEST_KEY);
    const http = { ...BUDGET, SPEND_SENTINEL_AUTHORITY_URL: 'https://billing.example/v1', SPEND_SENTINEL_AUTHORITY_REQUIRED_CAPABILITY: 'm', SPEND_SENTINEL_AUTHORITY_CREDENTIAL_ENV: 'FROM_ENV_TEST_KEY' };
    assert.equal(configError(http).message, 'SPEND_SENTINEL_AUTHORITY_CREDENTIAL_ENV: the environment variable it names is not set');
    assert.equal(fromEnv({ ...http, FROM_ENV_TEST_KEY: SECRET }).nodeBudgetUnits, 100);
  });

  test('a bad secret\'s error never shows it, nor does the sentinel', () => {
    const http = { ...BUDGET, SPEND_SENTINEL_AUTHORITY_URL: 'https://billing.example/v1', SPEND_SENTINEL_AUTHORITY_REQUIRED_CAPABILITY: 'm' };
    const password = `pw${randomBytes(8).toString('hex')}`;
    const cases = [
      [{ ...http, SPEND_SENTINEL_AUTHORITY_CREDENTIAL: `${SECRET} x` }, SECRET, /^SPEND_SENTINEL_AUTHORITY_CREDENTIAL: /],
      [{ ...http, SPEND_SENTINEL_AUTHORITY_CREDENTIAL_ENV: 'K', K: `é${SECRET}` }, SECRET, /^SPEND_SENTINEL_AUTHORITY_CREDENTIAL_ENV: /],
      [{ ...http, SPEND_SENTINEL_AUTHORITY_CREDENTIAL: SECRET, SPEND_SENTINEL_BUDGET_NODES: undefined, SPEND_SENTINEL_BUDGET_FLEET_NAME: 'f', SPEND_SENTINEL_BUDGET_FLEET_MAX_NODES: '2', SPEND_SENTINEL_BUDGET_FLEET_REDIS: `http://:${password}@127.0.0.1:6379` }, password, /^SPEND_SENTINEL_BUDGET_FLEET_REDIS: /],
    ];
    for (const [env, secret, variable] of cases) {
      const err = configError(env);
      assert.match(err.message, variable);
      assert.ok(!err.message.includes(secret) && !inspect(err).includes(secret), err.message);
    }
    const sentinel = fromEnv({ ...http, SPEND_SENTINEL_AUTHORITY_CREDENTIAL: `${SECRET}\n` });
    assert.ok(!inspect(sentinel, { showHidden: true, depth: 5 }).includes(SECRET));
    assert.ok(!JSON.stringify(sentinel).includes(SECRET));
  });
});
