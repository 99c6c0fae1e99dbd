import type { Meter } from '@opentelemetry/api';
import type { Sentinel } from '../binding';

export interface ObserveOptions {
  /** The Meter the instruments are made on (`metrics.getMeter('my-service')` of `@opentelemetry/api` ≥ 1.9). */
  meter: Meter;
  /**
   * Constant attributes added to each of this sentinel's series (not to the process-wide
   * `spend_sentinel.breaker.*` instruments), so that several sentinels can share one meter:
   * `{ attributes: { sentinel: 'billing' } }`. Every sentinel observed on one meter uses the same
   * attribute names with other values. Names of our own attributes (`status`, `reason`, ...) are
   * refused.
   */
  attributes?: Record<string, string>;
}

/**
 * Reports the sentinel's metric families (named CircuitBreakers included) as OpenTelemetry
 * instruments on `options.meter`: counters and gauges observed at collection time, the refresh
 * duration as a Histogram recorded once per refresh. Observing the same sentinel with the same
 * attributes again is a no-op. Returns a function that stops observing it.
 */
export declare function observe(sentinel: Sentinel, options: ObserveOptions): () => void;
