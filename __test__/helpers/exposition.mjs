// A strict reader of the Prometheus text exposition format 0.0.4, for the metrics suites.
//
// `parse-prometheus-text-format` (the devDependency) is lenient: it accepts any value text, does
// not check that a family's samples are contiguous, that HELP/TYPE come first, that series are
// unique, or that histogram buckets are cumulative and end with `+Inf`. `readExposition` checks
// all of that directly on the text (with node:assert, so a failure names the offending line), and
// `crossCheck` makes sure the library reads the same families, types, help and values.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const parsePrometheusTextFormat = createRequire(import.meta.url)('parse-prometheus-text-format');

export const STATUSES = ['ready', 'degraded', 'not_ready'];
export const REASONS = [
  'shutting_down',
  'invalid_credential',
  'capability_missing',
  'no_evidence',
  'evidence_too_old',
  'budget_exhausted',
  'refresh_indeterminate',
  'verified',
  'no_fleet_lease',
  'internal_error',
  'held',
];
/** The reasons admission can refuse with: refused_total's closed set (a hold never refuses). */
export const REFUSAL_REASONS = REASONS.filter((r) => !['verified', 'refresh_indeterminate', 'held'].includes(r));
/** The reasons a status is entered with: ready is verified; degraded a spent budget or an inconclusive refresh. */
export const REASONS_INTO = Object.freeze({
  ready: ['verified'],
  degraded: ['budget_exhausted', 'refresh_indeterminate'],
  not_ready: REASONS.filter((r) => !['verified', 'refresh_indeterminate', 'budget_exhausted'].includes(r)),
});
/** Every transitions_total series that can happen: `from->to (reason)`, from ≠ to (22). */
export const TRANSITION_KEYS = STATUSES.flatMap((from) =>
  STATUSES.filter((to) => to !== from).flatMap((to) => REASONS_INTO[to].map((reason) => `${from}->${to} (${reason})`)),
);
export const OUTCOMES = ['valid', 'invalid_credential', 'capability_missing', 'indeterminate'];
/** Why a refresh was indeterminate (docs/metrics.md), in the exposition's order. */
export const REFRESH_CAUSES = [
  'breaker_open',
  'timeout',
  'dns',
  'connect',
  'tls',
  'connection_lost',
  'http_3xx',
  'http_4xx',
  'http_429',
  'http_5xx',
  'http_other_status',
  'body_too_large',
  'body_not_json',
  'body_no_capabilities',
  'inspect_threw',
  'inspect_rejected',
  'inspect_bad_value',
  'inspect_timeout',
  'inspect_indeterminate',
];
export const BREAKER_STATES = ['closed', 'open', 'half_open'];
export const BREAKER_RESULTS = ['success', 'failure', 'timeout', 'rejected'];

/** The families a sentinel exposes, and their types (the metrics contract). */
export const FAMILY_TYPES = Object.freeze({
  spend_sentinel_status: 'gauge',
  spend_sentinel_evidence_age_seconds: 'gauge',
  spend_sentinel_stale_window_seconds: 'gauge',
  spend_sentinel_node_budget_units: 'gauge',
  spend_sentinel_exposure_units: 'gauge',
  spend_sentinel_refresh_total: 'counter',
  spend_sentinel_refresh_indeterminate_total: 'counter',
  spend_sentinel_refresh_duration_seconds: 'histogram',
  spend_sentinel_transitions_total: 'counter',
  spend_sentinel_admitted_units_total: 'counter',
  spend_sentinel_refused_total: 'counter',
  spend_sentinel_refused_units_total: 'counter',
  spend_sentinel_reserved_units: 'gauge',
  spend_sentinel_refunded_units_total: 'counter',
  spend_sentinel_overage_units_total: 'counter',
  spend_sentinel_refresh_on_demand_total: 'counter',
  spend_sentinel_holds: 'gauge',
  spend_sentinel_build_info: 'gauge',
  spend_sentinel_breaker_state: 'gauge',
  spend_sentinel_breaker_calls_total: 'counter',
});

const LE_VALUE = /^(?:\d+(?:\.\d+)?|\+Inf)$/;
const anyString = (v) => typeof v === 'string';
const oneOf = (set) => (v) => set.includes(v);

/** For each sample name: its label names (exactly) and the values each may take. */
export const LABEL_RULES = Object.freeze({
  spend_sentinel_status: { status: oneOf(STATUSES) },
  spend_sentinel_evidence_age_seconds: {},
  spend_sentinel_stale_window_seconds: {},
  spend_sentinel_node_budget_units: {},
  spend_sentinel_exposure_units: {},
  spend_sentinel_refresh_total: { outcome: oneOf(OUTCOMES) },
  spend_sentinel_refresh_indeterminate_total: { cause: oneOf(REFRESH_CAUSES) },
  spend_sentinel_refresh_duration_seconds_bucket: { le: (v) => LE_VALUE.test(v) },
  spend_sentinel_refresh_duration_seconds_sum: {},
  spend_sentinel_refresh_duration_seconds_count: {},
  spend_sentinel_transitions_total: { from: oneOf(STATUSES), to: oneOf(STATUSES), reason: oneOf(REASONS) },
  // Units are admitted only on ready or degraded (not_ready refuses).
  spend_sentinel_admitted_units_total: { status: oneOf(['ready', 'degraded']) },
  spend_sentinel_refused_total: { reason: oneOf(REFUSAL_REASONS) },
  spend_sentinel_refused_units_total: { reason: oneOf(REFUSAL_REASONS) },
  spend_sentinel_reserved_units: {},
  spend_sentinel_refunded_units_total: {},
  spend_sentinel_overage_units_total: {},
  spend_sentinel_refresh_on_demand_total: {},
  // `name` is the service's own hold name, checked: 1 to 64 of [A-Za-z0-9_.:-].
  spend_sentinel_holds: { name: (v) => /^[A-Za-z0-9_.:-]{1,64}$/.test(v) },
  spend_sentinel_build_info: { version: (v) => /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/.test(v) },
  // `name` is the user's own breaker name: any string (escaped).
  spend_sentinel_breaker_state: { name: anyString, state: oneOf(BREAKER_STATES) },
  spend_sentinel_breaker_calls_total: { name: anyString, result: oneOf(BREAKER_RESULTS) },
});

const SAMPLE_LINE =
  /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*")*)\})? (\S+)$/;
const LABEL_PAIR = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"/g;
const NUMBER = /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]Inf|NaN)$/;
const HELP_LINE = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.+)$/;
const TYPE_LINE = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/;

const unescapeLabel = (v) => v.replace(/\\(["\\n])/g, (_, c) => (c === 'n' ? '\n' : c));

function numberOf(text, line, lenient) {
  if (lenient && text === 'Nan') return NaN; // prom-client's own spelling of NaN
  assert.match(text, NUMBER, `not a Prometheus number in line ${JSON.stringify(line)}`);
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}

/** `{a:"1",b:"2"}`-style key of a label set, for uniqueness checks. */
export const labelKey = (labels) =>
  JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((k) => [k, labels[k]]),
  );

/**
 * Reads `text` strictly; returns a Map name → { help, type, samples: [{ name, labels, value }] } in
 * the order of the text. `blankLines` allows the empty lines prom-client puts between families;
 * `promClient` also its `Nan` value spelling in families that are not ours (nodejs_eventloop_lag_*).
 */
export function readExposition(text, { blankLines = false, promClient = false } = {}) {
  blankLines ||= promClient;
  assert.equal(typeof text, 'string', 'the exposition must be a string');
  assert.ok(text.endsWith('\n'), 'the exposition must end with a line feed');
  assert.ok(!text.includes('\r'), 'the exposition must use LF line endings only');
  const families = new Map();
  let current = null;
  let expect = 'help'; // help → type → samples
  const lines = text.slice(0, -1).split('\n');
  for (const line of lines) {
    if (line === '') {
      assert.ok(blankLines, 'unexpected empty line in the exposition');
      continue;
    }
    const help = HELP_LINE.exec(line);
    if (help) {
      assert.ok(!families.has(help[1]), `family ${help[1]} appears twice (its lines must be contiguous)`);
      current = { name: help[1], help: help[2], type: null, samples: [], series: new Set() };
      families.set(current.name, current);
      expect = 'type';
      continue;
    }
    const type = TYPE_LINE.exec(line);
    if (type) {
      assert.equal(expect, 'type', `TYPE line out of place: ${JSON.stringify(line)}`);
      assert.equal(type[1], current.name, `TYPE line of another family than its HELP: ${JSON.stringify(line)}`);
      current.type = type[2];
      expect = 'samples';
      continue;
    }
    assert.ok(!line.startsWith('#'), `unexpected comment line: ${JSON.stringify(line)}`);
    assert.equal(expect, 'samples', `sample line before its family's HELP and TYPE: ${JSON.stringify(line)}`);
    const sample = SAMPLE_LINE.exec(line);
    assert.ok(sample, `malformed sample line (names, label quoting or escaping): ${JSON.stringify(line)}`);
    const [, name, labelText = '', valueText] = sample;
    const allowed = current.type === 'histogram' ? ['_bucket', '_sum', '_count'].map((s) => current.name + s) : [current.name];
    assert.ok(allowed.includes(name), `sample ${name} inside family ${current.name} (${current.type})`);
    const labels = {};
    for (const [, key, raw] of labelText.matchAll(LABEL_PAIR)) {
      assert.ok(!Object.hasOwn(labels, key), `label ${key} repeated in ${JSON.stringify(line)}`);
      labels[key] = unescapeLabel(raw);
    }
    const key = `${name}${labelKey(labels)}`;
    assert.ok(!current.series.has(key), `duplicate series ${JSON.stringify(line)}`);
    current.series.add(key);
    current.samples.push({ name, labels, value: numberOf(valueText, line, promClient && !current.name.startsWith('spend_sentinel_')) });
  }
  for (const family of families.values()) {
    assert.ok(family.type, `family ${family.name} has no TYPE line`);
    if (family.type === 'histogram') checkHistogram(family);
    delete family.series;
  }
  return families;
}

/** A histogram family: increasing bounds up to +Inf, cumulative buckets, _sum, and _count = +Inf. */
export function checkHistogram(family) {
  const groups = new Map();
  for (const s of family.samples) {
    const { le, ...rest } = s.labels;
    const key = labelKey(rest);
    if (!groups.has(key)) groups.set(key, { buckets: [], sum: undefined, count: undefined });
    const g = groups.get(key);
    if (s.name.endsWith('_bucket')) {
      assert.ok(le !== undefined, `${family.name}: a bucket without le`);
      assert.match(le, LE_VALUE, `${family.name}: le must be a number or +Inf (got ${JSON.stringify(le)})`);
      g.buckets.push({ le: le === '+Inf' ? Infinity : Number(le), value: s.value });
    } else {
      assert.equal(le, undefined, `${s.name} must not carry le`);
      if (s.name.endsWith('_sum')) g.sum = s.value;
      else g.count = s.value;
    }
  }
  for (const g of groups.values()) {
    assert.ok(g.buckets.length > 0, `${family.name}: no buckets`);
    for (let i = 1; i < g.buckets.length; i += 1) {
      assert.ok(g.buckets[i].le > g.buckets[i - 1].le, `${family.name}: bucket bounds must increase`);
      assert.ok(g.buckets[i].value >= g.buckets[i - 1].value, `${family.name}: buckets must be cumulative`);
    }
    const last = g.buckets.at(-1);
    assert.equal(last.le, Infinity, `${family.name}: the last bucket must be le="+Inf"`);
    assert.notEqual(g.sum, undefined, `${family.name}: _sum missing`);
    assert.notEqual(g.count, undefined, `${family.name}: _count missing`);
    assert.equal(last.value, g.count, `${family.name}: the +Inf bucket must equal _count`);
  }
}

/**
 * Parses `text` with parse-prometheus-text-format (it must not throw) and checks that it reads
 * the same families, types, help texts and values as `readExposition`.
 */
export function crossCheck(text, families) {
  let parsed;
  assert.doesNotThrow(() => {
    parsed = parsePrometheusTextFormat(text);
  }, 'parse-prometheus-text-format rejects the exposition');
  const byName = new Map(parsed.map((f) => [f.name, f]));
  assert.deepEqual([...byName.keys()].sort(), [...families.keys()].sort(), 'parse-prometheus-text-format sees other families');
  for (const family of families.values()) {
    const theirs = byName.get(family.name);
    assert.equal(theirs.type, family.type.toUpperCase(), `${family.name}: type as parsed`);
    assert.ok(theirs.help.length > 0, `${family.name}: HELP empty as parsed`);
    assert.equal(theirs.help, family.help, `${family.name}: help as parsed`);
    if (family.type === 'histogram') {
      // The library merges the buckets of every label set into one map: compare values only for
      // a histogram without labels other than le (ours).
      if (family.samples.length === 0 || family.samples.some((s) => Object.keys(s.labels).some((k) => k !== 'le'))) continue;
      const flat = theirs.metrics.find((m) => m.buckets);
      const withoutLabels = theirs.metrics.find((m) => m.count !== undefined) ?? flat;
      assert.ok(flat && withoutLabels, `${family.name}: the parser found no buckets`);
      for (const s of family.samples) {
        if (s.name.endsWith('_bucket')) assert.equal(Number(flat.buckets[s.labels.le]), s.value, `${family.name} le=${s.labels.le} as parsed`);
        else if (s.name.endsWith('_sum')) assert.equal(Number(withoutLabels.sum), s.value, `${family.name}_sum as parsed`);
        else assert.equal(Number(withoutLabels.count), s.value, `${family.name}_count as parsed`);
      }
    } else {
      const values = theirs.metrics.map((m) => [labelKey(m.labels ?? {}), Number(m.value)]).sort();
      const ours = family.samples.map((s) => [labelKey(s.labels), s.value]).sort();
      assert.deepEqual(values, ours, `${family.name}: samples as parsed`);
    }
  }
  return parsed;
}

/** Every label of every sample of our families has the right names and a value of its closed set. */
export function assertClosedLabels(families, where = '') {
  for (const family of families.values()) {
    if (!family.name.startsWith('spend_sentinel_')) continue;
    for (const s of family.samples) {
      const rules = LABEL_RULES[s.name];
      assert.ok(rules, `${where}: unexpected series ${s.name}`);
      assert.deepEqual(Object.keys(s.labels).sort(), Object.keys(rules).sort(), `${where}: label names of ${s.name}`);
      for (const [k, v] of Object.entries(s.labels)) {
        assert.ok(rules[k](v), `${where}: ${s.name} has ${k}=${JSON.stringify(v)}, outside its closed set`);
      }
      if (s.name === 'spend_sentinel_transitions_total') {
        assert.notEqual(s.labels.from, s.labels.to, `${where}: a transition from a status to itself`);
        assert.ok(REASONS_INTO[s.labels.to].includes(s.labels.reason), `${where}: ${s.labels.to} entered with ${s.labels.reason}`);
      }
    }
  }
}

/** All samples named `sampleName` (across families). */
export function samplesNamed(families, sampleName) {
  return [...families.values()].flatMap((f) => f.samples.filter((s) => s.name === sampleName));
}

/** The value of the one sample named `sampleName` with exactly `labels`; fails when absent. */
export function valueOf(families, sampleName, labels = {}) {
  const key = labelKey(labels);
  const found = samplesNamed(families, sampleName).filter((s) => labelKey(s.labels) === key);
  assert.equal(found.length, 1, `expected one ${sampleName}${JSON.stringify(labels)}, found ${found.length}`);
  return found[0].value;
}

/** `{ labelValue: value }` of a family with one label (e.g. refresh_total by outcome). */
export function byLabel(families, sampleName, label, filter = {}) {
  const out = {};
  for (const s of samplesNamed(families, sampleName)) {
    if (!Object.entries(filter).every(([k, v]) => s.labels[k] === v)) continue;
    assert.ok(!Object.hasOwn(out, s.labels[label]), `${sampleName}: ${label}=${s.labels[label]} twice`);
    out[s.labels[label]] = s.value;
  }
  return out;
}
