// Options (docs/api.md): every option is validated at construction. A bad one throws an Error with
// code ERR_SPEND_SENTINEL_CONFIG whose message names the option path and the rule it breaks,
// and never contains the credential.
import { describe, test, afterEach, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { SEED_BUDGET, catchError, never, sentinelPool } from './helpers/wait.mjs';
import { countingGetters } from './helpers/read-once.mjs';

const { Sentinel } = createRequire(import.meta.url)('../js/main.js');

const SECRET = `sk_live_${randomBytes(16).toString('hex')}`;
const tag = randomBytes(4).toString('hex').toUpperCase();
const ENV_UNSET = `SPEND_SENTINEL_TEST_UNSET_${tag}`;
const ENV_EMPTY = `SPEND_SENTINEL_TEST_EMPTY_${tag}`;
const ENV_SET = `SPEND_SENTINEL_TEST_SET_${tag}`;
delete process.env[ENV_UNSET];
process.env[ENV_EMPTY] = '';
process.env[ENV_SET] = SECRET;
after(() => {
  delete process.env[ENV_EMPTY];
  delete process.env[ENV_SET];
});

const TEST_CA_PEM = readFileSync(new URL('./fixtures/test-ca.pem', import.meta.url), 'utf8');

/** Valid HTTP-form options around the seed budget (node budget 100, window 5 s). */
const httpBase = () => ({
  budget: { ...SEED_BUDGET },
  authority: { url: 'https://127.0.0.1:9/v1/account', credential: SECRET, requiredCapability: 'metered-api' },
});
/** Valid inspect-form options around the seed budget. */
const inspectBase = () => ({ budget: { ...SEED_BUDGET }, authority: { inspect: never } });

// Rules, phrased loosely enough for any reasonable wording, strictly enough to require the rule
// (none of them can match the option path alone).
const RULE = {
  object: /object/i,
  required: /required|missing|must be (given|provided|set)|is not (given|set)|undefined/i,
  number: /number/i,
  finite: /finite|NaN|Infinity|number/i,
  positive: /positive|greater than (0|zero)|> ?0|more than (0|zero)|larger than (0|zero)/i,
  nonNegative: /non-?negative|>= ?0|≥ ?0|at least (0|zero)|not be negative|negative/i,
  integerAtLeastOne: /integer|whole number|>= ?1|≥ ?1|at least (1|one)/i,
  shareRange: /\(0, ?1\]|0 < share|<= ?1|≤ ?1|between|at most 1|range|> ?0/i,
  exclusive: /both|either|only one|exclusive|not together|together|cannot be combined|one of/i,
  staleCeiling: /5(\.0+)?\b|node budget|ceiling|exceed|above|at most|<=|≤|greater than/i,
  minMax: /at most|at least|less than|greater than|smaller than|not (be )?(above|below)|exceed|<=|>=|≤|≥/i,
  cadence: /window|stale|maxStaleSeconds|5000|5 ?s/i,
  cadenceFourSeconds: /window|stale|maxStaleSeconds|4000|4 ?s/i,
  function: /function/i,
  url: /absolute|parse|invalid|not a (valid )?URL|malformed/i,
  https: /https|allowInsecureHttp|insecure/i,
  scheme: /https?|scheme|protocol/i,
  nonEmpty: /empty|non-?empty|missing|at least one|required/i,
  envUnset: /not set|unset|missing|empty|undefined|no such|is not defined/i,
  credentialSource: /required|missing|either|one of|must (be )?(given|set|provided)/i,
  capabilitySource: /required|missing|either|one of/i,
  string: /string/i,
  pointer: /JSON Pointer|RFC ?6901|'\/'|slash|escape|~0|~1/,
  headerName: /header name|token|invalid|character|space|colon/i,
  pem: /\bPEM\b|certificate/,
  unknownKey: /unknown|unexpected|not allowed|unrecognized|unsupported|not a valid option|no such option/i,
  boolean: /boolean|true or false/i,
};

const set = (path, value, from = httpBase) => () => {
  const options = from();
  const keys = path.split('.');
  let target = options;
  for (const k of keys.slice(0, -1)) target = target[k];
  if (value === undefined) delete target[keys.at(-1)];
  else target[keys.at(-1)] = value;
  return options;
};
/** Merges `extra` into one section; a key given as undefined is removed (absent, not present-but-undefined). */
const merge = (section, extra, from = httpBase) => () => {
  const options = from();
  const merged = { ...options[section], ...extra };
  for (const [k, v] of Object.entries(merged)) if (v === undefined) delete merged[k];
  options[section] = merged;
  return options;
};
const removing = (section, keys, from = httpBase) => () => {
  const options = from();
  for (const k of keys) delete options[section][k];
  return options;
};

// [name, () => constructor arguments, path regexp, rule regexp]
const badNumbers = [
  ['a string', '200', RULE.number],
  ['NaN', NaN, RULE.finite],
  ['Infinity', Infinity, RULE.finite],
  ['negative', -1, RULE.positive],
  ['zero', 0, RULE.positive],
];

const CASES = [
  ['options missing', () => [], /options/i, RULE.object],
  ['options null', () => [null], /options/i, RULE.object],
  ['options a number', () => [42], /options/i, RULE.object],
  ['options a string', () => ['budget'], /options/i, RULE.object],
  ['budget missing', () => [set('budget', undefined)()], /budget/, RULE.required],
  ['budget not an object', () => [set('budget', 5)()], /budget/, RULE.object],
  ...['unverifiedUnits', 'maxUnitsPerSecond'].flatMap((field) =>
    badNumbers.map(([what, value, rule]) => [
      `budget.${field} ${what}`,
      () => [set(`budget.${field}`, value)()],
      new RegExp(`budget\\.${field}`),
      rule,
    ]),
  ),
  ['budget.nodes 0', () => [set('budget.nodes', 0)()], /budget\.nodes/, RULE.integerAtLeastOne],
  ['budget.nodes 1.5', () => [set('budget.nodes', 1.5)()], /budget\.nodes/, RULE.integerAtLeastOne],
  ['budget.nodes negative', () => [set('budget.nodes', -2)()], /budget\.nodes/, RULE.integerAtLeastOne],
  ['budget.share 0', () => [merge('budget', { share: 0, nodes: undefined })()], /budget\.share/, RULE.shareRange],
  ['budget.share 1.5', () => [merge('budget', { share: 1.5, nodes: undefined })()], /budget\.share/, RULE.shareRange],
  ['budget.share negative', () => [merge('budget', { share: -0.5, nodes: undefined })()], /budget\.share/, RULE.shareRange],
  ['budget.nodes and budget.share together', () => [merge('budget', { share: 0.5 })()], /budget\.(nodes|share)/, RULE.exclusive],
  ['budget.maxStaleSeconds 0', () => [set('budget.maxStaleSeconds', 0)()], /budget\.maxStaleSeconds/, RULE.positive],
  ['budget.maxStaleSeconds 6 above node budget / r = 5', () => [set('budget.maxStaleSeconds', 6)()], /budget\.maxStaleSeconds/, RULE.staleCeiling],
  ['budget.maxStaleSeconds 5.5 above node budget / r = 5', () => [set('budget.maxStaleSeconds', 5.5)()], /budget\.maxStaleSeconds/, RULE.staleCeiling],
  ['budget.maxStaleSeconds 2.6 above 200*0.25/20 = 2.5', () => [merge('budget', { nodes: undefined, share: 0.25, maxStaleSeconds: 2.6 })()], /budget\.maxStaleSeconds/, /2\.5|node budget|ceiling|exceed|above|at most|<=|≤|greater than/i],
  ['refresh.maxIntervalMs below refresh.minIntervalMs', () => [merge('refresh', { minIntervalMs: 1000, maxIntervalMs: 500, timeoutMs: 1000 })()], /refresh\.(maxIntervalMs|minIntervalMs)/, RULE.minMax],
  ['refresh.minIntervalMs negative', () => [merge('refresh', { minIntervalMs: -1, maxIntervalMs: 500, timeoutMs: 1000 })()], /refresh\.minIntervalMs/, RULE.nonNegative],
  ['refresh.timeoutMs 0', () => [merge('refresh', { minIntervalMs: 100, maxIntervalMs: 500, timeoutMs: 0 })()], /refresh\.timeoutMs/, RULE.positive],
  ['cadence maxIntervalMs 4000 + timeoutMs 2000 > 5 s window', () => [merge('refresh', { minIntervalMs: 1000, maxIntervalMs: 4000, timeoutMs: 2000 })()], /refresh\.(maxIntervalMs|timeoutMs)/, RULE.cadence],
  ['cadence maxIntervalMs 3000 + timeoutMs 2000 exactly = 5 s window', () => [merge('refresh', { minIntervalMs: 1000, maxIntervalMs: 3000, timeoutMs: 2000 })()], /refresh\.(maxIntervalMs|timeoutMs)/, RULE.cadence],
  ['cadence maxIntervalMs 3000 + default timeoutMs 2000 = 5 s window', () => [merge('refresh', { maxIntervalMs: 3000 })()], /refresh\.(maxIntervalMs|timeoutMs)/, RULE.cadence],
  ['cadence measured against the lowered window (maxStaleSeconds 4: 2500 + 1500 = 4000)', () => [merge('refresh', { minIntervalMs: 1000, maxIntervalMs: 2500, timeoutMs: 1500 }, set('budget.maxStaleSeconds', 4))()], /refresh\.(maxIntervalMs|timeoutMs)/, RULE.cadenceFourSeconds],
  ['authority missing', () => [set('authority', undefined)()], /authority/, RULE.required],
  ['authority with both url and inspect', () => [merge('authority', { inspect: never })()], /authority/, RULE.exclusive],
  ['authority.inspect not a function', () => [set('authority.inspect', 'valid', inspectBase)()], /authority\.inspect/, RULE.function],
  ['authority.url unparsable', () => [set('authority.url', 'not a url at all')()], /authority\.url/, RULE.url],
  ['authority.url http without allowInsecureHttp', () => [set('authority.url', 'http://127.0.0.1:9/v1/account')()], /authority\.url/, RULE.https],
  ['authority.url http with allowInsecureHttp false', () => [merge('authority', { url: 'http://127.0.0.1:9/v1/account', allowInsecureHttp: false })()], /authority\.url/, RULE.https],
  ['authority.url ftp:', () => [set('authority.url', 'ftp://127.0.0.1/account')()], /authority\.url/, RULE.scheme],
  ['authority.credential empty string', () => [set('authority.credential', '')()], /authority\.credential/, RULE.nonEmpty],
  ['authority.credentialEnv names an unset variable', () => [merge('authority', { credential: undefined, credentialEnv: ENV_UNSET })()], /authority\.credentialEnv/, RULE.envUnset],
  ['authority.credentialEnv names an empty variable', () => [merge('authority', { credential: undefined, credentialEnv: ENV_EMPTY })()], /authority\.credentialEnv/, RULE.envUnset],
  ['authority.credential and credentialEnv both given', () => [merge('authority', { credentialEnv: ENV_SET })()], /authority\.credential(Env)?/, RULE.exclusive],
  ['authority.credential and credentialEnv both missing', () => [removing('authority', ['credential'])()], /authority\.credential/, RULE.credentialSource],
  ['authority.requiredCapabilities empty array', () => [merge('authority', { requiredCapability: undefined, requiredCapabilities: [] })()], /authority\.requiredCapabilities/, RULE.nonEmpty],
  ['authority.requiredCapabilities with a non-string', () => [merge('authority', { requiredCapability: undefined, requiredCapabilities: ['metered-api', 7] })()], /authority\.requiredCapabilities/, RULE.string],
  ['authority.requiredCapability and requiredCapabilities both given', () => [merge('authority', { requiredCapabilities: ['metered-api'] })()], /authority\.requiredCapabilit(y|ies)/, RULE.exclusive],
  ['authority.requiredCapability and requiredCapabilities both missing', () => [removing('authority', ['requiredCapability'])()], /authority\.requiredCapabilit(y|ies)/, RULE.capabilitySource],
  ['authority.capabilitiesPointer without leading slash', () => [merge('authority', { capabilitiesPointer: 'capabilities' })()], /authority\.capabilitiesPointer/, RULE.pointer],
  ['authority.capabilitiesPointer with bad escape ~2', () => [merge('authority', { capabilitiesPointer: '/a~2b' })()], /authority\.capabilitiesPointer/, RULE.pointer],
  ['authority.header with a space', () => [merge('authority', { header: 'x api key' })()], /authority\.header/, RULE.headerName],
  ['authority.header with a colon', () => [merge('authority', { header: 'x-api:key' })()], /authority\.header/, RULE.headerName],
  ['authority.caPem not PEM', () => [merge('authority', { caPem: 'this is not a certificate' })()], /authority\.caPem/, RULE.pem],
  ['authority.allowInsecureHttp not a boolean', () => [merge('authority', { allowInsecureHttp: 'yes' })()], /authority\.allowInsecureHttp/, RULE.boolean],
  ['unknown top-level key', () => [{ ...httpBase(), retries: 3 }], /retries/, RULE.unknownKey],
  ['unknown key in budget', () => [merge('budget', { ceiling: 10 })()], /budget\.ceiling/, RULE.unknownKey],
  ['unknown key in refresh', () => [merge('refresh', { jitterMs: 10 })()], /refresh\.jitterMs/, RULE.unknownKey],
  ['unknown key in authority (HTTP form)', () => [merge('authority', { token: 'x' })()], /authority\.token/, RULE.unknownKey],
  ['unknown key in authority (inspect form)', () => [merge('authority', { retries: 1 }, inspectBase)()], /authority\.retries/, RULE.unknownKey],
];

const SECRET_FORMS = [SECRET, Buffer.from(SECRET).toString('base64'), Buffer.from(SECRET).toString('base64url')];

function assertNoSecret(text, where) {
  for (const form of SECRET_FORMS) {
    assert.ok(!String(text).includes(form), `${where} must not contain the credential (form ${form.slice(0, 12)}…): ${text}`);
  }
}

describe('configuration errors (ERR_SPEND_SENTINEL_CONFIG)', () => {
  const pool = sentinelPool(Sentinel);
  afterEach(() => pool.closeAll());

  test(`there are at least 30 distinct bad inputs (${CASES.length})`, () => {
    assert.ok(CASES.length >= 30);
    assert.equal(new Set(CASES.map(([name]) => name)).size, CASES.length, 'case names are unique');
  });

  for (const [name, args, path, rule] of CASES) {
    test(name, () => {
      const err = catchError(() => pool.make(...args()));
      assert.ok(err instanceof Error, `expected an Error, got ${inspect(err)}`);
      assert.equal(err.code, 'ERR_SPEND_SENTINEL_CONFIG', `code of: ${err.message}`);
      assert.match(err.message, path, 'the message names the option path');
      assert.match(err.message, rule, 'the message states the rule');
      assertNoSecret(err.message, 'err.message');
      assertNoSecret(err.stack, 'err.stack');
      assertNoSecret(inspect(err, { showHidden: true, depth: 5 }), 'util.inspect(err)');
    });
  }
});

describe('valid options are accepted', () => {
  const pool = sentinelPool(Sentinel);
  afterEach(() => pool.closeAll());

  const ACCEPTED = [
    ['budget.maxStaleSeconds 5 = node budget / r', set('budget.maxStaleSeconds', 5)],
    ['budget.maxStaleSeconds 4 below node budget / r', set('budget.maxStaleSeconds', 4)],
    ['budget.share 1 without nodes', merge('budget', { nodes: undefined, share: 1 })],
    ['budget.nodes 1', set('budget.nodes', 1)],
    ['cadence maxIntervalMs 2999 + timeoutMs 2000 < 5 s window', merge('refresh', { minIntervalMs: 20, maxIntervalMs: 2999, timeoutMs: 2000 })],
    ['refresh.minIntervalMs equal to maxIntervalMs', merge('refresh', { minIntervalMs: 1000, maxIntervalMs: 1000 })],
    ['http URL with allowInsecureHttp true', merge('authority', { url: 'http://127.0.0.1:9/v1/account', allowInsecureHttp: true })],
    ['https URL with allowInsecureHttp false', merge('authority', { allowInsecureHttp: false })],
    ['credentialEnv naming a set variable', merge('authority', { credential: undefined, credentialEnv: ENV_SET })],
    ['requiredCapabilities with several strings', merge('authority', { requiredCapability: undefined, requiredCapabilities: ['metered-api', 'gpu'] })],
    ['capabilitiesPointer with ~0 and ~1 escapes', merge('authority', { capabilitiesPointer: '/account/plan~1tier/caps~0x/0' })],
    ['custom header and empty scheme', merge('authority', { header: 'x-api-key', scheme: '' })],
    ['caPem with a certificate', merge('authority', { caPem: TEST_CA_PEM })],
    ['inspect form', inspectBase],
  ];

  for (const [name, options] of ACCEPTED) {
    test(name, () => {
      assert.doesNotThrow(() => pool.make(options()));
    });
  }
});

describe('budget read-outs', () => {
  const pool = sentinelPool(Sentinel);
  afterEach(() => pool.closeAll());

  const READ_OUTS = [
    ['seed: b 200, r 20, nodes 2', { ...SEED_BUDGET }, 100, 5],
    ['share 0.25', { unverifiedUnits: 200, maxUnitsPerSecond: 20, share: 0.25 }, 50, 2.5],
    ['maxStaleSeconds 4 lowers the window', { ...SEED_BUDGET, maxStaleSeconds: 4 }, 100, 4],
    ['default nodes means share 1', { unverifiedUnits: 200, maxUnitsPerSecond: 20 }, 200, 10],
  ];

  for (const [name, budget, nodeBudgetUnits, staleWindowSeconds] of READ_OUTS) {
    test(name, () => {
      const s = pool.make({ budget, authority: { inspect: never } });
      assert.equal(s.nodeBudgetUnits, nodeBudgetUnits);
      assert.equal(s.staleWindowSeconds, staleWindowSeconds);
      assert.equal(s.exposureUnits, 0);
    });
  }
});

describe('options are read once', () => {
  const pool = sentinelPool(Sentinel);
  afterEach(() => pool.closeAll());

  test('the logger and inspect the config validated are the ones the sentinel runs with; each option read once', async () => {
    const options = { budget: { ...SEED_BUDGET } };
    const { reads, firstLine } = countingGetters(options);
    pool.make(options);
    // inspect as first read answers invalid_credential: its refresh line reaches the first logger.
    assert.deepEqual(await firstLine, { logger: 'validated', said: 'invalid_credential' });
    assert.deepEqual(reads, { logger: 1, authority: 1, inspect: 1 });
  });
});
