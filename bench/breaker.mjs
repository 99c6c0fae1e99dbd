// Circuit breaker benchmark: spend-sentinel's CircuitBreaker against opossum and cockatiel, all in
// this one process. Every call is awaited in sequence (one call in flight), so the figures are the
// breaker's own CPU cost per call, not throughput under concurrency. Four questions:
//  1. fire() overhead on success: ns per `await breaker.fire(asyncFn)` (opossum: `breaker.fire()`,
//     cockatiel: `policy.execute(asyncFn)`) against `await asyncFn()` called directly (the
//     baseline). No library is given a call timeout (spend-sentinel timeoutMs: 0, opossum
//     timeout: false, cockatiel has none unless composed with one), so all three do the same work.
//     Issue target: spend-sentinel's overhead ≤ 1/3 of cockatiel's. Two more spend-sentinel rows
//     show what a fallback + bulkhead, and a caller's signal, add to a success.
//  2. The same when asyncFn rejects (one pre-made Error, so its stack is not part of the cost),
//     with thresholds no run reaches, so nothing trips. The baseline catches asyncFn()'s rejection.
//  3. Refusal while open: ns per refused call, the rejection caught (spend-sentinel: open();
//     opossum: open(); cockatiel: isolate()), against catching a plain async function's rejection
//     (the baseline). That baseline is the floor: fire() must return a rejected promise, which costs
//     about what the baseline's async function does. Both ratios are printed: per refusal in total,
//     and overhead over the floor (ns/call minus the baseline). Issue target: spend-sentinel's
//     overhead ≤ 1/20 of opossum's. A negative overhead (faster than the baseline async function) is
//     printed as measured, and the summary line says so.
//  4. The cost of one more failure as the rolling window fills: a fresh breaker per run holding
//     1k / 5k / 10k / 50k completed calls (successes; a 1 h window, so nothing expires; nothing
//     trips), then a few failures timed. opossum runs with its stats defaults
//     (rollingPercentilesEnabled, enableSnapshots): each failure reads `stats`, which concatenates,
//     sorts and sums the latencies of every call in the window. Its calls here take 0 ms, which
//     makes that sort linear, so it is measured twice: as is, and with the window filled by calls
//     of 1–200 ms (Date.now() stubbed during the untimed fill). Ratios are to the 1k row: flat = O(1).
// Medians of several runs after a warm-up run; asserts nothing. About 35 s on 2 cores.
// Run: node bench/breaker.mjs [section numbers]   (after npm run build).
import { createRequire } from 'node:module';
import { measureAsync, printRatios } from './measure.mjs';
import OpossumBreaker from 'opossum';
import { circuitBreaker, handleAll, ConsecutiveBreaker } from 'cockatiel';

const require = createRequire(import.meta.url);
const opossumVersion = require('opossum/package.json').version;
const cockatielVersion = require('cockatiel/package.json').version;

const CALLS = 100_000; // per run, sections 1–3
const RUNS = 7;
const WINDOW_SIZES = [1_000, 5_000, 10_000, 50_000];
// Section 4, failures timed per run (the window grows by as many while timed): opossum's cost
// much larger, so fewer of them, and fewer runs.
const SPEND_FAILURES_TIMED = 200;
const OPOSSUM_FAILURES_TIMED = 50;
const WINDOW_RUNS = 5;
const HOUR_MS = 3_600_000;
const NEVER = 2 ** 32 - 1; // a call count no run reaches (spend-sentinel's minimumCalls is a u32)

// spend-sentinel, by its package name (self-reference through "exports").
const { CircuitBreaker: SpendBreaker } = require('spend-sentinel');

const ok = async () => 1;
const ERROR = new Error('downstream failed');
const fails = async () => {
  throw ERROR;
};
/** opossum binds its action at construction: this one fails when asked to. */
const okOrFails = async (fail) => {
  if (fail) throw ERROR;
  return 1;
};

// Thresholds no run reaches: nothing trips, yet each library still does its per-failure bookkeeping.
const spendQuiet = (extra) =>
  new SpendBreaker({ name: 'bench', timeoutMs: 0, failureThreshold: 0, failureRateThreshold: 1, minimumCalls: NEVER, ...extra });
// errorRate > 100 % never holds. opossum's default timeout is 10 s: turned off like the others'.
const opossumQuiet = (action, extra) => new OpossumBreaker(action, { timeout: false, errorThresholdPercentage: 100, ...extra });

const fmt = (ns) => ns.toFixed(1);
const ratio = (a, b) => (a / b).toFixed(2);

function printTable(title, header, rows) {
  console.log(title);
  console.log(`| ${header.join(' | ')} |`);
  console.log(`|---|${header.slice(1).map(() => '---:').join('|')}|`);
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
}

/** An async function awaiting `call()` and swallowing its rejection. */
const caught = (call) => async () => {
  try {
    await call();
  } catch {
    // the rejection is the path being measured
  }
};

/** Measures `[name, prepare]` rows in order: `prepare()` returns `[call, dispose?]`. */
async function measureRows(rows, options) {
  const results = [];
  for (const [name, prepare] of rows) {
    const [call, dispose] = prepare();
    results.push([name, await measureAsync(call, options)]);
    dispose?.();
  }
  return results;
}

/** Sections 1 and 2: ns/call, the overhead over the baseline, and each overhead over cockatiel's. */
async function overheadSection(title, rows) {
  const [[baseName, base], spendRow, ...others] = await measureRows(rows, { calls: CALLS, runs: RUNS });
  const overhead = (ns) => ns - base;
  const cockatiel = overhead(others.find(([name]) => name.startsWith('cockatiel'))[1]);
  printTable(
    `${title}, median of ${RUNS} runs × ${CALLS.toLocaleString('en-US')} calls`,
    ['call', 'ns/call', '× baseline', 'overhead ns/call', 'overhead × cockatiel'],
    [
      [baseName, fmt(base), '1.00', '0.0', '—'],
      ...[spendRow, ...others].map(([name, ns]) => [name, fmt(ns), ratio(ns, base), fmt(overhead(ns)), ratio(overhead(ns), cockatiel)]),
    ],
  );
  console.log(`spend-sentinel overhead / cockatiel overhead: ${ratio(overhead(spendRow[1]), cockatiel)} (issue target ≤ 0.33)`);
}

async function successOverhead() {
  await overheadSection('1. fire() overhead on success', [
    ['await asyncFn() (baseline)', () => [ok]],
    [
      'spend-sentinel fire(asyncFn)',
      () => {
        const breaker = new SpendBreaker({ name: 'bench', timeoutMs: 0 });
        return [() => breaker.fire(ok)];
      },
    ],
    [
      `opossum ${opossumVersion} fire()`,
      () => {
        const breaker = new OpossumBreaker(ok, { timeout: false });
        return [() => breaker.fire(), () => breaker.shutdown()];
      },
    ],
    [
      `cockatiel ${cockatielVersion} execute(asyncFn)`,
      () => {
        const policy = circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) });
        return [() => policy.execute(ok)];
      },
    ],
    [
      'spend-sentinel fire(asyncFn), fallback + maxConcurrent set',
      () => {
        const breaker = new SpendBreaker({ name: 'bench', timeoutMs: 0, maxConcurrent: 1000, fallback: () => 0 });
        return [() => breaker.fire(ok)];
      },
    ],
    [
      'spend-sentinel fireWith({ signal }, asyncFn)',
      () => {
        const breaker = new SpendBreaker({ name: 'bench', timeoutMs: 0 });
        const options = { signal: new AbortController().signal };
        return [() => breaker.fireWith(options, ok)];
      },
    ],
  ]);
}

async function failureOverhead() {
  await overheadSection('2. fire() overhead on failure (asyncFn rejects; nothing trips)', [
    ['await asyncFn() rejection caught (baseline)', () => [caught(fails)]],
    [
      'spend-sentinel fire(asyncFn)',
      () => {
        const breaker = spendQuiet({});
        return [caught(() => breaker.fire(fails))];
      },
    ],
    [
      // With opossum's default rollingPercentilesEnabled, each failure sorts every latency in the
      // window, and in a loop that never yields to timers the window never rotates: the cost per
      // failure would grow with the call count. Section 4 measures that; here it is turned off.
      `opossum ${opossumVersion} fire() (rollingPercentilesEnabled: false)`,
      () => {
        const breaker = opossumQuiet(fails, { rollingPercentilesEnabled: false });
        return [caught(() => breaker.fire()), () => breaker.shutdown()];
      },
    ],
    [
      `cockatiel ${cockatielVersion} execute(asyncFn)`,
      () => {
        const policy = circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(Number.MAX_SAFE_INTEGER) });
        return [caught(() => policy.execute(fails))];
      },
    ],
  ]);
}

async function refusal() {
  const [[baseName, base], ...rows] = await measureRows(
    [
      ['await asyncFn() rejection caught (baseline)', () => [caught(fails)]],
      [
        `opossum ${opossumVersion} fire() after open()`,
        () => {
          const breaker = new OpossumBreaker(ok, { timeout: false });
          breaker.open();
          return [caught(() => breaker.fire()), () => breaker.shutdown()];
        },
      ],
      [
        `cockatiel ${cockatielVersion} execute() after isolate()`,
        () => {
          const policy = circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) });
          const isolation = policy.isolate();
          return [caught(() => policy.execute(ok)), () => isolation.dispose()];
        },
      ],
      [
        'spend-sentinel fire() after open()',
        () => {
          const breaker = new SpendBreaker({ name: 'bench' });
          breaker.open();
          return [caught(() => breaker.fire(ok))];
        },
      ],
    ],
    { calls: CALLS, runs: RUNS },
  );
  // The baseline is the floor (fire() must return a rejected promise): overhead is what lies above it.
  const overhead = (ns) => ns - base;
  const opossumNs = rows[0][1];
  printTable(
    `3. Refusal while open (rejection caught), median of ${RUNS} runs × ${CALLS.toLocaleString('en-US')} calls`,
    ['call', 'ns/call', '× baseline', 'overhead ns/call', '× opossum'],
    [
      [baseName, fmt(base), '1.00', '0.0', ratio(base, opossumNs)],
      ...rows.map(([name, ns]) => [name, fmt(ns), ratio(ns, base), fmt(overhead(ns)), ratio(ns, opossumNs)]),
    ],
  );
  const spendNs = rows[2][1];
  const spendOverhead = overhead(spendNs);
  const belowFloor =
    spendOverhead < 0
      ? `; spend-sentinel's overhead is negative as measured, ${fmt(spendOverhead)} ns/call: faster than the baseline async function, so the ratio is below 0`
      : '';
  console.log(
    `spend-sentinel / opossum per refusal: ${ratio(spendNs, opossumNs)} total; ` +
      `overhead over the floor (baseline), spend-sentinel / opossum: ${ratio(spendOverhead, overhead(opossumNs))} (issue target ≤ 0.05${belowFloor})`,
  );
}

/**
 * Section 4 for one library. Each run gets a fresh breaker from `make()`, `fillWindow(b, size)`
 * completes `size` calls (untimed), then `failures` failures are timed. One discarded pass at the
 * smallest size first warms the JIT up.
 */
async function windowSection(title, { failures, runs }, { make, fillWindow, fail, dispose }) {
  let breaker = null;
  const timed = () => fail(breaker);
  const atSize = (size, options) =>
    measureAsync(timed, {
      ...options,
      setup: async () => {
        if (breaker) dispose(breaker);
        breaker = make();
        await fillWindow(breaker, size);
      },
    });
  await atSize(WINDOW_SIZES[0], { calls: 10 * failures, runs: 1 });
  const rows = [];
  for (const size of WINDOW_SIZES) rows.push([`${size.toLocaleString('en-US')} calls in the window`, await atSize(size, { calls: failures, runs })]);
  dispose(breaker);
  printRatios(`${title}, median of ${runs} runs × ${failures} failures`, 'ns/failure', rows);
}

/** Runs `fill()` with Date.now() stubbed so that each opossum call measures 1–200 ms. */
async function withVariedLatencies(fill) {
  const realNow = Date.now;
  let now = realNow();
  let seed = 1;
  Date.now = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; // a fixed LCG: the same latencies every run
    return (now += 1 + ((seed >>> 16) % 200));
  };
  try {
    await fill();
  } finally {
    Date.now = realNow;
  }
}

async function failureCostVsWindow() {
  const heading = (lib) => `4. ${lib}: one more failure with N completed calls in the window (1 h; nothing trips)`;
  const failing = (fire) => async (b) => {
    try {
      await fire(b);
    } catch {
      // the rejection is the path being measured
    }
  };
  await windowSection(
    heading('spend-sentinel'),
    { failures: SPEND_FAILURES_TIMED, runs: RUNS },
    {
      make: () => spendQuiet({ windowMs: HOUR_MS }),
      fillWindow: async (b, size) => {
        for (let i = 0; i < size; i++) await b.fire(ok);
      },
      fail: failing((b) => b.fire(fails)),
      dispose: () => {},
    },
  );
  const fillOpossum = async (b, size) => {
    for (let i = 0; i < size; i++) await b.fire(false);
  };
  const opossum = {
    make: () => opossumQuiet(okOrFails, { rollingCountTimeout: HOUR_MS }),
    fillWindow: fillOpossum,
    fail: failing((b) => b.fire(true)),
    dispose: (b) => b.shutdown(),
  };
  const budget = { failures: OPOSSUM_FAILURES_TIMED, runs: WINDOW_RUNS };
  console.log('');
  await windowSection(heading(`opossum ${opossumVersion}, stats defaults, calls of 0 ms`), budget, opossum);
  console.log(
    "opossum records each call's latency in whole ms from Date.now(); these calls all take 0 ms, so the\n" +
      'sort on each failure meets presorted input (linear time): a lower bound. Below, the same with the\n' +
      'window filled by calls of 1–200 ms (Date.now() stubbed while filling, untimed; the timed failures run as is).',
  );
  console.log('');
  await windowSection(heading(`opossum ${opossumVersion}, stats defaults, calls of 1–200 ms`), budget, {
    ...opossum,
    fillWindow: (b, size) => withVariedLatencies(() => fillOpossum(b, size)),
  });
}

async function main() {
  const started = process.hrtime.bigint();
  console.log(`Node ${process.version}, opossum ${opossumVersion}, cockatiel ${cockatielVersion}`);
  // `node bench/breaker.mjs 1 3` runs sections 1 and 3 only.
  const only = process.argv.slice(2).map(Number);
  const sections = [successOverhead, failureOverhead, refusal, failureCostVsWindow];
  for (const section of sections.filter((_, i) => only.length === 0 || only.includes(i + 1))) {
    console.log('');
    await section();
  }
  console.log(`\n(${(Number(process.hrtime.bigint() - started) / 1e9).toFixed(1)} s)`);
}

await main();
