// Options whose code-only values (`logger`, `authority` and its `inspect`) are getters that count
// their reads and answer something else after the first. The config validates one read; a
// sentinel that read an option again would run with a value its validation never saw (a getter,
// a Proxy or a mutation in between). Used by config.spec.mjs (the constructor) and
// from-env.spec.mjs (`fromEnv`'s overrides).
import { deferred } from './wait.mjs';

/**
 * Installs the counting getters on `options` (its own `authority` object is replaced by one whose
 * `inspect` is a getter). The first read of `inspect` answers `invalid_credential`, later reads a
 * function answering `valid`; the first read of `logger` is the `validated` logger, later reads
 * another one. `firstLine` resolves with the first line either logger hears, as
 * `{ logger: 'validated' | 'later', said: outcome or reason }`.
 */
export function countingGetters(options) {
  const reads = { logger: 0, authority: 0, inspect: 0 };
  const heard = deferred();
  const loggerNamed = (name) => {
    const line = (obj) => heard.resolve({ logger: name, said: obj.outcome ?? obj.reason });
    return { info: line, warn: line, error: line };
  };
  const loggers = { validated: loggerNamed('validated'), later: loggerNamed('later') };
  const inspects = { validated: async () => 'invalid_credential', later: async () => 'valid' };
  const authority = {};
  Object.defineProperty(authority, 'inspect', {
    enumerable: true,
    get: () => (++reads.inspect === 1 ? inspects.validated : inspects.later),
  });
  Object.defineProperty(options, 'authority', {
    enumerable: true,
    get() {
      reads.authority += 1;
      return authority;
    },
  });
  Object.defineProperty(options, 'logger', {
    enumerable: true,
    get: () => (++reads.logger === 1 ? loggers.validated : loggers.later),
  });
  // A sentinel does not keep the process alive, and its lines come from its own thread: an
  // interval that never fires holds the event loop until one arrives (it bounds nothing).
  const keepAlive = setInterval(() => {}, 2 ** 30);
  const firstLine = heard.promise.finally(() => clearInterval(keepAlive));
  return { reads, firstLine };
}
