/** Options of `new CircuitBreaker(options)`; all optional. 0 turns a rule off where noted. */
export interface CircuitBreakerOptions {
  /** Names the breaker in errors and events. Default `"breaker"`. */
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
}

export type CircuitBreakerState = 'closed' | 'open' | 'half_open';

export interface CircuitBreakerStateChange {
  name: string;
  from: CircuitBreakerState;
  to: CircuitBreakerState;
}

export interface CircuitBreakerStats {
  successes: number;
  /** Failures, timeouts included. */
  failures: number;
  timeouts: number;
  /** Errors `isFailure` said do not count. */
  ignored: number;
  /** Calls refused while open, or while the half-open trial was out. */
  refused: number;
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
  /** The breaker's name. */
  readonly breaker: string;
  /** When asking again may be answered differently, ms. */
  readonly retryAfterMs: number;
}

export declare class CircuitBreaker {
  constructor(options?: CircuitBreakerOptions);
  readonly name: string;
  /** Computed when read; no timers. */
  readonly state: CircuitBreakerState;
  readonly stats: CircuitBreakerStats;
  /** Calls `fn(...args, { signal })`, or rejects with `CircuitOpenError`. */
  fire<A extends unknown[], R>(fn: (...args: [...A, { signal: AbortSignal }]) => R | PromiseLike<R>, ...args: A): Promise<Awaited<R>>;
  /** `listener({ name, from, to })` after each committed change; returns a remover. */
  onStateChange(listener: (change: CircuitBreakerStateChange) => void): () => void;
  /** Refuses every call until `close()` or `reset()`. */
  open(): void;
  /** Closes, forgetting recent failures. */
  close(): void;
  /** Closes and zeroes the stats. */
  reset(): void;
}
