// Streams with a healthy authority (docs/benchmarks.md): how many concurrent streamed answers one
// node carries when its authority answers `valid` in 50 ms, with and without `reservation.record`.
//
// One real Sentinel per configuration, in process: node budget B = 2000 units, r = 200/s (so
// w = 10 s, the default cadence: pauses of 3 to 5 s), an `inspect` authority answering `valid`
// after L = 50 ms. N streams start at seeded random moments over the first RAMP (2 s); from then
// on N stay open (when one ends, its slot starts the next at once; a refused one tries again a
// chunk later). Each is a model answer of 200 to 500 units produced in chunks of c = 16 units
// every p = 200 ms (80 units/s):
//  - with record: reserve(16) for the first chunk; for each chunk, produce it (200 ms), record it
//    once produced, then extend(16) one chunk ahead before producing the next; at the end
//    settle(total). A stream holds about one chunk, and what it recorded is cleared by the next
//    `valid` answer to a refresh sent after the record.
//  - without record (the way before `record`): reserve(16), extend(16) before each further chunk,
//    settle(total) at the end. A stream holds its whole answer so far until it settles.
// A refused reserve (null) turns the stream away; a refused extend cuts it short (it settles what
// it produced). Printed per mode and N, over SECONDS of steady state after the ramp: streams
// started (admitted), refused, cut short and completed; the units produced a second (the demand
// is N × 80); the authority's calls a second; the refreshes started on demand
// (spend_sentinel_refresh_on_demand_total); the highest exposureUnits read after any operation.
// Beside each N, the sizing rule's left side: N streams of c units every p seconds fit a node
// budget B with an authority answering in L seconds while
//   N×c + (N×c/p) × max(2L, L + 0.1) ≤ 0.8 × B   (here 1600)
// (N×c: one chunk held per stream; then what they record while a refresh waits its 100 ms spacing
// and its answer).
//
// Last, the silent-authority ceiling (the safety figure, checked): 48 recording streams on the
// healthy authority, then at T the authority goes silent (no call made after T ever answers: each
// ends `indeterminate` at the refresh timeout, 2 s), and the streams go on until the ledger stops
// them. The units produced after T (every chunk finished after T) must not exceed the node budget
// plus the overage recorded after T: PASS, or FAIL and exit 1. __test__/streams-bench.spec.mjs
// runs that check alone (its short form); the throughput figures depend on the machine's timing
// and are never asserted.
//
// Not part of npm test or npm run bench; real time, about 90 s:
//   node bench/streams.mjs [--seconds 8] [--streams 16,48,64,256] [--seed 1] [--short]
// --short: 2 s of steady state after a 1 s ramp, and 1 s of health before the silence (about
// 30 s in all).
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { Sentinel } = createRequire(import.meta.url)('../js/main.js');

const NODE_BUDGET = 2000;
const R = 200; // units a second: w = 2000 / 200 = 10 s
const LATENCY_MS = 50;
const CHUNK = 16; // c: units a chunk (an answer's last chunk may be smaller)
const CHUNK_MS = 200; // p: a chunk every 200 ms per stream, 80 units/s
const LENGTH = [200, 500]; // units an answer
const DEMAND_SPACING_S = 0.1; // a refresh on demand starts ≥ 100 ms after the previous one started

/** The sizing rule's left side for N streams: N×c + (N×c/p) × max(2L, L + 0.1). */
export function sizingLeftSide(streams) {
  const held = streams * CHUNK;
  const latency = LATENCY_MS / 1000;
  return held + (held / (CHUNK_MS / 1000)) * Math.max(2 * latency, latency + DEMAND_SPACING_S);
}

/** An LCG, plenty for a benchmark: the same draws on every run. */
function generator(seed) {
  let state = seed >>> 0;
  return () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

const metric = (sentinel, name) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(sentinel.metrics())[1]);

/**
 * An `inspect` answering `valid` after LATENCY_MS, counting its calls; after `silence()`, a call
 * never answers (the addon's refresh timeout ends it `indeterminate`). A call already on its way
 * when the silence starts still answers.
 */
function authority() {
  let calls = 0;
  let silent = false;
  const unanswered = [];
  return {
    inspect: async () => {
      calls += 1;
      if (silent) return new Promise((resolve) => unanswered.push(resolve));
      await sleep(LATENCY_MS);
      return 'valid';
    },
    get calls() {
      return calls;
    },
    silence() {
      silent = true;
    },
    /** Answers what the silence left waiting (after the sentinel closed: applied to nothing). */
    release() {
      for (const resolve of unanswered.splice(0)) resolve('indeterminate');
    },
  };
}

/**
 * Runs `streams` slots of streamed answers on `sentinel` until `run.stopping`; `record` picks the
 * pattern. Every event is counted in `run.tally` (cumulative: callers take differences), and
 * `run.onProduced(units)` / `run.onRefused(what)` see each chunk produced and each refusal.
 */
function startSlots(sentinel, run, { streams, record, seed, rampMs }) {
  const draw = generator(seed);
  const slots = [];
  const tally = run.tally;
  const note = () => {
    const exposure = sentinel.exposureUnits;
    if (exposure > tally.peakExposure) tally.peakExposure = exposure;
  };

  async function stream(random) {
    const length = LENGTH[0] + Math.floor(random() * (LENGTH[1] - LENGTH[0] + 1));
    const reservation = sentinel.reserve(CHUNK);
    if (reservation === null) {
      tally.refused += 1;
      run.onRefused('reserve');
      await sleep(CHUNK_MS);
      return;
    }
    tally.started += 1;
    tally.open += 1;
    note();
    let produced = 0;
    let due = performance.now();
    for (;;) {
      due += CHUNK_MS; // the model's pace, whatever a late timer did to the previous chunk
      await sleep(Math.max(0, due - performance.now()));
      const chunk = Math.min(CHUNK, length - produced);
      produced += chunk;
      tally.produced += chunk;
      run.onProduced(chunk);
      if (record) {
        reservation.record(chunk);
        note();
      }
      if (produced >= length) {
        tally.completed += 1;
        break;
      }
      if (run.stopping) break;
      if (!reservation.extend(CHUNK)) {
        tally.cut += 1;
        run.onRefused('extend');
        break;
      }
      note();
    }
    reservation.settle(produced);
    tally.open -= 1;
  }

  for (let i = 0; i < streams; i += 1) {
    // Each slot draws its start and its answers from a generator of its own: the same on every run.
    const startMs = draw() * rampMs;
    const random = generator(Math.floor(draw() * 2 ** 32));
    slots.push(
      (async () => {
        await sleep(startMs);
        while (!run.stopping) await stream(random);
      })(),
    );
  }
  return slots;
}

function newRun() {
  return {
    stopping: false,
    tally: { started: 0, refused: 0, cut: 0, completed: 0, produced: 0, open: 0, peakExposure: 0 },
    onProduced: () => {},
    onRefused: () => {},
  };
}

async function newSentinel(auth) {
  const sentinel = new Sentinel({
    budget: { unverifiedUnits: NODE_BUDGET, maxUnitsPerSecond: R },
    authority: { inspect: auth.inspect },
  });
  await sentinel.whenReady({ timeoutMs: 10_000 });
  return sentinel;
}

/** One throughput configuration: `streams` slots in one mode, measured for `seconds` after the ramp. */
export async function throughput({ streams, record, seconds, rampMs, seed }) {
  const auth = authority();
  const sentinel = await newSentinel(auth);
  const run = newRun();
  const slots = startSlots(sentinel, run, { streams, record, seed, rampMs });
  await sleep(rampMs);
  const before = { ...run.tally, peakExposure: 0, calls: auth.calls, demand: metric(sentinel, 'spend_sentinel_refresh_on_demand_total') };
  run.tally.peakExposure = 0;
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const elapsed = (performance.now() - t0) / 1000;
  const after = { ...run.tally, calls: auth.calls, demand: metric(sentinel, 'spend_sentinel_refresh_on_demand_total') };
  run.stopping = true;
  await Promise.all(slots);
  await sentinel.close();
  const diff = (key) => after[key] - before[key];
  return {
    streams,
    record,
    seconds: elapsed,
    started: diff('started'),
    refused: diff('refused'),
    cut: diff('cut'),
    completed: diff('completed'),
    unitsPerSecond: diff('produced') / elapsed,
    callsPerSecond: diff('calls') / elapsed,
    demand: diff('demand'),
    peakExposure: after.peakExposure,
  };
}

/** Whether the silent-authority figures keep the ceiling: produced after T ≤ node budget + overage after T. */
export const withinCeiling = ({ producedAfter, nodeBudget, overageAfter }) => producedAfter <= nodeBudget + overageAfter;

/**
 * The silent-authority ceiling: `streams` recording streams on the healthy authority for
 * `healthyMs` after the ramp, then the authority goes silent at T; the streams go on until the
 * ledger (or, later, the evidence's age) stops them all: no stream open and none admitted for a
 * second. Returns the figures and whether they keep the ceiling.
 */
export async function silentCeiling({ streams = 48, rampMs = 2000, healthyMs = 2000, seed = 1 } = {}) {
  const auth = authority();
  const sentinel = await newSentinel(auth);
  const run = newRun();
  const slots = startSlots(sentinel, run, { streams, record: true, seed, rampMs });
  await sleep(rampMs + healthyMs);

  auth.silence();
  const atT = {
    exposure: sentinel.exposureUnits,
    held: sentinel.reservedUnits,
    overage: metric(sentinel, 'spend_sentinel_overage_units_total'),
    open: run.tally.open,
  };
  const t = performance.now();
  let producedAfter = 0;
  let lastAdmittedAt = t;
  const refusals = {};
  const startedBefore = run.tally.started;
  run.onProduced = (units) => (producedAfter += units);
  run.onRefused = (what) => {
    const reason = `${what}: ${sentinel.refusalReason(CHUNK) ?? 'admitted by now'}`;
    refusals[reason] = (refusals[reason] ?? 0) + 1;
  };
  // The ledger is no longer cleared: once full, every reserve is refused and every stream open
  // ends at its next extend. Stopped: nothing open, and no stream admitted for a second. The
  // evidence ages out w = 10 s after T at the latest, so this ends on any machine; the bound only
  // ends a hang.
  const giveUp = t + 6 * 1000 * (NODE_BUDGET / R);
  let startedSeen = run.tally.started;
  for (;;) {
    await sleep(100);
    const now = performance.now();
    if (run.tally.started !== startedSeen) {
      startedSeen = run.tally.started;
      lastAdmittedAt = now;
    }
    if ((run.tally.open === 0 && now - lastAdmittedAt >= 1000) || now > giveUp) break;
  }
  const stoppedAfter = (performance.now() - t) / 1000;
  const stopped = run.tally.open === 0;
  const figures = {
    streams,
    nodeBudget: sentinel.nodeBudgetUnits,
    exposureAtT: atT.exposure,
    heldAtT: atT.held,
    openAtT: atT.open,
    producedAfter,
    overageAfter: metric(sentinel, 'spend_sentinel_overage_units_total') - atT.overage,
    startedAfter: run.tally.started - startedBefore,
    refusals,
    stopped,
    stoppedAfter,
  };
  run.stopping = true;
  await Promise.all(slots);
  await sentinel.close();
  auth.release();
  return { ...figures, pass: withinCeiling(figures) };
}

function usage(message) {
  console.error(`${message}\nusage: node bench/streams.mjs [--seconds S (> 0)] [--streams N,N,…] [--seed INTEGER] [--short]`);
  process.exit(2);
}

const fixed = (x, digits = 1) => x.toFixed(digits);

async function main() {
  const { values: args } = parseArgs({
    options: {
      seconds: { type: 'string' },
      streams: { type: 'string', default: '16,48,64,256' },
      seed: { type: 'string', default: '1' },
      short: { type: 'boolean', default: false },
    },
  });
  const seconds = Number(args.seconds ?? (args.short ? 2 : 8));
  const rampMs = args.short ? 1000 : 2000;
  const healthyMs = args.short ? 1000 : 3000;
  const seed = Number(args.seed);
  const counts = args.streams.split(',').map(Number);
  if (!(seconds > 0) || !Number.isFinite(seconds)) usage(`--seconds: must be a number > 0 (got ${args.seconds})`);
  if (!Number.isInteger(seed)) usage(`--seed: must be an integer (got ${args.seed})`);
  if (!counts.every((n) => Number.isInteger(n) && n > 0)) usage(`--streams: must be whole numbers > 0 (got ${args.streams})`);

  console.log(
    `node budget B = ${NODE_BUDGET}, r = ${R}/s (w = ${NODE_BUDGET / R} s), authority answering valid in L = ${LATENCY_MS} ms; ` +
      `answers of ${LENGTH[0]}–${LENGTH[1]} units in chunks of c = ${CHUNK} every p = ${CHUNK_MS} ms; ` +
      `starts spread over ${rampMs / 1000} s, then ${seconds} s measured; seed ${seed}; Node ${process.version}`,
  );
  console.log(`sizing rule: N×c + (N×c/p) × max(2L, L + 0.1) ≤ 0.8 × B = ${0.8 * NODE_BUDGET}`);
  console.log(
    '| mode | N | rule\'s left side | streams started | refused | cut short | completed | units/s produced (of N × 80) | authority calls/s | demand refreshes | peak exposureUnits |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const record of [true, false]) {
    for (const streams of counts) {
      const row = await throughput({ streams, record, seconds, rampMs, seed });
      const left = sizingLeftSide(streams);
      console.log(
        `| ${record ? 'record' : 'no record'} | ${streams} | ${fixed(left, 0)} ${left <= 0.8 * NODE_BUDGET ? '≤' : '>'} ${0.8 * NODE_BUDGET} | ` +
          `${row.started} | ${row.refused} | ${row.cut} | ${row.completed} | ${fixed(row.unitsPerSecond, 0)} of ${streams * 80} | ` +
          `${fixed(row.callsPerSecond, 2)} | ${row.demand} (${fixed(row.demand / row.seconds)}/s) | ${fixed(row.peakExposure, 0)} |`,
      );
    }
  }

  console.log('');
  const silent = await silentCeiling({ streams: 48, rampMs, healthyMs, seed });
  console.log(
    `silent authority: ${silent.streams} recording streams, healthy for ${(rampMs + healthyMs) / 1000} s, then silent at T ` +
      `(exposure ${fixed(silent.exposureAtT, 0)} at T, ${fixed(silent.heldAtT, 0)} of it held by ${silent.openAtT} open streams)`,
  );
  console.log('| after T | units |');
  console.log('|---|---:|');
  console.log(`| produced (chunks finished after T) | ${fixed(silent.producedAfter, 0)} |`);
  console.log(`| node budget + overage recorded after T | ${fixed(silent.nodeBudget, 0)} + ${fixed(silent.overageAfter, 0)} |`);
  console.log(
    `streams admitted after T: ${silent.startedAfter}; ` +
      `${silent.stopped ? `every stream stopped ${fixed(silent.stoppedAfter)} s after T` : `still streaming ${fixed(silent.stoppedAfter)} s after T`}; ` +
      `refusals: ${Object.entries(silent.refusals).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}`,
  );
  console.log(
    `${silent.pass ? 'PASS' : 'FAIL'}: produced after T ${fixed(silent.producedAfter, 0)} ` +
      `${silent.pass ? '≤' : '>'} node budget + overage after T ${fixed(silent.nodeBudget + silent.overageAfter, 0)}`,
  );
  if (!silent.pass) process.exitCode = 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
