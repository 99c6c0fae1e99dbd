'use strict';
// Bridge to OpenTelemetry metrics: `observe(sentinel, { meter, attributes })` makes, on the Meter
// the service hands it, one instrument per family of the Prometheus exposition (names, units,
// descriptions and instrument kinds from the metric catalog: `metricCatalog()`, the table in
// docs/metrics.md). Counters and gauges are observed from memory when the SDK collects, by one
// batch callback per meter over every sentinel observed there (one native call per sentinel that
// hands over numbers only; the series' attributes are made again only when its series change); the
// refresh duration is a Histogram recorded once per refresh sent, with the exposition's buckets.
//
// Several sentinels share a meter with distinct `attributes` (the prom-client bridge's `labels`
// rule); observing the same sentinel again is a no-op; a closed sentinel stops reporting; the
// process-wide breaker families are reported once per meter, without the attributes.

const { checkSentinel, readOptions } = require('./options');
const { metricCatalog, metricsFeed } = require('./native');
const { attach, checkConstantLabels } = require('./bridge-labels');

const CATALOG = metricCatalog();
const HISTOGRAM = CATALOG.find((spec) => spec.instrument === 'Histogram');
const METER_METHODS = [
  'createHistogram',
  'createObservableCounter',
  'createObservableUpDownCounter',
  'createObservableGauge',
  'addBatchObservableCallback',
  'removeBatchObservableCallback',
];

/** meter → { entries: Map<attributesKey, entry>, names, registered: { callback, observables } | null } */
const meters = new WeakMap();
/** meter → { histogram, byIndex: instrument per catalog index, observables }: made once per meter, kept. */
const instrumentsOf = new WeakMap();

const meterOption = (value, fail) => {
  const ok = value !== null && typeof value === 'object' && METER_METHODS.every((m) => typeof value[m] === 'function');
  if (!ok) fail('must be an OpenTelemetry Meter (metrics.getMeter(name) of @opentelemetry/api, or a MeterProvider\'s getMeter)');
  return value;
};

/**
 * The instruments of `meter`: the histogram and those of the sentinel and process-wide families
 * at once, the fleet's with the first sentinel that has a fleet.
 */
function instrumentsFor(meter, withFleet) {
  let made = instrumentsOf.get(meter);
  if (made === undefined) {
    const histogram = meter.createHistogram(HISTOGRAM.otelName, {
      description: HISTOGRAM.help,
      unit: HISTOGRAM.otelUnit,
      advice: { explicitBucketBoundaries: HISTOGRAM.buckets },
    });
    made = { histogram, byIndex: [], observables: [] };
    instrumentsOf.set(meter, made);
  }
  for (const [i, spec] of CATALOG.entries()) {
    if (made.byIndex[i] || spec === HISTOGRAM || (spec.scope === 'fleet' && !withFleet)) continue;
    made.byIndex[i] = meter[`create${spec.instrument}`](spec.otelName, { description: spec.help, unit: spec.otelUnit });
    made.observables.push(made.byIndex[i]);
  }
  return made;
}

/** What each series of a feed's `layout` is observed as: its instrument and attributes. */
function seriesOf(layout, made, attributes) {
  return layout.map(({ family, labels }) => {
    const processWide = CATALOG[family].scope === 'process';
    return { instrument: made.byIndex[family], processWide, attributes: processWide ? labels : { ...labels, ...attributes } };
  });
}

/** The batch callback of `state`: every open sentinel's series, the process-wide ones once. */
function observerOf(state, made) {
  return (result) => {
    let processWideDone = false;
    for (const entry of state.entries.values()) {
      const reading = entry.feed.read();
      if (reading === null) continue; // closed: it reports nothing more
      if (reading.layout) entry.series = seriesOf(reading.layout, made, entry.attributes);
      const { values } = reading;
      const { series } = entry;
      for (let i = 0; i < values.length; i++) {
        if (series[i].processWide && processWideDone) continue;
        result.observe(series[i].instrument, values[i], series[i].attributes);
      }
      processWideDone = true;
    }
  };
}

/** (Re)registers the batch callback over every observable instrument, or removes it with the last sentinel. */
function register(meter, state, made) {
  const want = state.entries.size === 0 ? [] : [...made.observables];
  const had = state.registered;
  if (had && had.observables.length === want.length) return;
  if (had) meter.removeBatchObservableCallback(had.callback, had.observables);
  state.registered = null;
  if (want.length === 0) return;
  const callback = had?.callback ?? observerOf(state, made);
  meter.addBatchObservableCallback(callback, want);
  state.registered = { callback, observables: want };
}

/**
 * Observes `sentinel` on `options.meter` with `options.attributes` added to each of its series.
 * Returns a function that stops observing it (the batch callback leaves the meter with the last
 * sentinel observed there).
 */
function observe(sentinel, options) {
  checkSentinel('observe', sentinel);
  const { meter, attributes } = readOptions('observe', options, {
    meter: meterOption,
    attributes: (value) => checkConstantLabels('observe', 'attributes', value),
  });
  const { state, key, taken } = attach(meters, meter, sentinel, attributes, {
    where: 'observe',
    option: 'attributes',
    place: 'observed on this meter',
    fresh: () => ({ registered: null }),
  });
  if (taken) return taken.stop; // observed already: a no-op
  const made = instrumentsFor(meter, typeof sentinel.fleet === 'function' && sentinel.fleet() !== null);
  const constant = Object.freeze({ ...attributes });
  const feed = metricsFeed(sentinel, (seconds) => made.histogram.record(seconds, constant));
  const entry = { sentinel, feed, attributes: constant, series: [] };
  entry.stop = function stop() {
    if (state.entries.get(key) !== entry) return;
    state.entries.delete(key);
    feed.stop();
    register(meter, state, made);
  };
  state.entries.set(key, entry);
  register(meter, state, made);
  return entry.stop;
}

module.exports = { observe };
