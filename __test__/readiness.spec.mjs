// `readiness()` is one native call answering a number, made into the object in JavaScript
// (js/readiness.js): the object must be the one the addon's rules give (the native `onTransition`
// event and `whenReady()` object of the same state), with the same keys in the same order, on every
// instance, with the strings of the addon's own lists.
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { once } from 'node:events';
import { fastOptions, held, recordTransitions, scriptedAuthority, sentinelPool, sequence } from './helpers/wait.mjs';

const require = createRequire(import.meta.url);
const { Sentinel, readinessVocabulary } = require('../js/native.js');
const { readinessDecoder } = require('../js/readiness.js');

const pool = sentinelPool(Sentinel);
afterEach(() => pool.closeAll());

/** A union type of binding.d.ts (generated from the Rust enums), in its order. */
function unionOf(name) {
  const typings = readFileSync(new URL('../binding.d.ts', import.meta.url), 'utf8');
  const line = typings.split('\n').find((l) => l.startsWith(`export type ${name} = `));
  return [...line.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]);
}

/** `sentinel.readiness()`, checked against the native event `event` of the same state. */
function assertBuiltLikeTheRules(sentinel, event, nativeKeys) {
  const r = sentinel.readiness();
  assert.deepEqual(Object.keys(r), nativeKeys, 'the native object\'s keys, in its order');
  assert.equal(r.status, event.to);
  assert.equal(r.reason, event.reason);
  assert.equal(r.httpStatus, r.status === 'not_ready' ? 503 : 200);
  assert.equal(sentinel.status(), r.status);
  assert.equal(sentinel.isServing(), r.httpStatus === 200);
  if (event.evidenceAgeSeconds === null) {
    assert.equal(r.evidenceAgeSeconds, null);
  } else {
    assert.ok(r.evidenceAgeSeconds >= event.evidenceAgeSeconds, `${r.evidenceAgeSeconds} read after ${event.evidenceAgeSeconds}`);
    assert.equal(Math.round(r.evidenceAgeSeconds * 1000) / 1000, r.evidenceAgeSeconds, 'whole milliseconds');
  }
  return r;
}

describe('readiness() built in JavaScript', () => {
  test('its strings and HTTP statuses are the addon\'s lists, in the typings\' order', () => {
    const { statuses, httpStatuses, reasons } = readinessVocabulary();
    assert.deepEqual(statuses, unionOf('ReadinessStatus'));
    assert.deepEqual(reasons, unionOf('ReadinessReason'));
    assert.deepEqual(httpStatuses, statuses.map((s) => (s === 'not_ready' ? 503 : 200)));
  });

  test('the cell\'s pair and age decode to the status, reason and age (the format of readiness_pair)', () => {
    const vocabulary = readinessVocabulary();
    const cell = new Float64Array(2);
    const readinessOf = readinessDecoder(vocabulary, cell);
    const { statuses, reasons } = vocabulary;
    const decoded = (reason, status, age) => {
      cell[0] = reasons.indexOf(reason) * statuses.length + statuses.indexOf(status);
      cell[1] = age;
      return readinessOf();
    };
    assert.deepEqual(decoded('no_evidence', 'not_ready', -1), { status: 'not_ready', evidenceAgeSeconds: null, reason: 'no_evidence', httpStatus: 503 });
    assert.deepEqual(decoded('verified', 'ready', 0), { status: 'ready', evidenceAgeSeconds: 0, reason: 'verified', httpStatus: 200 });
    assert.deepEqual(decoded('held', 'not_ready', 1.929), { status: 'not_ready', evidenceAgeSeconds: 1.929, reason: 'held', httpStatus: 503 });
    const years = 100 * 365 * 24 * 3600;
    assert.deepEqual(decoded('budget_exhausted', 'degraded', years), { status: 'degraded', evidenceAgeSeconds: years, reason: 'budget_exhausted', httpStatus: 200 });
    for (const reason of reasons) {
      for (const status of statuses) {
        assert.deepEqual(decoded(reason, status, 2.5), { status, evidenceAgeSeconds: 2.5, reason, httpStatus: status === 'not_ready' ? 503 : 200 }, `${reason} ${status}`);
      }
    }
  });

  test('the readiness cell is one array per thread, whatever asks for it', () => {
    const { readinessCell } = require('../js/native.js');
    assert.equal(readinessCell(), readinessCell(), 'the same array');
    assert.ok(readinessCell() instanceof Float64Array && readinessCell().length === 2);
  });

  test('in each status and reason a sentinel reaches, it is what the rules say', async () => {
    const auth = scriptedAuthority(sequence(['valid', 'indeterminate', 'invalid_credential'], held));
    const sentinel = pool.make(fastOptions(auth));
    const transitions = recordTransitions(sentinel);
    const first = sentinel.readiness();
    assert.deepEqual(first, { status: 'not_ready', evidenceAgeSeconds: null, reason: 'no_evidence', httpStatus: 503 });
    const nativeKeys = Object.keys(await sentinel.whenReady());
    assert.deepEqual(nativeKeys, Object.keys(first));
    for (const to of [{ reason: 'verified' }, { reason: 'refresh_indeterminate' }, { reason: 'invalid_credential' }]) {
      const event = await transitions.waitFor(to);
      if (sentinel.readiness().reason === to.reason) assertBuiltLikeTheRules(sentinel, event, nativeKeys);
    }
    const release = sentinel.hold('warming');
    const heldNow = assertBuiltLikeTheRules(sentinel, await transitions.waitFor({ reason: 'invalid_credential' }), nativeKeys);
    assert.equal(heldNow.reason, 'invalid_credential', 'a denial comes before a hold');
    release();
    sentinel.drain();
    const drained = sentinel.readiness();
    assert.equal(drained.reason, 'shutting_down');
    assert.equal(drained.httpStatus, 503);
  });

  test('a held sentinel, and one made by fromEnv, read the same way', async () => {
    const auth = scriptedAuthority(sequence(['valid'], held));
    const sentinel = pool.make(fastOptions(auth));
    const transitions = recordTransitions(sentinel);
    const nativeKeys = Object.keys(await sentinel.whenReady());
    assertBuiltLikeTheRules(sentinel, await transitions.waitFor({ reason: 'verified' }), nativeKeys);
    const release = sentinel.hold('warming');
    assertBuiltLikeTheRules(sentinel, await transitions.waitFor({ reason: 'held' }), nativeKeys);
    release();
    const fromEnv = Sentinel.fromEnv({ SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS: '100', SPEND_SENTINEL_BUDGET_MAX_UNITS_PER_SECOND: '10' }, {
      authority: { inspect: () => new Promise(() => {}) },
    });
    try {
      assert.deepEqual(fromEnv.readiness(), { status: 'not_ready', evidenceAgeSeconds: null, reason: 'no_evidence', httpStatus: 503 });
    } finally {
      await fromEnv.close();
    }
  });

  test('a worker thread reads its own sentinels through its own cell, and the main thread\'s keep reading right after it ends', async () => {
    const main = pool.make(fastOptions(scriptedAuthority(sequence(['valid'], held))));
    await main.whenReady();
    const body = `
      const { parentPort } = require('node:worker_threads');
      const { Sentinel } = require(${JSON.stringify(require.resolve('../js/main.js'))});
      const waiting = new Sentinel({ budget: { unverifiedUnits: 100, maxUnitsPerSecond: 100 }, authority: { inspect: () => new Promise(() => {}) } });
      const verified = new Sentinel({ budget: { unverifiedUnits: 100, maxUnitsPerSecond: 100 }, authority: { inspect: async () => 'valid' } });
      verified.whenReady({ timeoutMs: 60000 }).then(async () => {
        parentPort.postMessage([waiting.readiness(), verified.readiness(), waiting.readiness()]);
        await Promise.all([waiting.close(), verified.close()]);
      });`;
    const worker = new Worker(body, { eval: true });
    const [[message], exit] = [await once(worker, 'message'), once(worker, 'exit')];
    assert.equal(main.readiness().reason, 'verified', 'read on the main thread while the worker lives');
    const [waiting, verified, waitingAgain] = message;
    assert.deepEqual(waiting, { status: 'not_ready', evidenceAgeSeconds: null, reason: 'no_evidence', httpStatus: 503 });
    assert.equal(verified.reason, 'verified');
    assert.equal(typeof verified.evidenceAgeSeconds, 'number');
    assert.deepEqual(waitingAgain, waiting);
    assert.equal((await exit)[0], 0);
    const after = main.readiness();
    assert.equal(after.reason, 'verified', 'read on the main thread after the worker ended');
    assert.equal(typeof after.evidenceAgeSeconds, 'number');
  });

  test('called on anything but a Sentinel, it throws a TypeError', () => {
    for (const receiver of [{}, undefined, null, 5]) {
      assert.throws(() => Sentinel.prototype.readiness.call(receiver), { name: 'TypeError', message: /readiness: must be called on a Sentinel/ }, String(receiver));
    }
  });

  test('two sentinels read one after the other each show their own age (the shared cell is written on every call)', async () => {
    const verified = pool.make(fastOptions(scriptedAuthority(sequence(['valid'], held))));
    const waiting = pool.make(fastOptions(scriptedAuthority(held)));
    await verified.whenReady();
    for (let i = 0; i < 3; i++) {
      assert.equal(waiting.readiness().evidenceAgeSeconds, null);
      assert.notEqual(verified.readiness().evidenceAgeSeconds, null);
      assert.equal(waiting.readiness().evidenceAgeSeconds, null, 'not the age the other left');
    }
  });
});
