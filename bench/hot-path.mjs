// Hot-path benchmark: ns per call of admit(1), status() and readiness(), and of a refusal as the
// admission guard (js/admission.js) answers it, before (admit, then refusalReason and the window
// getter: three crossings) and after (one call of its admission function, decoded), against
//  (a) nativeNoop(): a zero-argument napi function that does nothing (the floor of any native call);
//  (b) a plain-JS object doing the same arithmetic (what the call would cost without crossing into Rust).
// Then reservations (reserve, settle, extend, record) against admit(1) in the same run, and the
// OpenTelemetry bridge: admit(1) and status() of a sentinel without it and of one observed on an
// SDK meter (@opentelemetry/sdk-metrics), and one collection of that meter (2 named breakers).
// First, the RSS and OS threads the first running sentinel adds to the process.
// Run: npm run bench   (after npm run build). Prints medians of several runs; asserts nothing.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { measure, measureAsync, printRatios } from './measure.mjs';

const require = createRequire(import.meta.url);
// js/native.js: the binding, with `reserve` added to its Sentinel class (js/reservation.js).
const { Sentinel, nativeNoop, admissionCodeFunction, readinessVocabulary } = require('../js/native.js');

const CALLS = 2_000_000;
const RUNS = 7;

/** The same decision in plain JavaScript: status from evidence age, then the ledger check. */
class PlainGuard {
  constructor(nodeBudget, windowMs) {
    this.nodeBudget = nodeBudget;
    this.windowMs = windowMs;
    this.verifiedAt = performance.now();
    this.ledger = 0;
    this.indeterminate = 0;
  }
  status() {
    const age = performance.now() - this.verifiedAt;
    if (age >= this.windowMs || this.ledger >= this.nodeBudget) return 'not_ready';
    return this.indeterminate > 0 ? 'degraded' : 'ready';
  }
  admit(units = 1) {
    if (typeof units !== 'number' || !(units >= 0) || units === Infinity) throw new TypeError('units');
    if (this.status() === 'not_ready' || this.ledger + units > this.nodeBudget) return false;
    this.ledger += units;
    return true;
  }
}

function procStatus(field) {
  const line = readFileSync('/proc/self/status', 'utf8').split('\n').find((l) => l.startsWith(field));
  return Number(line.split(/\s+/)[1]);
}

async function main() {
  // First, while no sentinel (and so no runtime thread) exists in this process yet.
  await footprint();
  console.log('');
  // A budget no benchmark run can spend: b = 1e15 units at r = 1e12/s → a 1000 s window.
  const budget = { unverifiedUnits: 1e15, maxUnitsPerSecond: 1e12 };
  const sentinel = new Sentinel({ budget, authority: { inspect: async () => 'valid' } });
  await sentinel.whenReady({ timeoutMs: 10_000 });
  const plain = new PlainGuard(1e15, 1e6);
  let sink = 0;
  // More units than the node budget: refused (budget_exhausted) after the whole decision, and
  // the ledger stays as it is, so every run measures the same refusal.
  const tooMany = 2e15;
  const { reasons } = readinessVocabulary();
  const slots = reasons.length + 1;
  const admitCode = admissionCodeFunction(sentinel);
  // What js/admission.js did with a refusal until the guard made one call per request.
  const refusedBefore = () => {
    if (sentinel.admit(tooMany)) return 0;
    const reason = sentinel.refusalReason(tooMany);
    return reason.length + Math.max(1, Math.ceil(sentinel.staleWindowSeconds / 2));
  };
  // What it does now.
  const refusedAfter = () => {
    const code = admitCode(tooMany);
    if (code === 0) return 0;
    return reasons[(code % slots) - 1].length + Math.max(1, Math.ceil(Math.floor(code / slots) / 2));
  };

  const rows = [
    ['nativeNoop()  (baseline a)', () => nativeNoop()],
    ['plain JS admit(1)  (baseline b)', () => { sink += plain.admit(1) ? 1 : 0; }],
    ['plain JS status()  (baseline b)', () => { sink += plain.status().length; }],
    ['sentinel.admit(1)', () => { sink += sentinel.admit(1) ? 1 : 0; }],
    ['sentinel.status()', () => { sink += sentinel.status().length; }],
    ['sentinel.isServing()', () => { sink += sentinel.isServing() ? 1 : 0; }],
    ['sentinel.readiness()', () => { sink += sentinel.readiness().httpStatus; }],
    ['refused, reason + window: admit, refusalReason, staleWindowSeconds (before)', () => { sink += refusedBefore(); }],
    ['refused, reason + window: one admission-code call (after)', () => { sink += refusedAfter(); }],
    ['admitted: admission-code call (the guard\'s admit)', () => { sink += admitCode(1); }],
  ];
  const results = rows.map(([name, fn]) => [name, measure(fn, { calls: CALLS, runs: RUNS })]);
  printRatios(`hot path, median of ${RUNS} runs × ${CALLS.toLocaleString()} calls (node ${process.version})`, 'ns/call', results);
  console.log('');
  printRatios(
    `reservations, interleaved batches of ${RESERVATION_BATCH}, median of ${RUNS} runs × ${CALLS.toLocaleString()} calls each`,
    'ns/call',
    reservationRows(sentinel),
  );
  console.log('');
  await openTelemetryRows(budget);
  sentinel.close();
  if (sink === 42) console.log('');
}

const RESERVATION_BATCH = 1000;

/**
 * [name, median ns per call] of admit(1), reserve(1), settle(1), extend(1) and record(1). Each
 * round runs a batch of each in turn, so the machine's load hits all alike; `reserve` fills a
 * batch of reservations that `settle` then empties (a server holds a few at a time, not millions
 * alive). `record(1)` reports a unit of one reservation that holds, from the start, every unit the
 * runs will record: each call moves a held unit to the recorded ones, never past the hold (no
 * overage), and the ledger it leaves is far below the node budget.
 */
function reservationRows(sentinel) {
  const batch = new Array(RESERVATION_BATCH);
  const stream = sentinel.reserve(0);
  const recording = sentinel.reserve((RUNS + 1) * CALLS);
  let sink = 0;
  const ops = [
    ['sentinel.admit(1)', () => { for (let j = 0; j < RESERVATION_BATCH; j++) sink += sentinel.admit(1) ? 1 : 0; }],
    ['sentinel.reserve(1)', () => { for (let j = 0; j < RESERVATION_BATCH; j++) batch[j] = sentinel.reserve(1); }],
    ['reservation.settle(1)', () => { for (let j = 0; j < RESERVATION_BATCH; j++) batch[j].settle(1); }],
    ['reservation.extend(1)', () => { for (let j = 0; j < RESERVATION_BATCH; j++) sink += stream.extend(1) ? 1 : 0; }],
    ['reservation.record(1)', () => { for (let j = 0; j < RESERVATION_BATCH; j++) recording.record(1); }],
  ];
  const samples = ops.map(() => []);
  for (let run = -1; run < RUNS; run++) {
    const ns = ops.map(() => 0n);
    for (let round = 0; round < CALLS / RESERVATION_BATCH; round++) {
      for (let k = 0; k < ops.length; k++) {
        const start = process.hrtime.bigint();
        ops[k][1]();
        ns[k] += process.hrtime.bigint() - start;
      }
    }
    if (run >= 0) ns.forEach((total, k) => samples[k].push(Number(total) / CALLS));
  }
  stream.release();
  if (recording.heldUnits !== 0) throw new Error(`record(1): ${recording.heldUnits} units left held (the hold was sized wrong)`);
  recording.settle(recording.recordedUnits);
  if (sink === 42) console.log('');
  const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return ops.map(([name], k) => [name, median(samples[k])]);
}

/**
 * admit(1) and status() of a sentinel without the OpenTelemetry bridge and of one with it, in the
 * same run, then one collection (`reader.collect()`: our batch callback and the SDK's own work)
 * of a meter where one sentinel and 2 named breakers are observed.
 */
async function openTelemetryRows(budget) {
  const { CircuitBreaker } = require('../js/main.js');
  const { observe } = require('../js/opentelemetry.js');
  const { MeterProvider, MetricReader } = require('@opentelemetry/sdk-metrics');
  class PullReader extends MetricReader {
    async onForceFlush() {}
    async onShutdown() {}
  }
  const reader = new PullReader();
  const provider = new MeterProvider({ readers: [reader] });
  const inspect = async () => 'valid';
  const without = new Sentinel({ budget, authority: { inspect } });
  const observed = new Sentinel({ budget, authority: { inspect } });
  await Promise.all([without.whenReady({ timeoutMs: 10_000 }), observed.whenReady({ timeoutMs: 10_000 })]);
  // The meter, with the batch callback the bridge registers kept aside to time it alone.
  const meter = provider.getMeter('bench');
  let callback;
  const spy = Object.create(meter);
  spy.addBatchObservableCallback = (cb, observables) => {
    callback = cb;
    return meter.addBatchObservableCallback(cb, observables);
  };
  const stop = observe(observed, { meter: spy });
  const breakers = ['bench-a', 'bench-b'].map((name) => new CircuitBreaker({ name }));
  for (const breaker of breakers) await breaker.fire(async () => 'ok');
  let sink = 0;
  const rows = [
    ['sentinel.admit(1), no bridge', () => { sink += without.admit(1) ? 1 : 0; }],
    ['sentinel.admit(1), observed by the OpenTelemetry bridge', () => { sink += observed.admit(1) ? 1 : 0; }],
    ['sentinel.status(), no bridge', () => { sink += without.status().length; }],
    ['sentinel.status(), observed by the OpenTelemetry bridge', () => { sink += observed.status().length; }],
  ];
  const results = rows.map(([name, fn]) => [name, measure(fn, { calls: CALLS, runs: RUNS })]);
  printRatios(`OpenTelemetry bridge, median of ${RUNS} runs × ${CALLS.toLocaleString()} calls`, 'ns/call', results);
  const collections = 2000;
  let observations = 0;
  const counting = { observe: () => { observations += 1; } };
  const ours = measure(() => callback(counting), { calls: collections, runs: RUNS });
  const perCollection = await measureAsync(async () => {
    const { resourceMetrics } = await reader.collect();
    sink += resourceMetrics.scopeMetrics.length;
  }, { calls: collections, runs: RUNS });
  const series = observations / (collections * (RUNS + 1));
  console.log(`\none collection of a meter observing 1 sentinel and 2 named breakers (${series} series), median of ${RUNS} runs × ${collections}`);
  console.log('| part | µs/collection |');
  console.log('|---|---:|');
  console.log(`| the bridge's batch callback (one native read, ${series} observations handed over) | ${(ours / 1000).toFixed(1)} |`);
  console.log(`| reader.collect(): that callback and the SDK's own aggregation | ${(perCollection / 1000).toFixed(1)} |`);
  stop();
  await provider.shutdown();
  without.close();
  observed.close();
  if (sink === 42) console.log('');
}

/** A fake authority in a child process, so its own garbage is not counted against the sentinel. */
async function startAuthorityProcess() {
  const script = `
    const server = require('node:http').createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end('{"capabilities":["meter"]}');
    });
    server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = await once(child.stdout, 'data');
  return { child, port: Number(String(line).trim()) };
}

/** RSS and threads before and after starting one sentinel with the HTTP adapter (and its runtime). */
async function footprint() {
  const { child, port } = await startAuthorityProcess();
  global.gc?.();
  const before = { rss: procStatus('VmRSS:'), threads: procStatus('Threads:') };
  const sentinel = new Sentinel({
    budget: { unverifiedUnits: 100, maxUnitsPerSecond: 100 },
    refresh: { minIntervalMs: 20, maxIntervalMs: 30 },
    authority: { url: `http://127.0.0.1:${port}/account`, allowInsecureHttp: true, credential: 'bench', requiredCapability: 'meter' },
  });
  await sentinel.whenReady({ timeoutMs: 10_000 });
  // Let it run a few hundred refreshes so the footprint is the steady state, not the first call.
  const until = Date.now() + 3000;
  while (Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
  global.gc?.();
  const after = { rss: procStatus('VmRSS:'), threads: procStatus('Threads:') };
  console.log('| running sentinel (HTTP adapter, 3 s of refreshes) | added |');
  console.log('|---|---:|');
  console.log(`| RSS | ${((after.rss - before.rss) / 1024).toFixed(1)} MB |`);
  console.log(`| OS threads | ${after.threads - before.threads} |`);
  sentinel.close();
  child.kill();
}

await main();
