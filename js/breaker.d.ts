import type { CircuitBreakerOptions } from './option-types';

// Generated from the option schema (src/options/catalog.rs), with the other option interfaces.
export type { CircuitBreakerOptions };

export type FallbackReason = 'open' | 'bulkhead' | 'timeout' | 'failure';

export interface FallbackInfo {
  reason: FallbackReason;
  /** The `CircuitOpenError`, `BulkheadFullError`, `CircuitTimeoutError` or `fn`'s error. */
  error: unknown;
  /** The arguments given to `fire()` (without the `{ signal }`). */
  args: unknown[];
}

export interface FireOptions {
  /** The caller's signal: aborting it aborts the call's signal and rejects `fire` at once with its reason. */
  signal?: AbortSignal;
}

export type CircuitBreakerState = 'closed' | 'open' | 'half_open';

export interface CircuitBreakerStateChange {
  name: string;
  from: CircuitBreakerState;
  to: CircuitBreakerState;
}

/** `successes`, `failures`, `timeouts`, `rejected`: the `result` label of `spend_sentinel_breaker_calls_total`. */
export interface CircuitBreakerStats {
  successes: number;
  /** Failures, timeouts excluded (each timeout is in `timeouts`; both count for opening). */
  failures: number;
  timeouts: number;
  /** Errors `isFailure` said do not count, and calls the caller aborted. */
  ignored: number;
  /** Calls refused while open, or while the half-open trial was out. */
  rejected: number;
  /** Calls refused because `maxConcurrent` were in flight (not in the metric). */
  bulkheadRejected: number;
  /** Ms until the breaker half-opens by itself; `null` unless it is open with a timer. */
  retryAfterMs: number | null;
  /** Results of calls admitted before a state change, which changed nothing. */
  stale: number;
  /** Half-open trials that did not settle within `trialTimeoutMs`. */
  trialTimeouts: number;
  /** Times the breaker opened. */
  opened: number;
  consecutiveFailures: number;
  windowCalls: number;
  windowFailures: number;
}

/** Rejection of `fire()` while the breaker refuses calls. No stack trace (it is cheap). */
export declare class CircuitOpenError extends Error {
  readonly name: 'CircuitOpenError';
  readonly code: 'ERR_SPEND_SENTINEL_CIRCUIT_OPEN';
  readonly reason: 'open';
  /** The breaker's name. */
  readonly breaker: string;
  /** When asking again may be answered differently, ms. */
  readonly retryAfterMs: number;
}

/** Rejection of `fire()` when `maxConcurrent` calls are in flight. No stack trace. */
export declare class BulkheadFullError extends Error {
  readonly name: 'BulkheadFullError';
  readonly code: 'ERR_SPEND_SENTINEL_BULKHEAD_FULL';
  readonly reason: 'bulkhead';
  readonly breaker: string;
  readonly maxConcurrent: number;
}

/** The call ran out of `timeoutMs`: its signal's abort reason, and `fire()`'s rejection. */
export declare class CircuitTimeoutError extends Error {
  readonly name: 'CircuitTimeoutError';
  readonly code: 'ERR_SPEND_SENTINEL_TIMEOUT';
  readonly breaker: string;
  readonly timeoutMs: number;
}

export declare class CircuitBreaker<F = never> {
  constructor(options?: CircuitBreakerOptions<F>);
  readonly name: string;
  /** Computed when read; no timers. */
  readonly state: CircuitBreakerState;
  readonly stats: CircuitBreakerStats;
  /** When it half-opens by itself (epoch ms, as `Date.now()`); `null` unless open with a timer. */
  readonly retryAt: number | null;
  /** Calls `fn(...args, { signal })`, or rejects with `CircuitOpenError` / `BulkheadFullError` (or answers with `fallback`). */
  fire<A extends unknown[], R>(fn: (...args: [...A, { signal: AbortSignal }]) => R | PromiseLike<R>, ...args: A): Promise<Awaited<R> | F>;
  /** `fire` with the caller's `signal`, combined with the timeout's. */
  fireWith<A extends unknown[], R>(
    options: FireOptions,
    fn: (...args: [...A, { signal: AbortSignal }]) => R | PromiseLike<R>,
    ...args: A
  ): Promise<Awaited<R> | F>;
  /** `listener({ name, from, to })` after each committed change; returns a remover. */
  onStateChange(listener: (change: CircuitBreakerStateChange) => void): () => void;
  /** Refuses every call until `close()` or `reset()`. */
  open(): void;
  /** Closes, forgetting recent failures. */
  close(): void;
  /** Closes and zeroes the stats. */
  reset(): void;
}
