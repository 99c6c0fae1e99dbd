// Generated from the option schema (src/options/catalog.rs): edit it there, then run
// `SPEND_SENTINEL_BLESS=1 cargo test --lib options::docs` to rewrite this file and the option
// tables of docs/.
import type { RefreshOutcome } from '../binding';
import type { FallbackInfo } from './breaker';

/**
 * Options of `new Sentinel(options)`; every one is validated at construction, and unknown keys are
 * refused.
 */
export interface SentinelOptions {
  /** The money that sets the stale window. */
  budget: BudgetOptions;
  /** The cadence of the background refresh. Default: defaults that scale with the window. */
  refresh?: RefreshOptions;
  /** Who says whether the credential is valid: the HTTP adapter or your own `inspect`. */
  authority: HttpAuthorityOptions | InspectAuthorityOptions;
  /**
   * Receives one line per status change and per refresh that was not `valid` (codes only). An
   * object with `info`, `warn`, `error` methods (pino-style); see Metrics and logs
   * (docs/metrics.md). Default: none.
   */
  logger?: SentinelLogger;
}

/** `budget`: the money that sets the stale window (README, The budget math). */
export interface BudgetOptions {
  /** b: the fleet-wide ceiling of units that may be admitted on unverified evidence. Finite > 0. */
  unverifiedUnits: number;
  /** r: this node's maximum admission rate, units per second. Finite > 0. */
  maxUnitsPerSecond: number;
  /**
   * Fleet size; each node's share of b is 1 / nodes. A whole number ≥ 1; not with `share` or
   * `fleet`. Default: 1.
   */
  nodes?: number;
  /** This node's fraction of b. 0 < share ≤ 1; not with `nodes` or `fleet`. Default: 1 / nodes. */
  share?: number;
  /**
   * Caps the stale window w, seconds: w = min(node budget / r, maxStaleSeconds). > 0, ≤ node budget
   * / r (a fleet: ≤ (floor + pool) / r), and ≤ 604800 (7 days). Default: node budget / r.
   */
  maxStaleSeconds?: number;
  /**
   * Shares b among the nodes alive now, through leases in Redis (see A fleet that scales
   * (docs/fleet.md)). Not with `nodes` or `share`. Default: none.
   */
  fleet?: FleetOptions;
}

/** `budget.fleet`: a fleet-wide budget leased from Redis (docs/fleet.md). */
export interface FleetOptions {
  /**
   * The Redis URL (user, password and db allowed); never printed. `redis://` or `rediss://` with a
   * host; give this or `redisEnv`; at most 2048 bytes.
   */
  redis?: string;
  /**
   * The *name* of an environment variable holding the Redis URL (read once, at construction; one
   * trailing newline is dropped). `[A-Za-z_][A-Za-z0-9_]*`, set and not empty; give this or
   * `redis`; at most 256 bytes.
   */
  redisEnv?: string;
  /**
   * The fleet's identity, the same on every node that shares b; every key lives under the hash tag
   * `{spend-sentinel:<name>}`. 1 or more of `A-Z a-z 0-9 _ . : -`; at most 100 bytes.
   */
  name: string;
  /**
   * The most nodes alive at once, surge and terminating pods included. A whole number from 1 to
   * 10000.
   */
  maxNodes: number;
  /**
   * The part of b kept as static floors (b × reserve / maxNodes each). At least 0 and less than 1.
   * Default: 0.25.
   */
  reserve?: number;
  /** How long a grant lives in Redis without renewal. From 5 to 600 seconds. Default: 30. */
  leaseSeconds?: number;
  /**
   * The longest split brain the fleet rides out (two Redis primaries taking writes after a failover
   * that did not fence the old one): keep Redis's `min-replicas-max-lag` at most this less 2 s, or
   * use 0 with a fencing failover. Leases end and holds last this much longer. From 0 to 120
   * seconds. Default: 12.
   */
  maxSplitSeconds?: number;
  /**
   * TLS settings for a `rediss://` URL: a private CA, a client certificate. Only with `rediss://`.
   * Default: the system's roots, no client certificate.
   */
  tls?: FleetTlsOptions;
}

/**
 * `budget.fleet.tls`: PEM strings for a `rediss://` Redis behind a private CA, or one that asks
 * clients for a certificate (`tls-auth-clients yes`).
 */
export interface FleetTlsOptions {
  /**
   * The CA certificates that sign the Redis server's certificate (they replace the system's roots).
   * PEM with at least one certificate; at most 1048576 bytes. Default: the system's roots.
   */
  ca?: string;
  /**
   * The client certificate (chain) this node presents. PEM; give `cert` and `key` together; at most
   * 1048576 bytes.
   */
  cert?: string;
  /**
   * The client certificate's private key; a secret, never printed. PEM (PKCS #8, PKCS #1 or SEC1);
   * give `cert` and `key` together; at most 65536 bytes.
   */
  key?: string;
}

/**
 * `refresh`: cadence of the background refresh (docs/api.md, Options). Defaults scale with the
 * window w (seconds): 300·w, 500·w and min(2000, 400·w) ms.
 */
export interface RefreshOptions {
  /** The shortest pause between two refreshes, ms. ≥ 20 and ≤ `maxIntervalMs`. Default: 300 · w. */
  minIntervalMs?: number;
  /**
   * The longest pause between two refreshes, ms. ≥ 0; `maxIntervalMs + timeoutMs` < w × 1000.
   * Default: 500 · w.
   */
  maxIntervalMs?: number;
  /** Bounds one whole refresh (connect, headers, body), ms. > 0. Default: min(2000, 400 · w). */
  timeoutMs?: number;
  /**
   * Puts the refreshes behind a circuit breaker of their own (see The refresh loop behind a breaker
   * (docs/circuit-breaker.md)). `true` (every default) or breaker options. Default: none.
   */
  breaker?: boolean | RefreshBreakerOptions;
}

/**
 * `refresh.breaker`: the `CircuitBreaker` options that apply to refreshes. An inconclusive refresh
 * is a failure; any definitive answer, a denial included, is a success.
 */
export interface RefreshBreakerOptions {
  /**
   * Consecutive failures that open the breaker; 0 turns this rule off. A whole number ≥ 0. Default:
   * 5.
   */
  failureThreshold?: number;
  /**
   * The failure rate over `windowMs` that opens it; 0 turns this rule off. Between 0 and 1.
   * Default: 0.5.
   */
  failureRateThreshold?: number;
  /**
   * The rolling window of the rate rule (10 buckets: samples leave within a tenth of it). A number
   * of milliseconds greater than 0 and at most one year. Default: 10000.
   */
  windowMs?: number;
  /**
   * Calls the window must hold before the rate rule applies; 0: from the first call. A whole number
   * ≥ 0. Default: 20.
   */
  minimumCalls?: number;
  /**
   * The first open period. A number of milliseconds greater than 0 and at most one year. Default:
   * 5000.
   */
  openMs?: number;
  /**
   * Cap of the open period, which doubles after each failed trial, shortened at random by up to 20%
   * (so a fleet does not retry in step); back to `openMs` once closed. A number of milliseconds ≥ 0
   * and at most one year; at least `openMs`. Default: max(60000, `openMs`).
   */
  maxOpenMs?: number;
  /**
   * A half-open trial not settled by then counts as failed. A number of milliseconds greater than 0
   * and at most one year. Default: 10000.
   */
  trialTimeoutMs?: number;
}

/** The built-in HTTP authority adapter (docs/http-adapter.md). */
export interface HttpAuthorityOptions {
  /**
   * The account endpoint the adapter asks. An absolute https URL without `user:password@`; http
   * only with `allowInsecureHttp: true`; at most 2048 bytes.
   */
  url: string;
  /** Allows a plain http URL (tests, sidecars on localhost). Default: `false`. */
  allowInsecureHttp?: boolean;
  /**
   * The API credential; never printed. Visible ASCII characters (`!` to `~`), not empty; give this
   * or `credentialEnv`; at most 4096 bytes.
   */
  credential?: string;
  /**
   * The *name* of an environment variable holding the credential (read once, at construction; one
   * trailing newline is dropped). `[A-Za-z_][A-Za-z0-9_]*`, set and not empty, holding a valid
   * credential; give this or `credential`; at most 256 bytes.
   */
  credentialEnv?: string;
  /**
   * The capability (meter) the account's tier must include. Not empty; give this or
   * `requiredCapabilities`; at most 256 bytes.
   */
  requiredCapability?: string;
  /**
   * Several capabilities, all required. At least one, none empty; give this or
   * `requiredCapability`; at most 64 strings of at most 256 bytes each.
   */
  requiredCapabilities?: Array<string>;
  /**
   * Where the capability list or map is in the answer. A JSON Pointer (RFC 6901); at most 1024
   * bytes. Default: `/capabilities`.
   */
  capabilitiesPointer?: string;
  /**
   * The header that carries the credential. A valid HTTP header name; not `host`, `content-length`,
   * `transfer-encoding`, `connection`, `keep-alive`, `proxy-connection`, `te`, `trailer`,
   * `upgrade`, `expect`, `accept`, `accept-encoding`, `user-agent`; at most 64 bytes. Default:
   * `authorization`.
   */
  header?: string;
  /**
   * The scheme before the credential; `''` sends the bare credential. Visible ASCII characters; at
   * most 64 bytes. Default: `Bearer`.
   */
  scheme?: string;
  /**
   * Extra trusted root certificates for an authority behind a private CA; added to the public
   * roots. PEM with at least one certificate; at most 1048576 bytes.
   */
  caPem?: string;
}

/**
 * An authority you implement: resolve to one of the four outcomes. A throw, a rejection, any other
 * value, or no answer within `refresh.timeoutMs` counts as `indeterminate`.
 */
export interface InspectAuthorityOptions {
  /**
   * Instead of the HTTP options: your own check of the credential. `async () => 'valid' |
   * 'invalid_credential' | 'capability_missing' | 'indeterminate'`, alone in `authority`.
   */
  inspect: () => Promise<RefreshOutcome>;
}

/** `logger`: pino-compatible; gets one line per transition and per refresh that was not `valid`. */
export interface SentinelLogger {
  /** Status changes to `ready`. */
  info: (obj: object, msg: string) => void;
  /** Other status changes, and `indeterminate` refreshes. */
  warn: (obj: object, msg: string) => void;
  /**
   * Changes to `invalid_credential` or `capability_missing`, refreshes that said so, and a task
   * stopped on an internal error.
   */
  error: (obj: object, msg: string) => void;
}

/** Options of `whenReady(options)`. */
export interface WhenReadyOptions {
  /**
   * Reject with `ERR_SPEND_SENTINEL_TIMEOUT` after this many milliseconds. A number of milliseconds
   * from 0 to 2147483647. Default: none: wait until ready or closed.
   */
  timeoutMs?: number;
}

/** Options of `metrics(options)`. */
export interface MetricsOptions {
  /**
   * `'text'`: Prometheus text format 0.0.4, served as `text/plain; version=0.0.4; charset=utf-8`.
   * `'openmetrics'`: OpenMetrics 1.0, served as `application/openmetrics-text; version=1.0.0;
   * charset=utf-8`. One of `'text'`, `'openmetrics'`. Default: `text`.
   */
  format?: 'text' | 'openmetrics';
}

/** Options of `new CircuitBreaker(options)`; all optional. 0 turns a rule off where noted. */
export interface CircuitBreakerOptions<F = never> {
  /**
   * Consecutive failures that open the breaker; 0 turns this rule off. A whole number ≥ 0. Default:
   * 5.
   */
  failureThreshold?: number;
  /**
   * The failure rate over `windowMs` that opens it; 0 turns this rule off. Between 0 and 1.
   * Default: 0.5.
   */
  failureRateThreshold?: number;
  /**
   * The rolling window of the rate rule (10 buckets: samples leave within a tenth of it). A number
   * of milliseconds greater than 0 and at most one year. Default: 10000.
   */
  windowMs?: number;
  /**
   * Calls the window must hold before the rate rule applies; 0: from the first call. A whole number
   * ≥ 0. Default: 20.
   */
  minimumCalls?: number;
  /**
   * The first open period. A number of milliseconds greater than 0 and at most one year. Default:
   * 5000.
   */
  openMs?: number;
  /**
   * Cap of the open period, which doubles after each failed trial, shortened at random by up to 20%
   * (so a fleet does not retry in step); back to `openMs` once closed. A number of milliseconds ≥ 0
   * and at most one year; at least `openMs`. Default: max(60000, `openMs`).
   */
  maxOpenMs?: number;
  /**
   * A half-open trial not settled by then counts as failed. A number of milliseconds greater than 0
   * and at most one year. Default: 10000.
   */
  trialTimeoutMs?: number;
  /**
   * Names the breaker in errors, events and (named breakers only) metrics, where it is a label. Not
   * empty, only `[A-Za-z0-9_.:-]`, so a route or a tenant cannot slip in and multiply the series;
   * at most 128 bytes. Default: `"breaker"`.
   */
  name?: string;
  /**
   * Bound on each call, 0: none. The `signal` passed to `fn` is aborted with an
   * `ERR_SPEND_SENTINEL_TIMEOUT` error, `fire` rejects with it, and it counts as a failure. A
   * number of milliseconds ≥ 0; at most 2147483647 (a Node.js timer fires after 1 ms for anything
   * longer). Default: 0.
   */
  timeoutMs?: number;
  /**
   * `false`: the error counts neither way (and frees a half-open trial's permit); a predicate that
   * throws counts as a failure. Default: every error counts.
   */
  isFailure?: (error: unknown) => boolean;
  /**
   * The bulkhead: calls in flight at once, 0: no limit. One more is refused at once with
   * `BulkheadFullError` (`code` `ERR_SPEND_SENTINEL_BULKHEAD_FULL`, `reason` `'bulkhead'`, no
   * stack), never queued; it is not a breaker refusal (`stats.bulkheadRejected`, not `rejected`)
   * and takes no half-open trial. A whole number ≥ 0 (0: no limit). Default: 0.
   */
  maxConcurrent?: number;
  /**
   * Answers instead of rejecting when the call is refused (`reason` `'open'` or `'bulkhead'`),
   * times out (`'timeout'`) or fails (`'failure'`); `fire` resolves with what it returns (rejects
   * with what it throws). Not called for errors `isFailure` ignores, nor for a caller's abort.
   * Default: none.
   */
  fallback?: (info: FallbackInfo) => F | PromiseLike<F>;
  /**
   * The clock the breaker reads, milliseconds from any fixed origin (it must never go back; a
   * reading lower than the last one counts as time standing still): every decision (open periods,
   * the rolling window, trial timeouts) and the breaker's metrics are at the time it last read.
   * Tests pass fake time; `retryAt` stays epoch milliseconds. Default: the process's monotonic
   * clock.
   */
  now?: () => number;
}

/**
 * The overrides of `Sentinel.fromEnv(env, overrides)`: any part of the options, merged over the
 * environment's key by key (objects merge; any other value replaces the environment's, and
 * `undefined` changes nothing). Code-only options (`logger`, `authority.inspect`) are given here.
 */
export type SentinelOverrides = Overrides<SentinelOptions>;

/** Every member optional, down to the options; functions and lists stay whole. */
type Overrides<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends readonly unknown[]
    ? T
    : T extends object
      ? { [K in keyof T]?: Overrides<T[K]> }
      : T;
