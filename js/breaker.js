'use strict';
// CircuitBreaker: the JavaScript half. The state machine and its clock live in Rust
// (rules/breaker.rs, bindings/breaker.rs; with the `now` option, the clock reads what this file
// tells it before each operation); this file runs the call: timeout and AbortSignal
// (combined with the caller's), isFailure, the bulkhead, fallback, the errors, and state-change
// listeners. The plain call (no timeout, bulkhead, fallback or caller signal) keeps its own short
// path in fire(): one field test away from what it was.

const { BreakerCore, breakerProtocol } = require('./native');

// How acquire()/settle() encode tokens and outcomes: defined once, in bindings/breaker.rs.
const PROTOCOL = breakerProtocol();
const STATES = PROTOCOL.states;
const TOKEN_SCALE = PROTOCOL.tokenScale;
const STATE_MASK = PROTOCOL.stateMask;
const FLAG_TRANSITIONS = PROTOCOL.flagTransitions;
const OUTCOME_SCALE = PROTOCOL.outcomeScale;
const [SUCCESS, FAILURE, TIMEOUT, IGNORED] = ['success', 'failure', 'timeout', 'ignored'].map((name) => {
  const code = PROTOCOL.outcomes.indexOf(name);
  if (code < 0) throw new Error(`spend-sentinel: the native breaker has no outcome ${name}`);
  return code;
});

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
  reason: { value: 'open' },
});

/**
 * Thrown by `fire()` when `maxConcurrent` calls are already in flight: refused at once, never
 * queued. Cheap like `CircuitOpenError` (no stack).
 */
class BulkheadFullError extends Error {
  constructor(breaker, maxConcurrent) {
    super();
    return bulkheadError(breaker, maxConcurrent);
  }

  get message() {
    return `circuit "${this.breaker}": ${this.maxConcurrent} calls already in flight (maxConcurrent)`;
  }

  get stack() {
    return `${this.name}: ${this.message}`;
  }
}
Object.defineProperties(BulkheadFullError.prototype, {
  name: { value: 'BulkheadFullError' },
  code: { value: 'ERR_SPEND_SENTINEL_BULKHEAD_FULL' },
  reason: { value: 'bulkhead' },
});

function bulkheadError(breaker, maxConcurrent) {
  const error = Object.create(BulkheadFullError.prototype);
  error.breaker = breaker;
  error.maxConcurrent = maxConcurrent;
  return error;
}

/**
 * The call ran out of `timeoutMs`: the reason its `signal` was aborted with, and what `fire()`
 * rejects with (unless a `fallback` answers instead).
 */
class CircuitTimeoutError extends Error {
  constructor(breaker, timeoutMs) {
    super(`circuit "${breaker}": call timed out after ${timeoutMs} ms`);
    this.breaker = breaker;
    this.timeoutMs = timeoutMs;
  }
}
Object.defineProperties(CircuitTimeoutError.prototype, {
  name: { value: 'CircuitTimeoutError' },
  code: { value: 'ERR_SPEND_SENTINEL_TIMEOUT' },
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
  #fallback;
  #maxConcurrent;
  /** Anything beyond the plain call: timeout, bulkhead or fallback. */
  #full;
  #inFlight = 0;
  #bulkheadRejected = 0;
  #listeners = new Set();
  /** While closed: the token of the current generation (no need to ask); otherwise -1. */
  #closedToken = -1;
  /** Settles calls admitted with `#closedToken`, made once per generation, not per call. */
  #closedSettlers = null;

  constructor(options) {
    // Every option is read once: the core checks a copy of the options' own enumerable values
    // (the keys it reads) and the functions run are that copy's, so a getter cannot pass the
    // check with one value and run with another.
    const read = ownValues(options);
    this.#core = new BreakerCore(read); // validates every option, throws naming it
    if (read?.now !== undefined) this.#core = onClock(this.#core, read.now);
    this.#acquire = this.#core.acquire;
    this.#settleNative = this.#core.settle;
    this.#name = this.#core.name;
    this.#timeoutMs = this.#core.timeoutMs;
    this.#isFailure = read?.isFailure ?? null;
    this.#fallback = read?.fallback ?? null;
    this.#maxConcurrent = this.#core.maxConcurrent;
    this.#full = this.#timeoutMs > 0 || this.#maxConcurrent > 0 || this.#fallback !== null;
    this.#note(this.#core.token());
  }

  get name() {
    return this.#name;
  }

  /** `'closed' | 'open' | 'half_open'`, computed now. */
  get state() {
    return STATES[this.#note(this.#core.token()) & STATE_MASK];
  }

  /**
   * Counts since creation (or `reset()`), and the rolling window now. `successes`, `failures`
   * (timeouts excluded), `timeouts` and `rejected` are the metric's `result` values.
   */
  get stats() {
    const stats = this.#core.stats();
    stats.bulkheadRejected = this.#bulkheadRejected;
    stats.retryAfterMs ??= null;
    return stats;
  }

  /**
   * When the breaker half-opens by itself (epoch ms, comparable with `Date.now()`), or `null`
   * when it will not: closed, half-open, or opened by hand with `open()`.
   */
  get retryAt() {
    const ms = this.#core.halfOpenInMs();
    return ms < 0 ? null : Date.now() + ms;
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
    if (this.#full) return this.#fireFull(fn, args, null);
    let token = this.#closedToken;
    if (token < 0) {
      token = this.#acquire();
      if (token < 0) return Promise.reject(this.#refusal(token));
      this.#note(token);
    }
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

  /**
   * `fire(fn, ...args)` with `{ signal }`, the caller's: aborting it aborts the call's signal and
   * rejects at once with `signal.reason`. A call the caller aborted counts neither way (as
   * `ignored`: it says nothing about the dependency) and gets no fallback; one aborted before it
   * starts is not made at all.
   */
  fireWith(options, fn, ...args) {
    if (typeof fn !== 'function') {
      return Promise.reject(new TypeError(`circuit "${this.#name}": fireWith(options, fn): fn must be a function`));
    }
    const signal = options?.signal ?? null;
    if (signal !== null && !(signal instanceof AbortSignal)) {
      return Promise.reject(new TypeError(`circuit "${this.#name}": fireWith(options, fn): options.signal must be an AbortSignal`));
    }
    return this.#fireFull(fn, args, signal);
  }

  /** Every feature: caller signal, bulkhead, refusal, timeout, fallback. */
  async #fireFull(fn, args, callerSignal) {
    if (callerSignal?.aborted) throw callerSignal.reason;
    if (this.#maxConcurrent > 0 && this.#inFlight >= this.#maxConcurrent) {
      this.#bulkheadRejected += 1;
      return this.#fallBack('bulkhead', bulkheadError(this.#name, this.#maxConcurrent), args);
    }
    let token = this.#closedToken;
    if (token < 0) {
      token = this.#acquire();
      if (token < 0) return this.#fallBack('open', this.#refusal(token), args);
      this.#note(token);
    }
    this.#inFlight += 1;
    let outcome = FAILURE;
    let error;
    try {
      const result = await this.#callBounded(fn, args, callerSignal);
      outcome = SUCCESS;
      return result;
    } catch (err) {
      if (err instanceof CallTimeout) {
        outcome = TIMEOUT;
        error = err.error;
      } else if (err instanceof CallAborted) {
        outcome = IGNORED;
        throw err.reason;
      } else {
        outcome = this.#counts(err) ? FAILURE : IGNORED;
        if (outcome === IGNORED) throw err;
        error = err;
      }
    } finally {
      this.#inFlight -= 1;
      this.#settle(token, outcome);
    }
    return this.#fallBack(outcome === TIMEOUT ? 'timeout' : 'failure', error, args);
  }

  /** What `fallback` answers for this refusal or error; without a fallback, rejects with it. */
  #fallBack(reason, error, args) {
    if (this.#fallback === null) return Promise.reject(error);
    return this.#fallback({ reason, error, args });
  }

  #settlersFor(token) {
    return {
      success: () => this.#settle(token, SUCCESS),
      failure: (err) => this.#settle(token, this.#counts(err) ? FAILURE : IGNORED),
    };
  }

  #settle(token, outcome) {
    this.#note(this.#settleNative(token * OUTCOME_SCALE + outcome));
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
    const flags = code % TOKEN_SCALE;
    this.#note(flags);
    return refusalError(this.#name, (code - flags) / TOKEN_SCALE);
  }

  /**
   * Races `fn` against the timer and the caller's signal; the first of them decides. The outcome
   * is decided (and the race rejected) before the call's signal is aborted: an `fn` that rejects
   * inside its abort listener must not pass for an ordinary error, which `isFailure` might then
   * ignore.
   */
  async #callBounded(fn, args, callerSignal) {
    if (this.#timeoutMs === 0) {
      if (callerSignal === null) return fn(...args, UNBOUNDED_CALL);
      return this.#callWithCallerSignal(fn, args, callerSignal);
    }
    const controller = new AbortController();
    let decided = null;
    let rejectRace;
    const race = new Promise((_, reject) => {
      rejectRace = reject;
    });
    const decide = (verdict, reason) => {
      if (decided !== null) return;
      decided = verdict;
      rejectRace(verdict);
      controller.abort(reason);
    };
    let timer;
    if (this.#timeoutMs > 0) {
      timer = setTimeout(() => {
        const error = new CircuitTimeoutError(this.#name, this.#timeoutMs);
        decide(new CallTimeout(error), error);
      }, this.#timeoutMs);
    }
    const onAbort = () => decide(new CallAborted(callerSignal.reason), callerSignal.reason);
    callerSignal?.addEventListener('abort', onAbort);
    try {
      return await Promise.race([fn(...args, { signal: controller.signal }), race]);
    } catch (err) {
      throw decided ?? err;
    } finally {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Without a timeout the caller's signal is the call's signal: `fn` gets it as is (an
   * AbortController and its signal per call would cost µs).
   */
  async #callWithCallerSignal(fn, args, signal) {
    let rejectRace;
    const race = new Promise((_, reject) => {
      rejectRace = reject;
    });
    const onAbort = () => rejectRace(new CallAborted(signal.reason));
    signal.addEventListener('abort', onAbort);
    try {
      return await Promise.race([fn(...args, { signal }), race]);
    } catch (err) {
      throw signal.aborted ? new CallAborted(signal.reason) : err;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Takes in a token (or bare flags) the core answered: remembers the token while closed, and
   * reports the transitions it announces. Returns the flags.
   */
  #note(token) {
    const flags = token % TOKEN_SCALE;
    if ((flags & STATE_MASK) === 0) {
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

/** A plain object's own enumerable values, each read once; anything else as given (the core says why it is refused). */
function ownValues(options) {
  return options !== null && typeof options === 'object' && !Array.isArray(options) ? { ...options } : options;
}

/**
 * The core, telling it the time `now()` reads before each operation: with the `now` option the
 * breaker decides on the caller's clock (fake time in tests), not the system's. Only breakers
 * given `now` pay for the extra call.
 */
function onClock(core, now) {
  const told =
    (operation) =>
    (...args) => {
      core.tell(now());
      return operation.apply(core, args);
    };
  return {
    name: core.name,
    timeoutMs: core.timeoutMs,
    maxConcurrent: core.maxConcurrent,
    acquire: told(core.acquire),
    settle: told(core.settle),
    token: told(core.token),
    forceOpen: told(core.forceOpen),
    close: told(core.close),
    reset: told(core.reset),
    stats: told(core.stats),
    halfOpenInMs: told(core.halfOpenInMs),
    takeTransitions: () => core.takeTransitions(),
  };
}

/** Marks our own timeout apart from errors `fn` throws. */
class CallTimeout {
  constructor(error) {
    this.error = error;
  }
}

/** Marks the caller's abort apart from errors `fn` throws. */
class CallAborted {
  constructor(reason) {
    this.reason = reason;
  }
}

module.exports = { CircuitBreaker, CircuitOpenError, CircuitTimeoutError, BulkheadFullError };
