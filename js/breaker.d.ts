/** Options of `new CircuitBreaker(options)`; all optional. 0 turns a rule off where noted. */
export interface CircuitBreakerOptions<F = never> {
  /** Names the breaker in errors, events and metrics: 1–128 of `[A-Za-z0-9_.:-]`. Default `"breaker"`. */
  name?: string;
  /** Consecutive failures that open the breaker; 0 turns this rule off. Default 5. */
  failureThreshold?: number;
  /** Failure rate (0..1) over `windowMs` that opens it; 0 turns this rule off. Default 0.5. */
  failureRateThreshold?: number;
  /** The rolling window of the rate rule, ms. Default 10000. */
  windowMs?: number;
  /** Calls the window must hold before the rate rule applies (0: from the first). Default 20. */
  minimumCalls?: number;
  /** First open period, ms. Default 5000. */
  openMs?: number;
  /** Cap of the open period, which doubles (with jitter) after each failed trial. Default max(60000, openMs). */
  maxOpenMs?: number;
  /** A half-open trial not settled within this counts as failed, ms. Default 10000. */
  trialTimeoutMs?: number;
  /** Bound on each call, ms; the call's `signal` is aborted and it counts as a failure. 0 (default): none. */
  timeoutMs?: number;
  /** `false` means the error does not count (neither failure nor success). Default: every error counts. */
  isFailure?: (error: unknown) => boolean;
  /** Calls allowed in flight at once; one more is refused at once with `BulkheadFullError`, never queued. 0 (default): no limit. */
  maxConcurrent?: number;
  /**
   * Answers instead of rejecting when the call is refused (`open`, `bulkhead`), times out
   * (`timeout`) or fails (`failure`, an error `isFailure` counts). What it returns is what
   * `fire()` resolves with; what it throws is what `fire()` rejects with. Not called for ignored
   * errors or caller aborts.
   */
  fallback?: (info: FallbackInfo) => F | PromiseLike<F>;
}

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
