// Observability: `sentinel.metrics()` (Prometheus text format 0.0.4), `metricFamilies()` (the same
// data as objects), named CircuitBreakers in them, and the prom-client bridge
// (`spend-sentinel/prom-client`). The text is read twice: strictly by helpers/exposition.mjs
// (label quoting and escaping, HELP/TYPE order, +Inf bucket, _sum/_count, unique series) and by
// the devDependency parse-prometheus-text-format, which must agree.
//
// Synchronisation: a refresh is counted before the next one starts (one at a time), so while the
// scripted authority holds call N, exactly N refreshes have been counted and nothing moves.
// Tests wait for that call, for transitions, or poll a scrape; never a fixed sleep.
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import {
  FAST_REFRESH,
  catchError,
  controlledAuthority,
  fastOptions,
  held,
  pollUntil,
  recordTransitions,
  scriptedAuthority,
  sentinelPool,
} from './helpers/wait.mjs';
import {
  BREAKER_RESULTS,
  BREAKER_STATES,
  FAMILY_TYPES,
  OUTCOMES,
  REFRESH_CAUSES,
  REFUSAL_REASONS,
  STATUSES,
  assertClosedLabels,
  byLabel,
  crossCheck,
  labelKey,
  readExposition,
  samplesNamed,
  valueOf,
} from './helpers/exposition.mjs';

const require = createRequire(import.meta.url);
const { Sentinel, CircuitBreaker } = require('spend-sentinel');
const { collect } = require('spend-sentinel/prom-client');
const client = require('prom-client');

const pool = sentinelPool(Sentinel);
afterEach(() => pool.closeAll());

/** Refresh timeout well above what a checkpoint takes, so a held call never times out under it (window 1 s). */
const SLOW_TIMEOUT = { refresh: { timeoutMs: 800 } };

/** `sentinel.metrics()`, read strictly and by the library (they must agree). */
function scrape(sentinel) {
  const text = sentinel.metrics();
  const families = readExposition(text);
  crossCheck(text, families);
  return families;
}

const zeroes = (keys) => Object.fromEntries(keys.map((k) => [k, 0]));
const tally = (keys, values) => {
  const out = zeroes(keys);
  for (const v of values) out[v] += 1;
  return out;
};
const oneHot = (keys, on) => Object.fromEntries(keys.map((k) => [k, k === on ? 1 : 0]));

/**
 * transitions_total as `{ 'from->to (reason)': count }`, the combinations that happened only (every
 * possible one is there from the first scrape, at 0: metrics-ops.spec.mjs).
 */
function transitionSeries(families) {
  const out = {};
  for (const s of samplesNamed(families, 'spend_sentinel_transitions_total')) {
    if (s.value > 0) out[`${s.labels.from}->${s.labels.to} (${s.labels.reason})`] = s.value;
  }
  return out;
}

function transitionCounts(events) {
  const out = {};
  for (const e of events) {
    const key = `${e.from}->${e.to} (${e.reason})`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

describe('the exposition format', () => {
  test('it parses; exactly the families of FAMILY_TYPES, each with HELP and TYPE, with their types', () => {
    const auth = scriptedAuthority((call) => held(call));
    const sentinel = pool.make(fastOptions(auth));
    const text = sentinel.metrics();
    const families = readExposition(text);
    const parsed = crossCheck(text, families);

    assert.deepEqual(
      Object.fromEntries([...families.values()].map((f) => [f.name, f.type])),
      FAMILY_TYPES,
      'family set and types',
    );
    assert.equal(parsed.length, Object.keys(FAMILY_TYPES).length, 'the library sees them all too');
    for (const f of parsed) {
      assert.ok(f.help.length > 0, `${f.name} has a HELP text`);
      assert.equal(f.type, FAMILY_TYPES[f.name].toUpperCase(), `${f.name} TYPE as parsed`);
    }
    for (const name of Object.keys(FAMILY_TYPES)) {
      // Raw text: HELP then TYPE, once each, even for a family without samples.
      const help = text.split('\n').filter((l) => l.startsWith(`# HELP ${name} `));
      const type = text.split('\n').filter((l) => l === `# TYPE ${name} ${FAMILY_TYPES[name]}`);
      assert.equal(help.length, 1, `one HELP line for ${name}`);
      assert.equal(type.length, 1, `one TYPE line for ${name}`);
      assert.ok(text.indexOf(help[0]) < text.indexOf(type[0]), `HELP before TYPE for ${name}`);
    }
  });

  test('raw text: label values quoted, +Inf bucket, _sum and _count, no labels on plain gauges', async () => {
    const auth = scriptedAuthority('valid');
    const sentinel = pool.make(fastOptions(auth));
    const transitions = recordTransitions(sentinel);
    await transitions.waitFor({ to: 'ready' });
    await auth.call(3);
    const text = sentinel.metrics();
    const lines = text.split('\n');
    const name = 'spend_sentinel_refresh_duration_seconds';
    assert.ok(lines.some((l) => /^spend_sentinel_refresh_duration_seconds_bucket\{le="\+Inf"\} \d+$/.test(l)), `+Inf bucket line in\n${text}`);
    assert.ok(lines.some((l) => /^spend_sentinel_refresh_duration_seconds_sum \d+(\.\d+)?(e-?\d+)?$/.test(l)), '_sum line without labels');
    assert.ok(lines.some((l) => /^spend_sentinel_refresh_duration_seconds_count \d+$/.test(l)), '_count line without labels');
    const le = lines.filter((l) => l.startsWith(`${name}_bucket{`)).map((l) => /le="([^"]*)"/.exec(l)[1]);
    assert.equal(le.at(-1), '+Inf', 'the +Inf bucket comes last');
    for (const bound of le.slice(0, -1)) assert.ok(Number.isFinite(Number(bound)), `le ${JSON.stringify(bound)} is a number`);
    assert.ok(lines.includes('spend_sentinel_status{status="ready"} 1'), 'label values in double quotes');
    assert.ok(lines.includes('spend_sentinel_stale_window_seconds 1'), 'a gauge without labels has no braces');
    assert.ok(lines.includes('spend_sentinel_node_budget_units 100'));
    assert.ok(/^spend_sentinel_evidence_age_seconds \d+(\.\d+)?(e-?\d+)?$/m.test(text), 'evidence age: one unlabelled sample');
    assert.ok(lines.includes('spend_sentinel_transitions_total{from="not_ready",to="ready",reason="verified"} 1'));
    assert.ok(lines.includes('spend_sentinel_refused_total{reason="no_evidence"} 0'));
    const families = readExposition(text);
    crossCheck(text, families);
    // The count and the +Inf bucket are the same number in the text itself.
    const count = Number(/^spend_sentinel_refresh_duration_seconds_count (\d+)$/m.exec(text)[1]);
    const inf = Number(/^spend_sentinel_refresh_duration_seconds_bucket\{le="\+Inf"\} (\d+)$/m.exec(text)[1]);
    assert.equal(inf, count);
    assert.ok(count >= 3, `at least three refreshes counted (got ${count})`);
  });

  test('metricFamilies() is the same data as metrics()', async () => {
    const auth = scriptedAuthority('valid');
    const sentinel = pool.make(fastOptions(auth));
    const transitions = recordTransitions(sentinel);
    await transitions.waitFor({ to: 'ready' });
    assert.equal(sentinel.admit(0.75), true);
    auth.hold();
    const heldCall = await auth.nextCall(); // nothing moves now (but the evidence ages)
    const before = sentinel.metricFamilies();
    const families = scrape(sentinel);
    const after = sentinel.metricFamilies();
    assert.ok(Array.isArray(before) && before.length === Object.keys(FAMILY_TYPES).length, 'every family as data');
    assert.deepEqual(
      before.map((f) => [f.name, f.type, f.help]),
      [...families.values()].map((f) => [f.name, f.type, f.help]),
      'names, types, help and order',
    );
    for (const [i, family] of before.entries()) {
      const text = families.get(family.name).samples;
      assert.deepEqual(
        family.samples.map((s) => [s.name, labelKey(s.labels)]),
        text.map((s) => [s.name, labelKey(s.labels)]),
        `${family.name}: the same series`,
      );
      for (const [j, s] of family.samples.entries()) {
        if (family.name === 'spend_sentinel_evidence_age_seconds') {
          assert.ok(s.value <= text[j].value && text[j].value <= after[i].samples[j].value, 'evidence age read in between');
        } else {
          assert.equal(s.value, text[j].value, `${family.name} ${labelKey(s.labels)} value`);
          assert.equal(typeof s.value, 'number');
        }
        assert.ok(Object.values(s.labels).every((v) => typeof v === 'string'), 'label values are strings');
      }
    }
    heldCall.release('valid');
  });
});

describe('the sentinel families follow its state', () => {
  test('ready → degraded → not_ready (evidence_too_old) → ready: status, age, refreshes, histogram, transitions, units, refusals, gauges', async () => {
    const ctl = controlledAuthority();
    const sentinel = pool.make(fastOptions(ctl.auth, SLOW_TIMEOUT));
    const transitions = recordTransitions(sentinel);
    const expected = {
      admitted: { ready: 0, degraded: 0 },
      refused: zeroes(REFUSAL_REASONS),
      transitions: {},
    };
    const admit = (units, want, status) => {
      assert.equal(sentinel.admit(units), want, `admit(${units}) on ${sentinel.status()}`);
      if (want) expected.admitted[status] += units; // same order of float additions as the native counter
    };
    const refuse = (units, reason) => {
      assert.equal(sentinel.refusalReason(units), reason, `refusalReason(${units})`);
      admit(units, false);
      expected.refused[reason] += 1;
    };

    /** Everything the scrape must show while `call` is held (so exactly call.index refreshes are counted). */
    const check = (stage, call, status) => {
      const ageBefore = sentinel.readiness().evidenceAgeSeconds;
      const m = scrape(sentinel);
      const ageAfter = sentinel.readiness().evidenceAgeSeconds;
      const n = call.index;
      assertClosedLabels(m, stage);
      assert.equal(sentinel.status(), status, `${stage}: premise`);
      assert.deepEqual(byLabel(m, 'spend_sentinel_status', 'status'), oneHot(STATUSES, status), `${stage}: status one-hot`);

      const age = samplesNamed(m, 'spend_sentinel_evidence_age_seconds');
      if (ageBefore === null) {
        assert.equal(age.length, 0, `${stage}: no evidence age sample before the first valid refresh`);
      } else {
        assert.equal(age.length, 1, `${stage}: one evidence age sample`);
        // readiness() rounds to the millisecond; the gauge keeps the clock's precision.
        const low = ageBefore - 0.0005;
        const high = ageAfter + 0.0005;
        assert.ok(low <= age[0].value && age[0].value <= high, `${stage}: age ${age[0].value} outside [${low}, ${high}]`);
      }

      const answered = ctl.answers.slice(0, n);
      assert.equal(answered.filter((a) => a !== undefined).length, n, `${stage}: test premise, calls 0..${n - 1} answered`);
      assert.deepEqual(byLabel(m, 'spend_sentinel_refresh_total', 'outcome'), tally(OUTCOMES, answered), `${stage}: refresh_total by outcome`);
      const saidIndeterminate = answered.filter((a) => a === 'indeterminate').map(() => 'inspect_indeterminate');
      assert.deepEqual(byLabel(m, 'spend_sentinel_refresh_indeterminate_total', 'cause'), tally(REFRESH_CAUSES, saidIndeterminate), `${stage}: indeterminate by cause`);
      assert.equal(valueOf(m, 'spend_sentinel_refresh_duration_seconds_count'), n, `${stage}: histogram count = refreshes sent`);
      assert.equal(valueOf(m, 'spend_sentinel_refresh_duration_seconds_bucket', { le: '+Inf' }), n, `${stage}: +Inf bucket`);
      const sum = valueOf(m, 'spend_sentinel_refresh_duration_seconds_sum');
      if (n === 0) assert.equal(sum, 0, `${stage}: empty histogram sum`);
      else assert.ok(sum > 0 && sum < n * 0.8, `${stage}: duration sum ${sum} s for ${n} refreshes under an 800 ms timeout`);

      assert.deepEqual(transitionSeries(m), expected.transitions, `${stage}: transitions_total series`);
      assert.deepEqual(transitionSeries(m), transitionCounts(transitions.events), `${stage}: transitions_total = the events seen`);
      assert.deepEqual(byLabel(m, 'spend_sentinel_admitted_units_total', 'status'), expected.admitted, `${stage}: admitted units by status`);
      assert.deepEqual(byLabel(m, 'spend_sentinel_refused_total', 'reason'), expected.refused, `${stage}: refusals by reason`);

      assert.equal(valueOf(m, 'spend_sentinel_exposure_units'), sentinel.exposureUnits, `${stage}: unverified units`);
      assert.equal(valueOf(m, 'spend_sentinel_reserved_units'), 0, `${stage}: no reservation`);
      assert.equal(valueOf(m, 'spend_sentinel_refunded_units_total') + valueOf(m, 'spend_sentinel_overage_units_total'), 0, `${stage}: nothing settled`);
      assert.equal(valueOf(m, 'spend_sentinel_node_budget_units'), sentinel.nodeBudgetUnits, `${stage}: node budget`);
      assert.equal(valueOf(m, 'spend_sentinel_node_budget_units'), 100);
      assert.equal(valueOf(m, 'spend_sentinel_stale_window_seconds'), sentinel.staleWindowSeconds, `${stage}: stale window`);
      assert.equal(valueOf(m, 'spend_sentinel_stale_window_seconds'), 1);
      return m;
    };

    // Stage 0: no evidence yet; the first call is held.
    const first = await ctl.auth.call(0);
    refuse(1, 'no_evidence');
    refuse(0.5, 'no_evidence');
    check('before the first answer', first, 'not_ready');

    // Stage 1: ready.
    ctl.release(first, 'valid', 'valid');
    await transitions.waitFor({ to: 'ready' });
    expected.transitions['not_ready->ready (verified)'] = 1;
    admit(2.5, true, 'ready');
    admit(0.1, true, 'ready');
    admit(0.2, true, 'ready');
    refuse(1000, 'budget_exhausted');
    const atReady = await ctl.checkpoint();
    assert.ok(atReady.index >= 1);
    admit(0.4, true, 'ready'); // after the held refresh was sent: stays in the ledger
    const ready = check('ready', atReady, 'ready');
    assert.ok(valueOf(ready, 'spend_sentinel_exposure_units') >= 0.4, 'units admitted after the evidence time show in the ledger gauge');

    // Stage 2: degraded (an indeterminate answer while the evidence is young).
    ctl.release(atReady, 'indeterminate', 'indeterminate');
    await transitions.waitFor({ to: 'degraded' });
    expected.transitions['ready->degraded (refresh_indeterminate)'] = 1;
    admit(1.5, true, 'degraded');
    admit(0.125, true, 'degraded');
    admit(0.3, true, 'degraded');
    const atDegraded = await ctl.checkpoint();
    check('degraded', atDegraded, 'degraded');

    // Stage 3: the evidence reaches the window (1 s) while refreshes stay inconclusive.
    ctl.release(atDegraded, 'indeterminate', 'indeterminate');
    await transitions.waitFor({ to: 'not_ready', reason: 'evidence_too_old' }, { ms: 4000 });
    expected.transitions['degraded->not_ready (evidence_too_old)'] = 1;
    refuse(1, 'evidence_too_old');
    refuse(0.25, 'evidence_too_old');
    const atStale = await ctl.checkpoint();
    const stale = check('evidence_too_old', atStale, 'not_ready');
    assert.ok(valueOf(stale, 'spend_sentinel_evidence_age_seconds') >= 1, 'the age gauge shows evidence at least w old');

    // Stage 4: ready again.
    const readyAgain = transitions.next({ from: 'not_ready', to: 'ready' });
    ctl.release(atStale, 'valid', 'valid');
    await readyAgain;
    expected.transitions['not_ready->ready (verified)'] = 2;
    admit(0.7, true, 'ready');
    const atReadyAgain = await ctl.checkpoint();
    const again = check('ready again', atReadyAgain, 'ready');
    assert.ok(valueOf(again, 'spend_sentinel_refresh_total', { outcome: 'indeterminate' }) >= 2);
    assert.ok(valueOf(again, 'spend_sentinel_refresh_total', { outcome: 'valid' }) >= 2);

    // Closing: refusals are shutting_down; the metrics still read.
    ctl.release(atReadyAgain, 'valid', 'hold');
    sentinel.close();
    refuse(1, 'shutting_down');
    const closed = scrape(sentinel);
    assert.deepEqual(byLabel(closed, 'spend_sentinel_refused_total', 'reason'), expected.refused, 'refusals after close');
    assert.deepEqual(byLabel(closed, 'spend_sentinel_admitted_units_total', 'status'), expected.admitted, 'admitted units after close');
    assert.deepEqual(byLabel(closed, 'spend_sentinel_status', 'status'), oneHot(STATUSES, 'not_ready'), 'closed: not_ready');
  });

  test('labels take only their closed sets through denials, refusals and a named breaker', async () => {
    const auth = scriptedAuthority();
    const outcomes = ['valid', 'invalid_credential', 'valid', 'capability_missing', 'valid', 'indeterminate'];
    let next = 0;
    auth.set(() => Promise.resolve(outcomes[Math.min(next, outcomes.length - 1)]));
    const sentinel = pool.make(fastOptions(auth));
    const transitions = recordTransitions(sentinel);
    let cursor = 0;
    const breaker = new CircuitBreaker({ name: 'labels-check' });
    await breaker.fire(async () => 'ok');
    await assert.rejects(breaker.fire(async () => Promise.reject(new Error('down'))));
    for (const [i, match] of [
      { to: 'ready' },
      { to: 'not_ready', reason: 'invalid_credential' },
      { to: 'ready' },
      { to: 'not_ready', reason: 'capability_missing' },
      { to: 'ready' },
      { to: 'degraded' },
    ].entries()) {
      const event = await transitions.waitFor(match, { from: cursor });
      cursor = transitions.events.indexOf(event) + 1;
      if (i === 0 || i === 2 || i === 4) assert.equal(sentinel.admit(0.5), true);
      else assert.equal(sentinel.admit(0.5), event.to === 'degraded', `admit on ${event.to}`);
      next = i + 1;
    }
    const m = scrape(sentinel);
    assertClosedLabels(m, 'after denials');
    assert.deepEqual(Object.keys(byLabel(m, 'spend_sentinel_refresh_total', 'outcome')).sort(), [...OUTCOMES].sort(), 'one series per outcome');
    assert.deepEqual(Object.keys(byLabel(m, 'spend_sentinel_refused_total', 'reason')).sort(), [...REFUSAL_REASONS].sort(), 'one series per reason admission can refuse with');
    assert.deepEqual(Object.keys(byLabel(m, 'spend_sentinel_status', 'status')).sort(), [...STATUSES].sort());
    assert.deepEqual(Object.keys(byLabel(m, 'spend_sentinel_admitted_units_total', 'status')).sort(), ['degraded', 'ready']);
    assert.deepEqual(Object.keys(byLabel(m, 'spend_sentinel_breaker_state', 'state', { name: 'labels-check' })).sort(), [...BREAKER_STATES].sort());
    assert.deepEqual(Object.keys(byLabel(m, 'spend_sentinel_breaker_calls_total', 'result', { name: 'labels-check' })).sort(), [...BREAKER_RESULTS].sort());
    const series = transitionSeries(m);
    for (const key of [
      'not_ready->ready (verified)',
      'ready->not_ready (invalid_credential)',
      'ready->not_ready (capability_missing)',
      'ready->degraded (refresh_indeterminate)',
    ]) {
      assert.ok(series[key] >= 1, `transition ${key} counted: ${JSON.stringify(series)}`);
    }
    assert.ok(valueOf(m, 'spend_sentinel_refused_total', { reason: 'invalid_credential' }) === 1, 'refused on invalid_credential');
    assert.ok(valueOf(m, 'spend_sentinel_refused_total', { reason: 'capability_missing' }) === 1, 'refused on capability_missing');
    const le = samplesNamed(m, 'spend_sentinel_refresh_duration_seconds_bucket').map((s) => s.labels.le);
    assert.deepEqual(le, ['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf']);
    assert.equal(breaker.state, 'closed');
  });
});

describe('named circuit breakers', () => {
  const breakerView = (m, name) => ({
    state: byLabel(m, 'spend_sentinel_breaker_state', 'state', { name }),
    calls: byLabel(m, 'spend_sentinel_breaker_calls_total', 'result', { name }),
  });
  const idleSentinel = () => pool.make(fastOptions(scriptedAuthority((call) => held(call))));

  test('"billing": state one-hot and calls by result (successes, failures, a timeout, refusals)', async () => {
    const sentinel = idleSentinel();
    const billing = new CircuitBreaker({ name: 'billing', timeoutMs: 30, failureThreshold: 10 });
    let m = scrape(sentinel);
    assert.deepEqual(breakerView(m, 'billing'), { state: oneHot(BREAKER_STATES, 'closed'), calls: zeroes(BREAKER_RESULTS) }, 'a new breaker');

    for (let i = 0; i < 3; i += 1) await billing.fire(async () => 'ok');
    for (let i = 0; i < 2; i += 1) await assert.rejects(billing.fire(async () => Promise.reject(new Error('502'))), /502/);
    const hang = (signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    await assert.rejects(billing.fire((opts) => hang(opts.signal)), { code: 'ERR_SPEND_SENTINEL_TIMEOUT' });
    m = scrape(sentinel);
    assert.deepEqual(breakerView(m, 'billing'), {
      state: oneHot(BREAKER_STATES, 'closed'),
      calls: { success: 3, failure: 2, timeout: 1, rejected: 0 },
    });

    billing.open();
    for (let i = 0; i < 2; i += 1) await assert.rejects(billing.fire(async () => 'never runs'), { code: 'ERR_SPEND_SENTINEL_CIRCUIT_OPEN' });
    m = scrape(sentinel);
    assert.deepEqual(breakerView(m, 'billing'), {
      state: oneHot(BREAKER_STATES, 'open'),
      calls: { success: 3, failure: 2, timeout: 1, rejected: 2 },
    });
    const stats = billing.stats;
    assert.deepEqual(
      breakerView(m, 'billing').calls,
      { success: stats.successes, failure: stats.failures, timeout: stats.timeouts, rejected: stats.rejected },
      'the same numbers under the same names as breaker.stats',
    );
    assertClosedLabels(m, 'billing');

    billing.close();
    m = scrape(sentinel);
    assert.deepEqual(breakerView(m, 'billing').state, oneHot(BREAKER_STATES, 'closed'), 'closed again');
    assert.equal(breakerView(m, 'billing').calls.rejected, 2, 'close() keeps the counts');
  });

  test('half_open shows once the open period has passed', async () => {
    const sentinel = idleSentinel();
    const trial = new CircuitBreaker({ name: 'billing-trial', failureThreshold: 1, openMs: 50 });
    await assert.rejects(trial.fire(async () => Promise.reject(new Error('down'))));
    assert.deepEqual(breakerView(scrape(sentinel), 'billing-trial').state, oneHot(BREAKER_STATES, 'open'));
    await pollUntil(() => breakerView(scrape(sentinel), 'billing-trial').state.half_open === 1, { ms: 3000, label: 'half_open in the metrics' });
    assert.deepEqual(breakerView(scrape(sentinel), 'billing-trial').state, oneHot(BREAKER_STATES, 'half_open'));
    assert.equal(trial.state, 'half_open');
  });

  test('a breaker without a name does not appear; of two with one name only the older counts', async () => {
    const sentinel = idleSentinel();
    const unnamed = new CircuitBreaker();
    const unnamedToo = new CircuitBreaker({ failureThreshold: 3 });
    await unnamed.fire(async () => 1);
    await assert.rejects(unnamedToo.fire(async () => Promise.reject(new Error('x'))));
    const older = new CircuitBreaker({ name: 'twin' });
    const younger = new CircuitBreaker({ name: 'twin' });
    await younger.fire(async () => 1);
    await younger.fire(async () => 2);
    younger.open();
    await older.fire(async () => 3);

    const m = scrape(sentinel);
    const names = new Set(samplesNamed(m, 'spend_sentinel_breaker_state').map((s) => s.labels.name));
    assert.ok(!names.has('breaker'), `an unnamed breaker (default name "breaker") appears: ${[...names]}`);
    assert.ok(!samplesNamed(m, 'spend_sentinel_breaker_calls_total').some((s) => s.labels.name === 'breaker'));
    assert.equal(unnamed.name, 'breaker', 'premise: the default name');
    assert.deepEqual(breakerView(m, 'twin'), {
      state: oneHot(BREAKER_STATES, 'closed'),
      calls: { success: 1, failure: 0, timeout: 0, rejected: 0 },
    }, 'the older "twin" counts, once');
    assert.equal(samplesNamed(m, 'spend_sentinel_breaker_state').filter((s) => s.labels.name === 'twin').length, 3, 'no duplicate series');
    assert.equal(younger.stats.successes, 2, 'premise: the younger one did have calls');
  });

  test('a name with quotes, a backslash or a line feed is refused: a breaker name is a label, never arbitrary text', async () => {
    const sentinel = idleSentinel();
    for (const name of ['pay "eu"\\west\nline', 'tenant=acme', '/v1/users/42']) {
      assert.throws(() => new CircuitBreaker({ name }), { code: 'ERR_SPEND_SENTINEL_CONFIG', message: /^CircuitBreaker: name: must use only/ }, JSON.stringify(name));
    }
    const ok = new CircuitBreaker({ name: 'pay-eu.west:v2_1' });
    await ok.fire(async () => 'ok');
    const text = sentinel.metrics();
    const families = readExposition(text);
    crossCheck(text, families);
    assert.deepEqual(breakerView(families, 'pay-eu.west:v2_1').calls, { success: 1, failure: 0, timeout: 0, rejected: 0 });
  });
});

test('refresh.breaker: refreshes an open breaker skips count as indeterminate, without a duration sample', async () => {
  const auth = scriptedAuthority('indeterminate');
  const sentinel = pool.make({ ...fastOptions(auth), refresh: { ...FAST_REFRESH, breaker: { failureThreshold: 2, openMs: 10000 } } });
  await auth.call(1);
  const m = await pollUntil(
    () => {
      const families = scrape(sentinel);
      return valueOf(families, 'spend_sentinel_refresh_total', { outcome: 'indeterminate' }) >= 8 && families;
    },
    { ms: 4000, label: 'skipped refreshes counted' },
  );
  assert.equal(auth.callCount, 2, 'premise: the open breaker stopped the calls');
  const refreshes = byLabel(m, 'spend_sentinel_refresh_total', 'outcome');
  assert.deepEqual({ ...refreshes, indeterminate: 0 }, zeroes(OUTCOMES), 'only indeterminate refreshes');
  assert.equal(valueOf(m, 'spend_sentinel_refresh_duration_seconds_count'), 2, 'duration samples = refreshes sent to the authority');
  assert.equal(valueOf(m, 'spend_sentinel_refresh_duration_seconds_bucket', { le: '+Inf' }), 2);
  assert.ok(refreshes.indeterminate > 2, 'skipped refreshes are counted');
});

describe('prom-client bridge', () => {
  /** A sentinel that became ready once; call 1 is held (the counters stop moving). */
  async function readySentinel() {
    const ctl = controlledAuthority();
    const sentinel = pool.make(fastOptions(ctl.auth, SLOW_TIMEOUT));
    const transitions = recordTransitions(sentinel);
    ctl.release(await ctl.auth.call(0), 'valid', 'hold');
    await transitions.waitFor({ to: 'ready' });
    const heldCall = await ctl.auth.call(1);
    return { sentinel, heldCall };
  }

  const ours = (families) => [...families.keys()].filter((n) => n.startsWith('spend_sentinel_'));

  test('collect(sentinel, registry): our families next to default metrics and an app counter; values track the sentinel; the remover removes them', async () => {
    const { sentinel, heldCall } = await readySentinel();
    const register = new client.Registry();
    client.collectDefaultMetrics({ register });
    const requests = new client.Counter({ name: 'app_requests_total', help: 'Requests served.', registers: [register] });
    requests.inc(3);

    const remove = collect(sentinel, register);
    assert.equal(typeof remove, 'function');
    assert.equal(sentinel.admit(1.25), true);
    const text1 = await register.metrics();
    const first = readExposition(text1, { promClient: true });
    crossCheck(text1, first);
    assert.deepEqual(ours(first).sort(), Object.keys(FAMILY_TYPES).sort(), 'all our families are in the registry');
    for (const name of Object.keys(FAMILY_TYPES)) assert.equal(first.get(name).type, FAMILY_TYPES[name], `${name} type`);
    assert.equal(valueOf(first, 'app_requests_total'), 3, 'the app counter is still there');
    assert.ok(first.has('process_cpu_user_seconds_total') && first.has('nodejs_heap_size_total_bytes'), 'default metrics still there');
    assertClosedLabels(first, 'prom-client output');

    // The registry shows what sentinel.metrics() shows (the held call keeps it still).
    const direct = scrape(sentinel);
    // (Breaker families left out: a named breaker of another test may be collected in between. The
    // evidence age grows between the two reads: only its presence is checked.)
    for (const name of Object.keys(FAMILY_TYPES).filter((n) => !n.startsWith('spend_sentinel_breaker_'))) {
      const [a, b] = [first, direct].map((families) => families.get(name).samples);
      if (name === 'spend_sentinel_evidence_age_seconds') continue;
      assert.deepEqual(a, b, `${name}: registry output = sentinel.metrics()`);
    }
    assert.equal(samplesNamed(first, 'spend_sentinel_evidence_age_seconds').length, 1);

    // Second scrape after the sentinel moved.
    assert.equal(sentinel.admit(0.5), true);
    assert.equal(sentinel.admit(10000), false);
    requests.inc(2);
    const text2 = await register.metrics();
    const second = readExposition(text2, { promClient: true });
    crossCheck(text2, second);
    assert.equal(
      valueOf(second, 'spend_sentinel_admitted_units_total', { status: 'ready' }),
      valueOf(first, 'spend_sentinel_admitted_units_total', { status: 'ready' }) + 0.5,
      'admitted units read fresh at the second scrape',
    );
    assert.equal(
      valueOf(second, 'spend_sentinel_refused_total', { reason: 'budget_exhausted' }),
      valueOf(first, 'spend_sentinel_refused_total', { reason: 'budget_exhausted' }) + 1,
    );
    assert.equal(valueOf(second, 'spend_sentinel_exposure_units'), sentinel.exposureUnits);
    assert.equal(valueOf(second, 'app_requests_total'), 5);

    remove();
    const text3 = await register.metrics();
    const third = readExposition(text3, { promClient: true });
    assert.deepEqual(ours(third), [], 'the remover removed every family');
    assert.equal(register.getSingleMetric('spend_sentinel_status'), undefined);
    assert.equal(valueOf(third, 'app_requests_total'), 5, 'the app counter stays');
    assert.ok(third.has('process_cpu_user_seconds_total'), 'default metrics stay');
    // Removed cleanly: collecting again does not clash.
    const again = collect(sentinel, register);
    assert.ok(register.getSingleMetric('spend_sentinel_status'));
    again();
    heldCall.release('valid');
  });

  test('registry.getMetricsAsJSON() has our families with their values', async () => {
    const { sentinel, heldCall } = await readySentinel();
    const register = new client.Registry();
    const remove = collect(sentinel, register);
    try {
      assert.equal(sentinel.admit(2), true);
      const json = await register.getMetricsAsJSON();
      assert.deepEqual(json.map((f) => f.name).sort(), Object.keys(FAMILY_TYPES).sort());
      const status = json.find((f) => f.name === 'spend_sentinel_status');
      assert.equal(status.type, 'gauge');
      assert.ok(status.help.length > 0);
      assert.deepEqual(Object.fromEntries(status.values.map((v) => [v.labels.status, v.value])), oneHot(STATUSES, 'ready'));
      const admitted = json.find((f) => f.name === 'spend_sentinel_admitted_units_total');
      assert.equal(admitted.type, 'counter');
      assert.equal(admitted.values.find((v) => v.labels.status === 'ready').value, valueOf(scrape(sentinel), 'spend_sentinel_admitted_units_total', { status: 'ready' }));
      const histogram = json.find((f) => f.name === 'spend_sentinel_refresh_duration_seconds');
      assert.equal(histogram.type, 'histogram');
      assert.equal(histogram.values.find((v) => v.metricName.endsWith('_count')).value, 1, 'one refresh answered');
      assert.ok(histogram.values.some((v) => v.metricName.endsWith('_bucket') && v.labels.le === '+Inf'));
    } finally {
      remove();
      heldCall.release('valid');
    }
  });

  test('omitting the registry uses prom-client\'s default register', async () => {
    const { sentinel, heldCall } = await readySentinel();
    assert.equal(client.register.getSingleMetric('spend_sentinel_status'), undefined, 'premise: the default register is clean');
    const remove = collect(sentinel);
    try {
      assert.ok(client.register.getSingleMetric('spend_sentinel_status'), 'registered in client.register');
      const text = await client.register.metrics();
      const families = readExposition(text, { promClient: true });
      assert.deepEqual(ours(families).sort(), Object.keys(FAMILY_TYPES).sort());
      assert.deepEqual(byLabel(families, 'spend_sentinel_status', 'status'), oneHot(STATUSES, 'ready'));
    } finally {
      remove();
      heldCall.release('valid');
    }
    assert.equal(client.register.getSingleMetric('spend_sentinel_status'), undefined, 'removed from client.register');
    assert.deepEqual(
      client.register.getMetricsAsArray().map((m) => m.name).filter((n) => n.startsWith('spend_sentinel_')),
      [],
      'nothing of ours left in the default register',
    );
  });

  test('bad arguments throw ERR_SPEND_SENTINEL_CONFIG and register nothing', () => {
    const sentinel = pool.make(fastOptions(scriptedAuthority((call) => held(call))));
    const register = new client.Registry();
    const cases = [
      ['no sentinel', () => collect(), /sentinel/],
      ['null sentinel', () => collect(null, register), /sentinel/],
      ['a plain object as sentinel', () => collect({}, register), /sentinel/],
      ['a registry as sentinel', () => collect(register, register), /sentinel/],
      ['a plain object as registry', () => collect(sentinel, {}), /registry/],
      ['null registry', () => collect(sentinel, null), /registry/],
      ['the prom-client module as registry', () => collect(sentinel, client), /registry/],
      ['a string registry', () => collect(sentinel, 'register'), /registry/],
      ['a registerMetric that is not a function', () => collect(sentinel, { registerMetric: true }), /registry/],
    ];
    for (const [what, call, names] of cases) {
      const err = catchError(call);
      assert.equal(err.code, 'ERR_SPEND_SENTINEL_CONFIG', `${what}: code (${err.message})`);
      assert.match(err.message, names, `${what}: the message names the argument`);
    }
    assert.equal(register.getMetricsAsArray().length, 0, 'nothing registered');
    assert.equal(client.register.getSingleMetric('spend_sentinel_status'), undefined, 'nothing registered in the default register');
  });

  // Regression: in a registry created with Registry.OPENMETRICS_CONTENT_TYPE, prom-client strips
  // `_total` from a counter's name and appends it to each sample; the first bridge registered the
  // full name and its samples came out as `spend_sentinel_refresh_total_total{...}`.
  test('an OpenMetrics registry: counters come out like prom-client\'s own (no _total_total)', async () => {
    const { sentinel, heldCall } = await readySentinel();
    const register = new client.Registry(client.Registry.OPENMETRICS_CONTENT_TYPE);
    new client.Counter({ name: 'app_requests_total', help: 'Requests served.', registers: [register] }).inc();
    const remove = collect(sentinel, register);
    try {
      const text = await register.metrics();
      assert.ok(text.includes('\napp_requests_total 1\n'), 'premise: prom-client writes its own counter as name_total');
      const doubled = text.split('\n').filter((l) => l.includes('_total_total'));
      assert.deepEqual(doubled, [], 'counter samples named *_total_total');
      assert.ok(text.includes('\nspend_sentinel_refresh_total{outcome="valid"} 1\n'), 'refresh_total{outcome="valid"} as a sample line');
    } finally {
      remove();
      heldCall.release('valid');
    }
  });
});
