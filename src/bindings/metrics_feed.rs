//! What the OpenTelemetry bridge (js/opentelemetry.js) reads: the metric catalog, and per
//! sentinel its families at collection time and the duration of each refresh as it ends.

use std::collections::BTreeMap;
use std::sync::{Arc, Weak};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use parking_lot::Mutex;

use super::events::JsSubscribers;
use super::sentinel::{families_of, Sentinel};
use crate::fleet::Fleet;
use crate::metrics::catalog::{Instrument, CATALOG};
use crate::shared_sentinel::SharedSentinel;

/// One series of a `MetricsFeed` reading: its family (an index into `metricCatalog()`) and labels.
#[napi(object, object_from_js = false)]
pub struct FeedSeries {
    pub family: u32,
    pub labels: BTreeMap<String, String>,
}

/// `feed.read()`: the value of every series but the histogram's, in the order of `layout`;
/// `layout` only when the series differ from those of this feed's previous reading (the first
/// reading, a new hold name, a breaker made or collected, the evidence age appearing).
#[napi(object, object_from_js = false)]
pub struct FeedReading {
    pub values: Float64Array,
    pub layout: Option<Vec<FeedSeries>>,
}

/// A series: its family's index in `CATALOG`, and its labels.
type Series = (usize, Vec<(&'static str, String)>);

/// One family of `metricCatalog()`: its Prometheus name, HELP text and type, and its name, unit
/// and instrument in OpenTelemetry.
#[napi(object)]
pub struct MetricSpec {
    pub name: String,
    pub help: String,
    /// As in `metricFamilies()`: `gauge`, `counter` or `histogram`.
    #[napi(js_name = "type")]
    pub kind: String,
    /// Its label names (a histogram's `le` aside).
    pub labels: Vec<String>,
    /// Whence it comes: every sentinel, a sentinel with `budget.fleet`, or every named breaker.
    #[napi(ts_type = "'sentinel' | 'fleet' | 'process'")]
    pub scope: String,
    pub otel_name: String,
    pub otel_unit: String,
    #[napi(
        ts_type = "'ObservableCounter' | 'ObservableUpDownCounter' | 'ObservableGauge' | 'Histogram'"
    )]
    pub instrument: String,
    /// A histogram's bucket upper bounds (seconds); empty otherwise.
    pub buckets: Vec<f64>,
}

/// Every metric family `metrics()` can show, in its order (docs/metrics.md, OpenTelemetry).
#[napi]
pub fn metric_catalog() -> Vec<MetricSpec> {
    CATALOG
        .iter()
        .map(|spec| MetricSpec {
            name: spec.name.to_owned(),
            help: spec.help.to_owned(),
            kind: spec.kind.text_kind().to_owned(),
            labels: spec.labels.iter().map(|l| (*l).to_owned()).collect(),
            scope: spec.scope.as_str().to_owned(),
            otel_name: spec.otel_name.to_owned(),
            otel_unit: spec.otel_unit.to_owned(),
            instrument: spec.instrument.as_str().to_owned(),
            buckets: spec.buckets.to_vec(),
        })
        .collect()
}

/// One sentinel as the OpenTelemetry bridge reads it. Internal to js/opentelemetry.js.
#[napi]
pub struct MetricsFeed {
    shared: Arc<SharedSentinel>,
    fleet: Option<Arc<Fleet>>,
    subscribers: Weak<JsSubscribers>,
    listener: u64,
    /// The series of the last reading.
    layout: Mutex<Vec<Series>>,
}

#[napi]
impl MetricsFeed {
    /// The values of the sentinel's series now (those of `metricFamilies()` but the histogram's:
    /// one native call, numbers only), or `null` once it is closed.
    #[napi(ts_return_type = "FeedReading | null")]
    pub fn read(&self) -> Option<FeedReading> {
        if self.shared.is_closed() {
            return None;
        }
        let mut values = Vec::with_capacity(128);
        let mut layout: Vec<Series> = Vec::with_capacity(128);
        for family in families_of(&self.shared, self.fleet.as_ref()) {
            let Some(index) = CATALOG.iter().position(|s| s.name == family.name) else {
                continue;
            };
            if CATALOG[index].instrument == Instrument::Histogram {
                continue;
            }
            for sample in family.samples {
                values.push(sample.value);
                layout.push((index, sample.labels));
            }
        }
        let mut last = self.layout.lock();
        let changed = (*last != layout).then(|| {
            let series = layout.iter().map(|(index, labels)| FeedSeries {
                family: u32::try_from(*index).unwrap_or(u32::MAX),
                labels: labels
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), v.clone()))
                    .collect(),
            });
            series.collect()
        });
        if changed.is_some() {
            *last = layout;
        }
        Some(FeedReading {
            values: values.into(),
            layout: changed,
        })
    }

    /// Stops calling the listener. Idempotent.
    #[napi]
    pub fn stop(&self) {
        if let Some(subscribers) = self.subscribers.upgrade() {
            subscribers.remove_refresh_listener(self.listener);
        }
    }
}

/// Calls `onRefreshed(seconds)` on the JavaScript thread after each refresh sent to the
/// authority (as it is counted in `spend_sentinel_refresh_duration_seconds`), until `stop()`.
#[napi(ts_args_type = "sentinel: Sentinel, onRefreshed: (seconds: number) => void")]
pub fn metrics_feed(
    sentinel: &Sentinel,
    on_refreshed: Function<f64, Unknown<'static>>,
) -> Result<MetricsFeed> {
    let (shared, fleet, subscribers) = sentinel.feed_parts();
    let listener = subscribers.add_refresh_listener(on_refreshed.create_ref()?);
    Ok(MetricsFeed {
        shared,
        fleet,
        subscribers: Arc::downgrade(subscribers),
        listener,
        layout: Mutex::new(Vec::new()),
    })
}
