'use strict';
// CircuitBreaker: the JavaScript half. The state machine and its clock live in Rust
// (rules/breaker.rs, bindings/breaker.rs); this file runs the call: timeout and AbortSignal,
// isFailure, the refusal error, and state-change listeners.

const { BreakerCore } = require('../index.js');

const STATES = ['closed', 'open', 'half_open'];
const FLAG_TRANSITIONS = 4;
const SUCCESS = 0;
const FAILURE = 1;
const TIMEOUT = 2;
const IGNORED = 3;

/** A signal for calls without `timeoutMs`: nothing aborts them, so one shared signal will do. */
const NEVER_ABORTED = new AbortController().signal;

/**
 * Thrown by `fire()` while the breaker refuses calls. Cheap on purpose: no stack is captured
 * (a refusal is an expected, frequent answer, not a bug to trace).
 */
class CircuitOpenError extends Error {
  constructor(name, retryAfterMs) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(`circuit "${name}" is open; retry after ${retryAfterMs} ms`);
    Error.stackTraceLimit = limit;
    this.name = 'CircuitOpenError';
    this.code = 'ERR_SPEND_SENTINEL_CIRCUIT_OPEN';
    this.breaker = name;
    this.retryAfterMs = retryAfterMs;
  }
}

class CircuitBreaker {
  #core;
  #acquire;
  #settle;
  #name;
  #timeoutMs;
  #isFailure;
  #listeners = new Set();

  constructor(options) {
    this.#core = new BreakerCore(options); // validates every option, throws naming it
    this.#acquire = this.#core.acquire;
    this.#settle = this.#core.settle;
    this.#name = this.#core.name;
    this.#timeoutMs = this.#core.timeoutMs;
    this.#isFailure = options?.isFailure ?? null;
  }

  get name() {
    return this.#name;
  }

  /** `'closed' | 'open' | 'half_open'`, computed now. */
  get state() {
    return STATES[this.#flags(this.#core.flags()) & 3];
  }

  /** Counts since creation (or `reset()`), and the rolling window now. */
  get stats() {
    return this.#core.stats();
  }

  /**
   * Calls `fn(...args, { signal })` if the breaker allows it, and resolves or rejects as `fn`
   * does; rejects with `CircuitOpenError` when refused, and with an `ERR_SPEND_SENTINEL_TIMEOUT`
   * error (the signal aborted) when `timeoutMs` runs out first.
   */
  async fire(fn, ...args) {
    if (typeof fn !== 'function') throw new TypeError(`circuit "${this.#name}": fire(fn): fn must be a function`);
    const token = this.#acquire();
    if (token < 0) throw this.#refusal(token);
    this.#flags(token % 8);
    let outcome = FAILURE;
    try {
      const result = this.#timeoutMs > 0 ? await this.#callWithTimeout(fn, args) : await fn(...args, { signal: NEVER_ABORTED });
      outcome = SUCCESS;
      return result;
    } catch (err) {
      outcome = err instanceof CallTimeout ? TIMEOUT : this.#counts(err) ? FAILURE : IGNORED;
      throw err instanceof CallTimeout ? err.error : err;
    } finally {
      this.#flags(this.#settle(token, outcome));
    }
  }

  /** Registers `listener({ name, from, to })`, called after each committed change. Returns a remover. */
  onStateChange(listener) {
    if (typeof listener !== 'function') {
      throw Object.assign(new TypeError('onStateChange: listener: must be a function'), { code: 'ERR_SPEND_SENTINEL_CONFIG' });
    }
    const entry = { listener };
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  /** Refuses every call until `close()` or `reset()`. */
  open() {
    this.#flags(this.#core.forceOpen());
  }

  /** Closes, forgetting recent failures. */
  close() {
    this.#flags(this.#core.close());
  }

  /** Closes and zeroes the stats. */
  reset() {
    this.#flags(this.#core.reset());
  }

  #counts(err) {
    if (this.#isFailure === null) return true;
    try {
      return this.#isFailure(err) !== false;
    } catch {
      return true; // a broken predicate must not hide failures
    }
  }

  #refusal(token) {
    const code = -token - 1;
    const flags = code % 8;
    this.#flags(flags);
    return new CircuitOpenError(this.#name, (code - flags) / 8);
  }

  /**
   * Races `fn` against the timer. The timeout is decided (and its promise rejected) before the
   * signal is aborted: an `fn` that rejects inside its abort listener must not pass for an
   * ordinary error, which `isFailure` might then ignore.
   */
  async #callWithTimeout(fn, args) {
    const controller = new AbortController();
    let timedOut = null;
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => {
        timedOut = Object.assign(new Error(`circuit "${this.#name}": call timed out after ${this.#timeoutMs} ms`), {
          code: 'ERR_SPEND_SENTINEL_TIMEOUT',
        });
        reject(new CallTimeout(timedOut));
        controller.abort(timedOut);
      }, this.#timeoutMs);
    });
    try {
      return await Promise.race([fn(...args, { signal: controller.signal }), timeout]);
    } catch (err) {
      throw timedOut ? new CallTimeout(timedOut) : err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Reports the transitions the flags announce, then passes the flags on. */
  #flags(flags) {
    if (flags & FLAG_TRANSITIONS) this.#emit(this.#core.takeTransitions());
    return flags;
  }

  #emit(pairs) {
    for (let i = 0; i < pairs.length; i += 2) {
      const event = { name: this.#name, from: STATES[pairs[i]], to: STATES[pairs[i + 1]] };
      for (const { listener } of this.#listeners) {
        try {
          listener(event);
        } catch {
          // a listener's bug must not break the caller's request
        }
      }
    }
  }
}

/** Marks our own timeout apart from errors `fn` throws. */
class CallTimeout {
  constructor(error) {
    this.error = error;
  }
}

module.exports = { CircuitBreaker, CircuitOpenError };
