'use strict';
// CircuitBreaker: the JavaScript half. The state machine and its clock live in Rust
// (rules/breaker.rs, bindings/breaker.rs); this file runs the call: timeout and AbortSignal,
// isFailure, the refusal error, and state-change listeners.

const { BreakerCore } = require('./native');

const STATES = ['closed', 'open', 'half_open'];
const FLAG_TRANSITIONS = 4;
const SUCCESS = 0;
const FAILURE = 1;
const TIMEOUT = 2;
const IGNORED = 3;

/** The last argument of calls without `timeoutMs`: nothing aborts them, so one shared, frozen one. */
const UNBOUNDED_CALL = Object.freeze({ signal: new AbortController().signal });

/**
 * Thrown by `fire()` while the breaker refuses calls. Cheap on purpose: a refusal is an expected,
 * frequent answer, not a bug to trace, so `fire()` makes it without running the `Error`
 * constructor (no stack capture); `message` and `stack` are computed when read.
 */
class CircuitOpenError extends Error {
  constructor(breaker, retryAfterMs) {
    super();
    return refusalError(breaker, retryAfterMs);
  }

  get message() {
    return `circuit "${this.breaker}" is open; retry after ${this.retryAfterMs} ms`;
  }

  get stack() {
    return `${this.name}: ${this.message}`;
  }
}
Object.defineProperties(CircuitOpenError.prototype, {
  name: { value: 'CircuitOpenError' },
  code: { value: 'ERR_SPEND_SENTINEL_CIRCUIT_OPEN' },
});

function refusalError(breaker, retryAfterMs) {
  const error = Object.create(CircuitOpenError.prototype);
  error.breaker = breaker;
  error.retryAfterMs = retryAfterMs;
  return error;
}

class CircuitBreaker {
  #core;
  #acquire;
  #settleNative;
  #name;
  #timeoutMs;
  #isFailure;
  #listeners = new Set();
  /** While closed: the token of the current generation (no need to ask); otherwise -1. */
  #closedToken = -1;
  /** Settles calls admitted with `#closedToken`, made once per generation, not per call. */
  #closedSettlers = null;

  constructor(options) {
    this.#core = new BreakerCore(options); // validates every option, throws naming it
    this.#acquire = this.#core.acquire;
    this.#settleNative = this.#core.settle;
    this.#name = this.#core.name;
    this.#timeoutMs = this.#core.timeoutMs;
    this.#isFailure = options?.isFailure ?? null;
    this.#note(this.#core.token());
  }

  get name() {
    return this.#name;
  }

  /** `'closed' | 'open' | 'half_open'`, computed now. */
  get state() {
    return STATES[this.#note(this.#core.token()) & 3];
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
  fire(fn, ...args) {
    if (typeof fn !== 'function') {
      return Promise.reject(new TypeError(`circuit "${this.#name}": fire(fn): fn must be a function`));
    }
    let token = this.#closedToken;
    if (token < 0) {
      token = this.#acquire();
      if (token < 0) return Promise.reject(this.#refusal(token));
      this.#note(token);
    }
    if (this.#timeoutMs > 0) return this.#fireWithTimeout(token, fn, args);
    let result;
    try {
      result = fn(...args, UNBOUNDED_CALL);
    } catch (err) {
      this.#settle(token, this.#counts(err) ? FAILURE : IGNORED);
      return Promise.reject(err);
    }
    // The caller gets fn's own promise; the outcome is recorded by a reaction registered first,
    // so the state has changed before the caller's own code resumes.
    const promise = Promise.resolve(result);
    const settlers = token === this.#closedToken ? this.#closedSettlers : this.#settlersFor(token);
    promise.then(settlers.success, settlers.failure);
    return promise;
  }

  async #fireWithTimeout(token, fn, args) {
    let outcome = FAILURE;
    try {
      const result = await this.#callWithTimeout(fn, args);
      outcome = SUCCESS;
      return result;
    } catch (err) {
      outcome = err instanceof CallTimeout ? TIMEOUT : this.#counts(err) ? FAILURE : IGNORED;
      throw err instanceof CallTimeout ? err.error : err;
    } finally {
      this.#settle(token, outcome);
    }
  }

  #settlersFor(token) {
    return {
      success: () => this.#settle(token, SUCCESS),
      failure: (err) => this.#settle(token, this.#counts(err) ? FAILURE : IGNORED),
    };
  }

  #settle(token, outcome) {
    this.#note(this.#settleNative(token * 4 + outcome));
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
    this.#note(this.#core.forceOpen());
  }

  /** Closes, forgetting recent failures. */
  close() {
    this.#note(this.#core.close());
  }

  /** Closes and zeroes the stats. */
  reset() {
    this.#note(this.#core.reset());
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
    this.#note(flags);
    return refusalError(this.#name, (code - flags) / 8);
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

  /**
   * Takes in a token (or bare flags) the core answered: remembers the token while closed, and
   * reports the transitions it announces. Returns the flags.
   */
  #note(token) {
    const flags = token % 8;
    if ((flags & 3) === 0) {
      if (token - flags !== this.#closedToken) {
        this.#closedToken = token - flags;
        this.#closedSettlers = this.#settlersFor(this.#closedToken);
      }
    } else {
      this.#closedToken = -1;
      this.#closedSettlers = null;
    }
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
