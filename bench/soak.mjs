// Soak: several sentinels against one flapping fake authority, in one process, for N minutes.
//
// The authority (the test suites' fake, __test__/helpers/fake-authority.mjs, plain http on
// 127.0.0.1) changes its answer every 200–500 ms, in a seeded random order, through every kind
// of answer the HTTP adapter must survive (see ANSWERS). Meanwhile:
//  - every sentinel is asked `admit(1)` BATCH times per setImmediate turn; after each admitted
//    unit its ledger (`exposureUnits`) is read, and a ledger above `nodeBudgetUnits` is a
//    violation (the guarantee of the budget math);
//  - a CircuitBreaker guards an async function (a fetch of the same authority);
//  - `metrics()` of every sentinel is read (strictly parsed) every second, and `onTransition`
//    listeners count status changes.
// Rows of resources are printed at every full minute and at the end (each after global.gc()),
// then per-sentinel and authority summaries. Exit 0 only without violation, uncaught error or
// malformed exposition; a native abort kills the process (exit 134), which fails the run too.
//
// Run: node --expose-gc bench/soak.mjs [--minutes N] [--seed S]   (npm run soak -- --minutes 1)
// N may be fractional (0.3 for a quick check); default 10. After npm run build.
//
// --reservations runs the reservations variant instead (bench/soak-reservations.mjs): --ops N
// random reservation operations (default 10^8, under four minutes on the 2-core machine) on one
// sentinel whose refreshes it answers itself, each checked against a model of the ledger.
import { createRequire } from 'node:module';
import { readFileSync, readdirSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { reply, startFakeAuthority } from '../__test__/helpers/fake-authority.mjs';
import { byLabel, readExposition, valueOf } from '../__test__/helpers/exposition.mjs';

const { Sentinel, CircuitBreaker, CircuitOpenError } = createRequire(import.meta.url)('../js/main.js');

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    seed: { type: 'string', default: '1' },
    reservations: { type: 'boolean', default: false },
    ops: { type: 'string', default: '1e8' },
  },
});
const MINUTES = Number(args.minutes);
const SEED = Number(args.seed);
const OPS = Number(args.ops);
if (!(MINUTES > 0) || !Number.isFinite(MINUTES) || !Number.isInteger(SEED) || !(Number.isSafeInteger(OPS) && OPS > 0)) {
  console.error('usage: node --expose-gc bench/soak.mjs [--minutes N (> 0)] [--seed INTEGER] [--reservations [--ops N (a whole number > 0)]]');
  process.exit(2);
}

const BATCH = 10_000; // admit(1) calls per sentinel per event-loop turn
const CAPABILITY = 'meter.requests';
const CREDENTIAL = 'soak-credential-not-a-secret'; // never printed: nothing below prints options
const OUTCOME_KEYS = ['valid', 'invalid_credential', 'capability_missing', 'indeterminate'];

// ---------- crashes: an uncaught error must not go unnoticed, nor end the run early ----------
const crashes = [];
const noteCrash = (kind) => (err) => {
  crashes.push(`${kind}: ${err?.code ?? ''} ${err?.message ?? String(err)}`.slice(0, 200));
};
process.on('uncaughtException', noteCrash('uncaughtException'));
process.on('unhandledRejection', noteCrash('unhandledRejection'));

// ---------- seeded randomness (mulberry32) ----------
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(SEED);
function shuffle(list) {
  for (let i = list.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [list[i], list[j]] = [list[j], list[i]];
  }
  return list;
}

// ---------- the reservations variant: its own sentinel and authority, then the same verdict ----------
if (args.reservations) {
  if (typeof global.gc !== 'function') console.log('note: run with node --expose-gc; the heap figures are taken without a forced GC');
  const { soakReservations } = await import('./soak-reservations.mjs');
  const failures = await soakReservations({ ops: OPS, seed: SEED, random });
  if (crashes.length > 0) failures.push(`${crashes.length} uncaught error(s)`);
  for (const c of crashes.slice(0, 5)) console.log(`crash: ${c}`.slice(0, 100));
  console.log(failures.length === 0 ? 'PASS: no violation, no crash' : `FAIL: ${failures.join(', ')}`);
  process.exit(failures.length === 0 ? 0 : 1);
}

// ---------- the flapping authority ----------
const fake = await startFakeAuthority();
const VALID_BODY = { account: 'acct_soak', capabilities: [CAPABILITY, 'other'] };

/** A valid answer whose body arrives in 8 pieces 25 ms apart (~200 ms: slower than some timeouts). */
const slowBody = () => (req, res) => {
  const bytes = Buffer.from(JSON.stringify(VALID_BODY));
  const piece = Math.ceil(bytes.length / 8);
  let sent = 0;
  res.writeHead(200, { 'content-type': 'application/json' });
  const timer = setInterval(() => {
    if (res.destroyed) return clearInterval(timer);
    res.write(bytes.subarray(sent, sent + piece));
    sent += piece;
    if (sent >= bytes.length) {
      clearInterval(timer);
      res.end();
    }
  }, 25);
  res.once('close', () => clearInterval(timer));
};

/** Every answer kind (name → handler); the order they are served in is the seeded shuffle. */
const ANSWERS = {
  valid: reply.json(200, VALID_BODY),
  'no-capability': reply.json(200, { capabilities: ['other'] }),
  401: reply.json(401, { error: 'unauthorized' }),
  403: reply.json(403, { error: 'forbidden' }),
  402: reply.json(402, { error: 'payment required' }),
  500: reply.json(500, { error: 'internal' }),
  503: reply.json(503, { error: 'unavailable' }, { 'retry-after': '1' }),
  429: reply.json(429, { error: 'slow down' }, { 'retry-after': '1' }),
  302: reply.redirect(`${fake.url}?redirected=1`),
  404: reply.json(404, { error: 'not found' }),
  'non-json': reply.text(200, '<html>maintenance</html>', 'text/html'),
  'no-pointer': reply.json(200, { account: 'acct_soak', plan: 'pro' }),
  'over-64k': reply.paddedJson(200, VALID_BODY, 64 * 1024 + 4096),
  hang: reply.hang(),
  reset: (req) => req.socket.destroy(),
  'slow-body': slowBody(),
};
const KINDS = Object.keys(ANSWERS);
// Each round serves every kind once plus 4 extra `valid` phases, shuffled: the sentinels spend
// enough time verified to admit, and every failure kind interrupts them.
const served = Object.fromEntries(KINDS.map((k) => [k, 0])); // requests answered per kind
let phase = 'valid';
let phaseQueue = [];
let phaseTimer = null;
let phases = 0;
function nextPhase() {
  if (phaseQueue.length === 0) phaseQueue = shuffle([...KINDS, 'valid', 'valid', 'valid', 'valid']);
  phase = phaseQueue.pop();
  phases += 1;
  const handler = ANSWERS[phase];
  const kind = phase;
  fake.respondWith((req, res) => {
    served[kind] += 1;
    handler(req, res);
  });
  phaseTimer = setTimeout(nextPhase, 200 + Math.floor(random() * 300));
}
nextPhase();

// ---------- the sentinels ----------
const authority = {
  url: fake.url,
  allowInsecureHttp: true,
  credential: CREDENTIAL,
  requiredCapability: CAPABILITY,
};
const SPECS = [
  { name: 'b200 r2000', budget: { unverifiedUnits: 200, maxUnitsPerSecond: 2000 } },
  { name: 'b200 r1000 n2', budget: { unverifiedUnits: 200, maxUnitsPerSecond: 1000, nodes: 2 } },
  {
    name: 'b2000 r2000 brk',
    budget: { unverifiedUnits: 2000, maxUnitsPerSecond: 2000 },
    refresh: { breaker: { failureThreshold: 3, openMs: 300, maxOpenMs: 2000, trialTimeoutMs: 500 } },
  },
  {
    name: 'b1000 r500 s.5',
    budget: { unverifiedUnits: 1000, maxUnitsPerSecond: 500, share: 0.5, maxStaleSeconds: 0.5 },
  },
];
const nodes = SPECS.map((spec) => {
  let sentinel;
  try {
    sentinel = new Sentinel({ budget: spec.budget, refresh: spec.refresh, authority });
  } catch (err) {
    // A bad configuration is the script's fault, not a crash to count: stop at once.
    console.error(`soak: ${spec.name}: ${err.message}`);
    process.exit(2);
  }
  const node = {
    name: spec.name,
    sentinel,
    budget: sentinel.nodeBudgetUnits,
    window: sentinel.staleWindowSeconds,
    admitted: 0,
    maxLedger: 0,
    violations: 0,
    transitions: 0,
    metricTransitions: 0,
    refreshes: Object.fromEntries(OUTCOME_KEYS.map((k) => [k, 0])),
  };
  sentinel.onTransition(() => {
    node.transitions += 1;
  });
  return node;
});

// ---------- admission in tight batches ----------
let admitCalls = 0;
let stopping = false;
function admitBatch() {
  if (stopping) return;
  for (const node of nodes) {
    const { sentinel, budget } = node;
    for (let i = 0; i < BATCH; i += 1) {
      if (!sentinel.admit(1)) continue;
      node.admitted += 1;
      // The ledger only grows by admitting, so its peaks are seen right here.
      const ledger = sentinel.exposureUnits;
      if (ledger > node.maxLedger) node.maxLedger = ledger;
      if (ledger > budget) node.violations += 1;
    }
  }
  admitCalls += BATCH * nodes.length;
  setImmediate(admitBatch);
}
setImmediate(admitBatch);

// ---------- a CircuitBreaker around an async function ----------
const breaker = new CircuitBreaker({
  name: 'soak_upstream',
  timeoutMs: 150,
  failureThreshold: 3,
  openMs: 250,
  maxOpenMs: 2000,
  trialTimeoutMs: 500,
});
const calls = { success: 0, failure: 0, refused: 0, stateChanges: 0 };
breaker.onStateChange(() => {
  calls.stateChanges += 1;
});
async function upstream({ signal }) {
  const res = await fetch(fake.url, { signal, redirect: 'manual' });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`upstream answered ${res.status}`);
  return body.length;
}
const breakerTimer = setInterval(() => {
  breaker.fire(upstream).then(
    () => (calls.success += 1),
    (err) => (err instanceof CircuitOpenError ? (calls.refused += 1) : (calls.failure += 1)),
  );
}, 20);

// ---------- metrics every second ----------
const metricErrors = [];
function readMetrics() {
  // The test helper logs every request it serves (tests read it); a soak must not, or that log
  // would be the heap growth it reports.
  fake.requests.length = 0;
  for (const node of nodes) {
    try {
      const families = readExposition(node.sentinel.metrics());
      const outcomes = byLabel(families, 'spend_sentinel_refresh_total', 'outcome');
      for (const k of OUTCOME_KEYS) node.refreshes[k] = outcomes[k];
      const ledger = valueOf(families, 'spend_sentinel_exposure_units');
      if (ledger > node.maxLedger) node.maxLedger = ledger;
      if (ledger > node.budget) node.violations += 1;
      const transitions = families.get('spend_sentinel_transitions_total').samples;
      node.metricTransitions = transitions.reduce((sum, s) => sum + s.value, 0);
    } catch (err) {
      metricErrors.push(`${node.name}: ${err.message}`.slice(0, 200));
    }
  }
}
const metricsTimer = setInterval(readMetrics, 1000);

// ---------- resources ----------
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
const threads = () => Number(/^Threads:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
const openFds = () => readdirSync('/proc/self/fd').length;
const mb = (bytes) => (bytes / 2 ** 20).toFixed(1);
const clock = (ms) => {
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};
const col = (values, widths) => values.map((v, i) => String(v).padStart(widths[i])).join(' ');

if (typeof global.gc !== 'function') {
  console.log('note: run with node --expose-gc; the figures below are taken without a forced GC');
}
const gc = () => global.gc?.();
const ROW = [9, 7, 7, 7, 4, 11, 10, 11, 5, 5];
const rows = [];
function row(label) {
  gc();
  const totals = nodes.reduce(
    (t, n) => ({ transitions: t.transitions + n.transitions, violations: t.violations + n.violations }),
    { transitions: 0, violations: 0 },
  );
  const line = col(
    [
      label,
      mb(process.memoryUsage.rss()),
      mb(process.memoryUsage().heapUsed),
      threads(),
      openFds(),
      (loopDelay.percentile(99) / 1e6).toFixed(1),
      (admitCalls / 1e6).toFixed(1),
      totals.transitions,
      totals.violations,
      crashes.length,
    ],
    ROW,
  );
  loopDelay.reset(); // each row's p99 covers the time since the previous row
  rows.push(line);
  console.log(line);
}

const started = performance.now();
const durationMs = MINUTES * 60_000;
console.log(
  `spend-sentinel soak: ${MINUTES} min, seed ${SEED}, ${nodes.length} sentinels, ` +
    `${KINDS.length} answer kinds, batch ${BATCH}`,
);
const HEADER = col(
  ['at', 'RSS MB', 'heap MB', 'threads', 'fds', 'loop p99 ms', 'admits M', 'transitions', 'viol', 'crash'],
  ROW,
);
console.log(HEADER);
row('start');

await new Promise((resolve) => {
  let minute = 1;
  const tick = () => {
    const elapsed = performance.now() - started;
    if (elapsed >= durationMs) return resolve();
    if (elapsed >= minute * 60_000) {
      row(clock(elapsed));
      minute += 1;
    }
    setTimeout(tick, Math.min(1000, durationMs - elapsed, minute * 60_000 - elapsed));
  };
  tick();
});

// ---------- end: stop the load, measure with the sentinels still open, then close ----------
stopping = true;
clearInterval(breakerTimer);
clearInterval(metricsTimer);
clearTimeout(phaseTimer);
readMetrics();
const elapsedMs = performance.now() - started;
row(`end ${clock(elapsedMs)}`);
const breakerStats = breaker.stats;
for (const node of nodes) node.sentinel.close();
await fake.close();

console.log('');
const NODE_ROW = [15, 6, 5, 10, 9, 5, 6, 6, 6, 6, 6];
console.log(
  col(['sentinel', 'budget', 'w s', 'max ledger', 'admitted', 'viol', 'trans', 'valid', 'inv', 'cap', 'indet'], NODE_ROW),
);
for (const n of nodes) {
  const r = n.refreshes;
  console.log(
    col(
      [
        n.name,
        n.budget,
        n.window,
        n.maxLedger,
        n.admitted,
        n.violations,
        n.transitions,
        r.valid,
        r.invalid_credential,
        r.capability_missing,
        r.indeterminate,
      ],
      NODE_ROW,
    ),
  );
}
const lagging = nodes.filter((n) => n.transitions !== n.metricTransitions);
if (lagging.length > 0) {
  // Listeners run within 50 ms of a change; the last one may not have arrived yet.
  const pairs = lagging.map((n) => `${n.transitions}/${n.metricTransitions}`).join(' ');
  console.log(`(transitions seen by listeners / counted in metrics: ${pairs})`.slice(0, 100));
}
console.log('');
console.log(`authority: ${phases} phases; requests answered per kind:`);
let line = ' ';
for (const k of KINDS) {
  const item = ` ${k} ${served[k]}`;
  if (line.length + item.length > 98) {
    console.log(line);
    line = ' ';
  }
  line += item;
}
console.log(line);
console.log(
  `breaker: fired ${calls.success + calls.failure + calls.refused}: ok ${calls.success}, ` +
    `failed ${calls.failure}, refused ${calls.refused}; opened ${breakerStats.opened}, ` +
    `timeouts ${breakerStats.timeouts}, state changes ${calls.stateChanges}`,
);
for (const c of crashes.slice(0, 5)) console.log(`crash: ${c}`.slice(0, 100));
for (const m of metricErrors.slice(0, 5)) console.log(`metrics error: ${m}`.slice(0, 100));

const violations = nodes.reduce((sum, n) => sum + n.violations, 0);
const failures = [];
if (violations > 0) failures.push(`${violations} ledger violation(s)`);
if (crashes.length > 0) failures.push(`${crashes.length} uncaught error(s)`);
if (metricErrors.length > 0) failures.push(`${metricErrors.length} malformed exposition(s)`);
const never = KINDS.filter((k) => served[k] === 0);
if (never.length > 0) console.log(`note: answer kinds never served (run longer): ${never.join(', ')}`);
console.log(failures.length === 0 ? 'PASS: no violation, no crash' : `FAIL: ${failures.join(', ')}`);
process.exit(failures.length === 0 ? 0 : 1);
