import type { Registry } from 'prom-client';
import type { Sentinel } from '../binding';

export interface CollectOptions {
  /**
   * Constant labels added to each of this sentinel's series (not to the process-wide
   * `spend_sentinel_breaker_*` families), so that several sentinels can share one registry:
   * `{ labels: { sentinel: 'billing' } }`. Every sentinel collected in one registry uses the same
   * label names with other values. Names of our own labels (`status`, `reason`, `le`, ...) are
   * refused.
   */
  labels?: Record<string, string>;
}

/**
 * Registers the sentinel's metric families (named CircuitBreakers included) in `registry`
 * (default: prom-client's global `register`). Collecting the same sentinel with the same labels
 * again is a no-op. Returns a function that removes this sentinel again (the families leave the
 * registry with the last sentinel collected there).
 */
export declare function collect(sentinel: Sentinel, registry?: Registry, options?: CollectOptions): () => void;
