// OpenTelemetry for the spend-sentinel/opentelemetry suites: a real SDK pipeline (a MeterProvider
// with a PeriodicExportingMetricReader over an InMemoryMetricExporter; nothing runs on its timer:
// `collect()` flushes) and a check that one collection says what `sentinel.metricFamilies()`
// says, family by family and series by series, through the metric catalog's mapping.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { labelKey } from './exposition.mjs';

const require = createRequire(import.meta.url);
const { metricCatalog } = require('../../binding.js');
const {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} = require('@opentelemetry/sdk-metrics');

export const CATALOG = metricCatalog();
export const SPECS = new Map(CATALOG.map((spec) => [spec.name, spec]));
const POINT_TYPES = {
  ObservableCounter: DataPointType.SUM,
  ObservableUpDownCounter: DataPointType.SUM,
  ObservableGauge: DataPointType.GAUGE,
  Histogram: DataPointType.HISTOGRAM,
};

/**
 * A MeterProvider whose reader exports into memory when `collect()` asks: cumulative (the
 * default), or `delta`, where a series not observed since the last collection has no point (a
 * cumulative export keeps the last point of every series an asynchronous instrument ever saw).
 */
export function otelPipeline({ delta = false, readers = [] } = {}) {
  const exporter = new InMemoryMetricExporter(delta ? AggregationTemporality.DELTA : AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 2_147_483_647 });
  const provider = new MeterProvider({ readers: [reader, ...readers] });
  return {
    provider,
    meter: provider.getMeter('spend-sentinel-test'),
    /** One collection and export (forceFlush): the exported metrics by name (none: nothing exported). */
    async collect() {
      exporter.reset();
      await reader.forceFlush();
      const exported = exporter.getMetrics();
      assert.ok(exported.length <= 1, 'one export per flush at most');
      return exported.length === 0 ? new Map() : metricsByName(exported[0]);
    },
    shutdown: () => provider.shutdown(),
  };
}

/** ResourceMetrics → Map name → MetricData (every scope). */
export function metricsByName(resourceMetrics) {
  const out = new Map();
  for (const { metrics } of resourceMetrics.scopeMetrics) {
    for (const metric of metrics) {
      assert.ok(!out.has(metric.descriptor.name), `${metric.descriptor.name} exported once`);
      out.set(metric.descriptor.name, metric);
    }
  }
  return out;
}

/** A metric's points as { attributes key → value } (missing metric: none). */
export function pointsOf(metrics, otelName, match = {}) {
  const out = {};
  for (const p of metrics.get(otelName)?.dataPoints ?? []) {
    if (Object.entries(match).every(([k, v]) => p.attributes[k] === v)) out[labelKey(p.attributes)] = p.value;
  }
  return out;
}

/** `{ value of attribute `by` → point value }` of the points matching `match`. */
export function byAttribute(metrics, otelName, by, match = {}) {
  const out = {};
  for (const p of metrics.get(otelName)?.dataPoints ?? []) {
    if (Object.entries(match).every(([k, v]) => p.attributes[k] === v)) out[p.attributes[by]] = p.value;
  }
  return out;
}

/**
 * Asserts that the collection `metrics` says what `before` (metricFamilies() read just before it)
 * and `after` (just after) say, with `attributes` on the sentinel's series: every family's
 * instrument (name, description = HELP, unit, kind), every series with the same value (the
 * evidence age between the two reads), and the histogram's buckets, count and sum.
 */
export function assertSameAsExposition(metrics, before, after, attributes, stage) {
  for (const [i, family] of before.entries()) {
    const spec = SPECS.get(family.name);
    assert.ok(spec, `${stage}: ${family.name} is in the catalog`);
    const metric = metrics.get(spec.otelName);
    const withAttrs = (labels) => (spec.scope === 'process' ? labels : { ...labels, ...attributes });
    if (spec.instrument === 'Histogram') {
      assertHistogram(metric, family, withAttrs({}), stage);
      continue;
    }
    if (family.samples.length === 0) continue; // an absent evidence age, no hold, no breaker
    assert.ok(metric, `${stage}: ${spec.otelName} exported`);
    assert.equal(metric.descriptor.description, family.help, `${stage}: ${spec.otelName} description = HELP`);
    assert.equal(metric.descriptor.unit, spec.otelUnit, `${stage}: ${spec.otelName} unit`);
    assert.equal(metric.dataPointType, POINT_TYPES[spec.instrument], `${stage}: ${spec.otelName} point type`);
    if (metric.dataPointType === DataPointType.SUM) {
      assert.equal(metric.isMonotonic, spec.instrument === 'ObservableCounter', `${stage}: ${spec.otelName} monotonic`);
    }
    const seen = pointsOf(metrics, spec.otelName, spec.scope === 'process' ? {} : attributes);
    const want = Object.fromEntries(family.samples.map((s) => [labelKey(withAttrs(s.labels)), s.value]));
    if (family.name === 'spend_sentinel_evidence_age_seconds') {
      const [key] = Object.keys(want);
      assert.deepEqual(Object.keys(seen), [key], `${stage}: one evidence age point`);
      const [low, high] = [want[key], after[i].samples[0].value];
      assert.ok(low <= seen[key] && seen[key] <= high, `${stage}: evidence age ${seen[key]} outside [${low}, ${high}]`);
      continue;
    }
    assert.deepEqual(seen, want, `${stage}: ${spec.otelName} = ${family.name}`);
  }
}

function assertHistogram(metric, family, attributes, stage) {
  const spec = SPECS.get(family.name);
  const value = (suffix, le) =>
    family.samples.find((s) => s.name === `${family.name}${suffix}` && (le === undefined || s.labels.le === le)).value;
  const count = value('_count');
  const point = metric?.dataPoints.find((p) => labelKey(p.attributes) === labelKey(attributes));
  if (count === 0) {
    assert.equal(point, undefined, `${stage}: no refresh, no histogram point`);
    return;
  }
  assert.ok(point, `${stage}: a histogram point with ${labelKey(attributes)}`);
  assert.equal(metric.dataPointType, DataPointType.HISTOGRAM, `${stage}: a Histogram`);
  assert.equal(metric.descriptor.description, family.help);
  assert.equal(metric.descriptor.unit, 's');
  assert.deepEqual(point.value.buckets.boundaries, spec.buckets, `${stage}: the exposition's bucket boundaries`);
  const cumulative = [...spec.buckets.map((le) => value('_bucket', String(le))), value('_bucket', '+Inf')];
  const perBucket = cumulative.map((c, j) => c - (j === 0 ? 0 : cumulative[j - 1]));
  assert.deepEqual(point.value.buckets.counts, perBucket, `${stage}: bucket counts`);
  assert.equal(point.value.count, count, `${stage}: one record per refresh sent`);
  // The same durations: the SDK adds them up per collection and then merges, so only the last
  // bits may differ.
  const sum = value('_sum');
  assert.ok(Math.abs(point.value.sum - sum) <= 1e-12 * Math.max(1, sum), `${stage}: duration sum ${point.value.sum}, exposition ${sum}`);
}
