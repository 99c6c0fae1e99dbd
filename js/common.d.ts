// Types shared by spend-sentinel/express and spend-sentinel/fastify. The option fields between
// `js-options` markers are generated from js/options-catalog.js: edit them there, then run
// `node scripts/gen-js-options.mjs`.
import type { Sentinel, ReadinessReason } from '../binding';
import type { Reservation } from './reservation';

/** Options of the three probe routes (`probes()` for Express, the Fastify plugin). */
export interface ProbeOptions {
  // js-options:begin probes
  /**
   * Readiness probe path (the readiness body, 200/503). A path starting with "/", without query,
   * fragment or spaces; not the path of another probe. Default: `/ready`.
   */
  readyPath?: string;
  /**
   * Liveness probe path. A path starting with "/", without query, fragment or spaces; not the path
   * of another probe. Default: `/live`.
   */
  livePath?: string;
  /**
   * Startup probe path (200 once the sentinel's first refresh has finished, any outcome). A path
   * starting with "/", without query, fragment or spaces; not the path of another probe. Default:
   * `/startup`.
   */
  startupPath?: string;
  /**
   * Reported by `/live`. A non-empty string. Default: `RELEASE_SHA` from the environment, else
   * `dev`.
   */
  release?: string;
  /**
   * `/live` answers 503 `wedged` when the event loop ran later than this. A finite number of
   * milliseconds ≥ 1. Default: 1000.
   */
  maxEventLoopDelayMs?: number;
  /**
   * The event-loop delay is the worst over the last complete interval of this length, the current
   * one, and the tick overdue right now, so a block stays visible for at least one whole interval.
   * A finite number of milliseconds ≥ 50. Default: 1000.
   */
  eventLoopSampleMs?: number;
  /**
   * `/live?deep=1` runs these and reports `"ok" | "timeout" | "error"` for each; a check fails when
   * it throws, rejects or resolves to `false`. Never changes the status code. An object of { name:
   * async () => {} } functions. Default: `{}`.
   */
  checks?: Record<string, () => unknown | Promise<unknown>>;
  /** Bound on each deep check. A finite number of milliseconds ≥ 1. Default: 500. */
  checkTimeoutMs?: number;
  // js-options:end probes
}

/** Options of the admission guard. */
export interface AdmissionOptions<Req, Res = unknown> {
  // js-options:begin admission
  /**
   * Units this request records: a function of the request, or a fixed number (asked of the sentinel
   * once, when the guard is made). With `settle`, the units reserved before the route runs (an
   * upper bound, or a first chunk the route extends). A function answering what `admit` refuses
   * (not a finite number ≥ 0), or `undefined` (say, an optional body field the client left out),
   * gets the client a 400 `InvalidUnitsBody`; one that throws goes to the framework's error handler
   * (500). A function (req) => units, or a number admit() accepts. Default: 1.
   */
  units?: ((req: Req) => number | undefined) | number;
  /**
   * Usage known only after the work: the guard reserves `units` before the route and, once the
   * response has finished or the connection closed, settles the reservation at what this returns
   * (the units actually used, `record`ed ones included), given the request and the response
   * (Fastify: the reply). The route reaches the reservation to `extend` it (Express:
   * `res.locals.spendReservation`; Fastify: `request.spendReservation`) or to settle it itself
   * (then this is not called). A `settle` that throws or returns anything but a finite number ≥ 0
   * settles at the recorded plus held units (nothing refunded) and is logged as an error (Fastify:
   * `request.log.error`; Express: `console.error`). A function (req, res) => the units actually
   * used. Default: none.
   */
  settle?: (req: Req, res: Res) => number;
  /**
   * `Retry-After` of a refusal. By default, with the default cadence (a refresh every 0.3–0.5 w), a
   * new refresh has landed by then, which is what ends a temporary refusal. A whole number of
   * seconds ≥ 1. Default: max(1, ⌈w / 2⌉).
   */
  retryAfterSeconds?: number;
  // js-options:end admission
}

/**
 * Body of a refused admission: status 503 (with `Retry-After`) and the reason `admit` was refused
 * for, or 413 `exceeds_node_budget` when the units are more than the whole (fixed) node budget,
 * which no retry can pass.
 */
export interface NotAdmittedBody {
  error: 'not_admitted';
  reason: ReadinessReason | 'exceeds_node_budget';
}

/** Body of the 400 for a request whose `units(req)` are not units (or `undefined`). */
export interface InvalidUnitsBody {
  error: 'invalid_units';
}

export interface GracefulShutdownOptions {
  // js-options:begin shutdown
  /**
   * Pause between `drain()` and closing the server, so that load balancers stop routing here. A
   * finite number of milliseconds ≥ 0. Default: 5000.
   */
  drainDelayMs?: number;
  /**
   * Longest wait for in-flight requests before their connections are cut. A finite number of
   * milliseconds ≥ 0. Default: 30000.
   */
  timeoutMs?: number;
  /**
   * Signals that start the shutdown; a second one exits at once (code 1). A non-empty array of
   * catchable signal names such as "SIGTERM". Default: `SIGTERM`, `SIGINT`.
   */
  signals?: NodeJS.Signals[];
  /** Exit the process when done: code 0, or 1 when a hook failed. A boolean. Default: `true`. */
  exit?: boolean;
  /**
   * Runs first, before `sentinel.drain()`; bounded by `hookTimeoutMs`. A function (may return a
   * promise). Default: none.
   */
  beforeShutdown?: () => unknown | Promise<unknown>;
  /**
   * Runs last, after the server and the sentinel are closed, before exit; bounded by
   * `hookTimeoutMs`. A function (may return a promise). Default: none.
   */
  onShutdown?: () => unknown | Promise<unknown>;
  /**
   * Bound on each hook; a hook that runs out is logged as failed (exit code 1). A finite number of
   * milliseconds ≥ 0. Default: 10000.
   */
  hookTimeoutMs?: number;
  /**
   * Where a failed hook is reported: `logger.error({ event, hook, err }, msg)`. An object with an
   * error(obj, msg) method (pino, console, …). Default: `console.error`.
   */
  logger?: { error(obj: object, msg: string): void };
  /**
   * SIGINT skips `drainDelayMs` (nothing routes to a developer's process). A boolean. Default:
   * `true` when `KUBERNETES_SERVICE_HOST` is unset, else `false`.
   */
  sigintSkipsDrainDelay?: boolean;
  // js-options:end shutdown
}

export interface ShutdownHandle {
  /** Runs the shutdown now (as the first signal would); resolves when it is done. */
  shutdown(): Promise<void>;
  /** Removes the signal handlers. */
  dispose(): void;
}

export type { Sentinel, Reservation };
