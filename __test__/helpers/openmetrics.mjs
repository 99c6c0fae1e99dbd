// A strict reader of the OpenMetrics 1.0 text format, for the metrics suites.
//
// npm has no maintained OpenMetrics parser (prom-client writes the format but does not read it;
// parse-prometheus-text-format reads 0.0.4 only), so this checks the rules of the OpenMetrics
// specification that our output can break, with node:assert so a failure names the line (and
// `crossCheckOpenMetrics` has the reference parser of the Prometheus project, Python's
// prometheus_client, read the same text where it is installed: Debian python3-prometheus-client):
//   - the text ends with `# EOF` and a line feed, nothing after it, no blank lines, LF only;
//   - each family's metadata (TYPE, UNIT, HELP: each at most once) comes before its samples,
//     the family's lines are contiguous, and a family appears once;
//   - a UNIT is a suffix of its family name; a counter family is named without `_total`, an info
//     family without `_info`;
//   - sample names by type: counter `<name>_total` (or `_created`), gauge `<name>`, info
//     `<name>_info`, histogram `<name>_bucket` / `_count` / `_sum` (or `_created`);
//   - label names, quoting and escaping; no repeated label; no duplicate series;
//   - values are OpenMetrics numbers; counters, histogram counts and buckets are non-negative and
//     not NaN; an info sample is 1; histogram buckets have increasing `le` bounds, are cumulative,
//     end with `+Inf`, and `+Inf` equals `_count`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { checkHistogram, labelKey } from './exposition.mjs';

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL_VALUE = '"(?:[^"\\\\\\n]|\\\\[\\\\"n])*"';
const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*=${LABEL_VALUE}`;
const META_LINE = new RegExp(`^# (TYPE|UNIT|HELP) (${NAME}) (.*)$`);
const SAMPLE_LINE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*)?\\})? (\\S+)$`);
const LABEL_PAIR = new RegExp(`([a-zA-Z_][a-zA-Z0-9_]*)=(${LABEL_VALUE})`, 'g');
const NUMBER = /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?Inf|NaN)$/;
const TYPES = ['counter', 'gauge', 'histogram', 'gaugehistogram', 'stateset', 'info', 'summary', 'unknown'];
const SUFFIXES = {
  counter: ['_total', '_created'],
  gauge: [''],
  info: ['_info'],
  histogram: ['_bucket', '_count', '_sum', '_created'],
  unknown: [''],
};

const unescape = (v) => v.slice(1, -1).replace(/\\(["\\n])/g, (_, c) => (c === 'n' ? '\n' : c));

function numberOf(text, line) {
  assert.match(text, NUMBER, `not an OpenMetrics number in ${JSON.stringify(line)}`);
  if (/^\+?Inf$/.test(text)) return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}

/**
 * Reads `text` strictly; returns a Map family name → { type, unit, help, samples: [{ name, labels,
 * value }] } in the order of the text.
 */
export function readOpenMetrics(text) {
  assert.equal(typeof text, 'string');
  assert.ok(!text.includes('\r'), 'LF line endings only');
  assert.ok(text.endsWith('# EOF\n'), 'the exposition must end with "# EOF" and a line feed');
  const lines = text.slice(0, -1).split('\n');
  assert.equal(lines.indexOf('# EOF'), lines.length - 1, '"# EOF" only once, as the last line');
  lines.pop();
  const families = new Map();
  let current = null;
  for (const line of lines) {
    assert.notEqual(line, '', 'no blank lines in OpenMetrics');
    const meta = META_LINE.exec(line);
    if (meta) {
      const [, kind, name, value] = meta;
      if (current?.name !== name) {
        assert.ok(!families.has(name), `family ${name} appears twice (its lines must be contiguous)`);
        current = { name, type: 'unknown', unit: undefined, help: undefined, samples: [], seen: new Set(), series: new Set() };
        families.set(name, current);
      }
      assert.equal(current.samples.length, 0, `metadata after samples: ${JSON.stringify(line)}`);
      assert.ok(!current.seen.has(kind), `${kind} twice for ${name}`);
      current.seen.add(kind);
      if (kind === 'TYPE') {
        assert.ok(TYPES.includes(value), `unknown TYPE ${JSON.stringify(value)}`);
        current.type = value;
      } else if (kind === 'UNIT') {
        assert.match(value, /^[a-zA-Z0-9_:]+$/, `UNIT ${JSON.stringify(value)}`);
        assert.ok(name.endsWith(`_${value}`), `UNIT ${value} must be a suffix of the family name ${name}`);
        current.unit = value;
      } else {
        assert.match(value, /^(?:[^\\\n]|\\[\\"n])*$/, `HELP escaping in ${JSON.stringify(line)}`);
        current.help = value.replace(/\\(["\\n])/g, (_, c) => (c === 'n' ? '\n' : c));
      }
      continue;
    }
    assert.ok(!line.startsWith('#'), `unexpected comment line: ${JSON.stringify(line)}`);
    const sample = SAMPLE_LINE.exec(line);
    assert.ok(sample, `malformed sample line: ${JSON.stringify(line)}`);
    const [, name, labelText = '', valueText] = sample;
    assert.ok(current, `a sample before any metadata: ${JSON.stringify(line)}`);
    const suffixes = SUFFIXES[current.type];
    assert.ok(suffixes, `type ${current.type} not checked by this reader`);
    assert.ok(
      suffixes.some((s) => name === current.name + s),
      `sample ${name} does not belong to ${current.type} family ${current.name}`,
    );
    const labels = {};
    for (const [, key, raw] of labelText.matchAll(LABEL_PAIR)) {
      assert.ok(!Object.hasOwn(labels, key), `label ${key} repeated in ${JSON.stringify(line)}`);
      labels[key] = unescape(raw);
    }
    const key = name + labelKey(labels);
    assert.ok(!current.series.has(key), `duplicate series ${JSON.stringify(line)}`);
    current.series.add(key);
    const value = numberOf(valueText, line);
    if (current.type === 'counter' || current.type === 'histogram') {
      assert.ok(value >= 0, `a negative or NaN ${current.type} value in ${JSON.stringify(line)}`);
    }
    if (current.type === 'info') assert.equal(value, 1, `an info sample is 1: ${JSON.stringify(line)}`);
    current.samples.push({ name, labels, value });
  }
  for (const family of families.values()) {
    if (family.type === 'counter') assert.ok(!family.name.endsWith('_total'), `counter family ${family.name} named with _total`);
    if (family.type === 'info') assert.ok(!family.name.endsWith('_info'), `info family ${family.name} named with _info`);
    if (family.type === 'histogram') checkHistogram(family);
    delete family.seen;
    delete family.series;
  }
  return families;
}


const PYTHON_READER = `
import sys, json
from prometheus_client.openmetrics.parser import text_string_to_metric_families
out = []
for f in text_string_to_metric_families(sys.stdin.read()):
    out.append({"name": f.name, "type": f.type, "unit": f.unit, "help": f.documentation,
                "samples": [{"name": s.name, "labels": s.labels, "value": s.value} for s in f.samples]})
print(json.dumps(out))
`;

/** A Python that imports prometheus_client, or null. */
export const referencePython = ['python3', '/usr/bin/python3'].find(
  (python) => spawnSync(python, ['-c', 'import prometheus_client.openmetrics.parser'], { stdio: 'ignore' }).status === 0,
) ?? null;

/**
 * Parses `text` with prometheus_client's OpenMetrics parser (it must accept it) and checks it
 * reads the families of `readOpenMetrics` with the same types, units, help and samples.
 */
export function crossCheckOpenMetrics(text, families) {
  assert.ok(referencePython, 'premise: prometheus_client is installed');
  const run = spawnSync(referencePython, ['-c', PYTHON_READER], { input: text, encoding: 'utf8', timeout: 30_000 });
  assert.equal(run.status, 0, `prometheus_client rejects the exposition:\n${run.stderr}`);
  const theirs = JSON.parse(run.stdout);
  const number = (v) => (typeof v === 'string' ? Number(v.replace(/^\+?inf$/i, 'Infinity').replace(/^-inf$/i, '-Infinity')) : v);
  assert.deepEqual(
    theirs.map((f) => ({ name: f.name, type: f.type, unit: f.unit || undefined, help: f.help })),
    [...families.values()].map((f) => ({ name: f.name, type: f.type, unit: f.unit, help: f.help })),
    'prometheus_client reads other families',
  );
  for (const [i, family] of [...families.values()].entries()) {
    assert.deepEqual(
      theirs[i].samples.map((s) => ({ ...s, value: number(s.value) })),
      family.samples,
      `${family.name}: samples as prometheus_client reads them`,
    );
  }
}
