'use strict';
// What an option's value may be: each kind says its rule in words (the error message, the
// typings' doc comment and the docs' table all quote it) and reads a given value, returning the
// parsed one or calling `fail()` (the rule) or `fail(detail)` (a narrower complaint).
// options-catalog.js gives every option its kind; options.js's `readOptions` applies them.

const { constants } = require('node:os');

const UNCATCHABLE = new Set(['SIGKILL', 'SIGSTOP']);

const { isObject } = require('./options');

function milliseconds({ min = 0 } = {}) {
  return {
    rule: `a finite number of milliseconds ≥ ${min}`,
    read(value, fail) {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < min) fail();
      return value;
    },
  };
}

const wholeSeconds = {
  rule: 'a whole number of seconds ≥ 1',
  read(value, fail) {
    if (!Number.isInteger(value) || value < 1) fail();
    return value;
  },
};

const path = {
  rule: 'a path starting with "/", without query, fragment or spaces',
  read(value, fail) {
    if (typeof value !== 'string' || !value.startsWith('/') || /[?#\s]/.test(value)) fail();
    return value;
  },
};

const nonEmptyString = {
  rule: 'a non-empty string',
  read(value, fail) {
    if (typeof value !== 'string' || value === '') fail();
    return value;
  },
};

const boolean = {
  rule: 'a boolean',
  read(value, fail) {
    if (typeof value !== 'boolean') fail();
    return value;
  },
};

/** A function; `rule` says what it is called with and returns. */
function fn(rule) {
  return {
    rule,
    read(value, fail) {
      if (typeof value !== 'function') fail();
      return value;
    },
  };
}

/** `{ name: () => … }`, copied so that later changes by the caller do not reach us. */
const functionsByName = {
  rule: 'an object of { name: async () => {} } functions',
  read(value, fail) {
    if (!isObject(value)) fail();
    for (const [name, member] of Object.entries(value)) {
      if (typeof member !== 'function') fail(`member "${name}" must be a function`);
    }
    return { ...value };
  },
};

/** Each signal once, in the order given. */
const catchableSignals = {
  rule: 'a non-empty array of catchable signal names such as "SIGTERM"',
  read(value, fail) {
    if (!Array.isArray(value) || value.length === 0) fail('must be a non-empty array of signal names');
    for (const signal of value) {
      if (typeof signal !== 'string' || !Object.hasOwn(constants.signals, signal) || UNCATCHABLE.has(signal)) {
        fail(`must name catchable signals such as "SIGTERM" (bad entry: ${JSON.stringify(String(signal))})`);
      }
    }
    return [...new Set(value)];
  },
};

const errorLogger = {
  rule: 'an object with an error(obj, msg) method (pino, console, …)',
  read(value, fail) {
    if (!isObject(value) || typeof value.error !== 'function') fail();
    return value;
  },
};

/** Fastify's `prefix`, without its trailing slashes ('' is no prefix). */
const routePrefix = {
  rule: 'a path starting with "/", e.g. "/internal"',
  read(value, fail) {
    if (value === '') return '';
    if (typeof value !== 'string' || !value.startsWith('/')) fail();
    return value.replace(/\/+$/, '');
  },
};

const logLevel = {
  rule: 'a Fastify log level such as "warn"',
  read: nonEmptyString.read,
};

const serializers = {
  rule: 'an object of serializer functions',
  read(value, fail) {
    if (!isObject(value)) fail();
    return value;
  },
};

/**
 * The guard's `units`, read as a function of the request: given one, or a fixed number. The rule
 * for a number is the addon's: the sentinel is asked once, now, with the very value (reading
 * only), so a fixed number `admit` would refuse fails here, with `admit`'s own words.
 */
const unitsOrFunction = {
  rule: 'a function (req) => units, or a number admit() accepts',
  read(value, fail, { sentinel }) {
    if (typeof value === 'function') return value;
    try {
      sentinel.refusalReason(value);
    } catch (err) {
      if (err?.code !== 'ERR_SPEND_SENTINEL_UNITS') throw err;
      fail(`must be ${unitsOrFunction.rule} (${err.message})`, err);
    }
    return () => value;
  },
};

module.exports = {
  milliseconds,
  wholeSeconds,
  path,
  nonEmptyString,
  boolean,
  fn,
  functionsByName,
  catchableSignals,
  errorLogger,
  routePrefix,
  logLevel,
  serializers,
  unitsOrFunction,
};
