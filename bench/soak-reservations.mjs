// Soak, reservations variant (`node --expose-gc bench/soak.mjs --reservations [--ops N]`): random
// admit / reserve / extend / settle / release / charge on one sentinel while its refreshes are
// answered (valid mostly, indeterminate often, a denial now and then), every operation checked
// against a model that knows the rules, not the addon's ledger:
//  - the ledger (`exposureUnits`) = units recorded after the evidence time (plain admissions,
//    settled usage, charges) + units held by open reservations; `reservedUnits` = the held part;
//    each reservation's `heldUnits` = what the model says it holds;
//  - admit, reserve and extend admit exactly when not closed, evidence exists, no denial, the
//    ledger is below the node budget and the ledger plus the units fit it (so nothing is ever
//    admitted past the budget);
//  - at every heap sample and at the end: admitted units, refunds and overage as the counters say.
// The model knows when a refresh was sent because the inspect function is ours: the addon marks
// the ledger just before it calls inspect, and applies an answer before it sends the next
// refresh. Operations run only while a refresh is in flight (between its inspect call and our
// answer), never between our answer and the next inspect call, so the model's mark is the
// addon's. Units are multiples of 1/4, so every sum is exact and the comparisons are `===`.
// Returns the list of failures (empty: passed); prints its progress rows and a summary.
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

const { Sentinel } = createRequire(import.meta.url)('../js/main.js');

/**
 * Operations between two refreshes: log-uniform in [1, EPOCH_MAX], ~72 000 on average (short and
 * long flights; a refresh waits at least 20 ms, so an epoch must be long for the run to be busy).
 * The ledger grows a few units an operation, so the node budget fills during a long flight, or a
 * run of answers that are not valid: about a quarter of the admissions asked are refused, and
 * refunds and overage meet the budget's edge.
 */
const EPOCH_MAX = 1_000_000;
const NODE_BUDGET = 2_000_000;
const MAX_OPEN = 1000;
/** Cumulative odds of each answer: valid, indeterminate, invalid_credential, capability_missing. */
const ANSWERS = [
  [0.6, 'valid'],
  [0.95, 'indeterminate'],
  [0.975, 'invalid_credential'],
  [1, 'capability_missing'],
];

export async function soakReservations({ ops, seed, random }) {
  const started = performance.now();
  // A sentinel does not keep the process alive (its refreshes are unref'd): this does, while we
  // wait for a refresh to be sent.
  const keepAlive = setInterval(() => {}, 60_000);
  let answerSent = null; // resolves the refresh in flight
  let sent = null; // resolves when the next inspect call (a send) happens
  let nextSend = new Promise((resolve) => (sent = resolve));
  const sentinel = new Sentinel({
    // w = node budget / r = one day: the evidence never ages out during a soak.
    budget: { unverifiedUnits: NODE_BUDGET, maxUnitsPerSecond: NODE_BUDGET / 86_400 },
    refresh: { minIntervalMs: 20, maxIntervalMs: 30, timeoutMs: 600_000 },
    authority: {
      inspect: () =>
        new Promise((resolve) => {
          answerSent = resolve;
          sent();
        }),
    },
  });

  const model = {
    recorded: 0, // recorded after the evidence time
    held: 0, // by open reservations
    mark: 0, // recorded at the send of the refresh in flight
    evidence: false,
    denied: false,
    closed: false,
    admits(units) {
      const ledger = this.recorded + this.held;
      return !this.closed && this.evidence && !this.denied && ledger < NODE_BUDGET && ledger + units <= NODE_BUDGET;
    },
    answered(outcome) {
      if (outcome === 'valid') {
        this.evidence = true;
        this.denied = false;
        this.recorded -= this.mark;
      } else if (outcome !== 'indeterminate') {
        this.denied = true;
      }
    },
  };
  const totals = { ops: 0, admitted: 0, refused: 0, refunded: 0, overage: 0, settled: 0, refreshes: 0, busyMs: 0, maxOpen: 0, asked: 0 };
  const violations = { decision: 0, ledger: 0, reserved: 0, heldUnits: 0, counters: 0, thrown: 0 };
  const firstViolations = [];
  const violation = (kind, detail) => {
    violations[kind] += 1;
    if (firstViolations.length < 5) firstViolations.push(`${kind} at op ${totals.ops}: ${detail}`);
  };
  const open = []; // { reservation, held }

  const units = () => Math.floor(random() * 41) / 4; // 0 … 10 in quarters
  const pick = () => Math.floor(random() * open.length);
  const take = (i) => {
    const entry = open[i];
    open[i] = open[open.length - 1];
    open.pop();
    return entry;
  };

  /** admit, reserve or extend of `u`: whether the addon and the model agree, counted. */
  function decided(got, u, what) {
    totals.asked += 1;
    const want = model.admits(u);
    if (got !== want) violation('decision', `${what}(${u}) answered ${got}, the model ${want} (ledger ${model.recorded + model.held})`);
    if (got) totals.admitted += u;
    else totals.refused += 1;
    return got;
  }

  function settle(entry, actual) {
    if (entry.reservation.heldUnits !== entry.held) violation('heldUnits', `${entry.reservation.heldUnits} held, the model ${entry.held}`);
    if (actual === undefined) entry.reservation.release();
    else entry.reservation.settle(actual);
    const used = actual ?? 0;
    model.held -= entry.held;
    model.recorded += used;
    totals.refunded += Math.max(0, entry.held - used);
    totals.overage += Math.max(0, used - entry.held);
    totals.settled += 1;
  }

  function step() {
    const k = random();
    if (k < 0.25) {
      const u = units();
      if (decided(sentinel.admit(u), u, 'admit')) model.recorded += u;
    } else if (open.length === 0 || (k < 0.5 && open.length < MAX_OPEN)) {
      const u = units();
      const reservation = sentinel.reserve(u);
      if (decided(reservation !== null, u, 'reserve') && reservation !== null) {
        open.push({ reservation, held: u });
        model.held += u;
        if (open.length > totals.maxOpen) totals.maxOpen = open.length;
      }
    } else if (k < 0.7) {
      const u = units();
      const entry = open[pick()];
      if (decided(entry.reservation.extend(u), u, 'extend')) {
        entry.held += u;
        model.held += u;
      }
    } else if (k < 0.88) {
      const entry = take(pick());
      settle(entry, Math.floor(random() * (8 * entry.held + 1)) / 4); // 0 … 2 × held
    } else if (k < 0.95) {
      settle(take(pick()));
    } else {
      const u = units();
      sentinel.charge(u);
      model.recorded += u;
      totals.overage += u;
    }
  }

  /** The ledger read-outs against the model, after every operation. */
  function checkLedger() {
    const exposure = sentinel.exposureUnits;
    if (exposure !== model.recorded + model.held) violation('ledger', `exposure ${exposure}, the model ${model.recorded} + ${model.held}`);
    const reserved = sentinel.reservedUnits;
    if (reserved !== model.held) violation('reserved', `reservedUnits ${reserved}, the model ${model.held}`);
  }

  /** The counters of metricFamilies() against the model's totals. */
  function checkCounters(where) {
    const value = (name) => sentinel.metricFamilies().find((f) => f.name === name).samples.reduce((sum, s) => sum + s.value, 0);
    const seen = {
      admitted: value('spend_sentinel_admitted_units_total'),
      refused: value('spend_sentinel_refused_total'),
      refunded: value('spend_sentinel_refunded_units_total'),
      overage: value('spend_sentinel_overage_units_total'),
    };
    for (const [name, figure] of Object.entries(seen)) {
      if (figure !== totals[name]) violation('counters', `${where}: ${name} ${figure}, the model ${totals[name]}`);
    }
  }

  const heap = [];
  const sampleEvery = Math.max(2 ** 20, Math.ceil(ops / 24));
  let nextSample = 0;
  const mb = (bytes) => (bytes / 2 ** 20).toFixed(2);
  function sample() {
    global.gc?.();
    heap.push(process.memoryUsage().heapUsed);
    checkCounters(`op ${totals.ops}`);
    const seconds = (performance.now() - started) / 1000;
    const bad = Object.values(violations).reduce((a, b) => a + b, 0);
    console.log(
      [
        `${(totals.ops / 1e6).toFixed(1)} M ops`.padStart(12),
        `${seconds.toFixed(0)} s`.padStart(7),
        `${mb(heap.at(-1))} MB heap`.padStart(14),
        `${open.length} open`.padStart(10),
        `ledger ${model.recorded + model.held}`.padStart(16),
        `${totals.refreshes} refreshes`.padStart(16),
        `${bad} viol`.padStart(8),
      ].join(' '),
    );
  }

  const drawAnswer = () => {
    const x = random();
    return ANSWERS.find(([upTo]) => x < upTo)[1];
  };

  console.log(`spend-sentinel soak, reservations: ${ops.toLocaleString()} operations, seed ${seed}, node budget ${NODE_BUDGET}`);
  let outcome = null; // the answer of the refresh in flight, once given
  while (totals.ops < ops) {
    await nextSend;
    nextSend = new Promise((resolve) => (sent = resolve));
    if (outcome !== null) model.answered(outcome);
    model.mark = model.recorded;
    const epoch = Math.min(ops - totals.ops, Math.floor(Math.exp(random() * Math.log(EPOCH_MAX))));
    const busySince = performance.now();
    for (let i = 0; i < epoch; i += 1) {
      try {
        step();
      } catch (err) {
        violation('thrown', `${err.code ?? ''} ${err.message}`);
      }
      totals.ops += 1;
      checkLedger();
      if (totals.ops >= nextSample) {
        sample();
        nextSample += sampleEvery;
      }
    }
    totals.busyMs += performance.now() - busySince;
    outcome = drawAnswer();
    totals.refreshes += 1;
    answerSent(outcome);
  }

  // Closed: nothing is admitted; settling and charging still record.
  sentinel.close();
  model.closed = true;
  answerSent('indeterminate'); // the loop has stopped: this answer is applied to nothing
  if (open.length > 0) decided(open[0].reservation.extend(1), 1, 'extend after close');
  decided(sentinel.reserve(0) !== null, 0, 'reserve after close');
  while (open.length > 0) {
    const entry = take(open.length - 1);
    settle(entry, open.length % 2 === 0 ? entry.held * 2 : undefined);
    checkLedger();
  }
  sentinel.charge(2.5);
  model.recorded += 2.5;
  totals.overage += 2.5;
  checkLedger();
  sample();

  clearInterval(keepAlive);
  const seconds = (performance.now() - started) / 1000;
  const bad = Object.entries(violations).filter(([, n]) => n > 0);
  console.log('');
  console.log(
    `${totals.ops.toLocaleString()} operations in ${seconds.toFixed(0)} s (${(totals.ops / seconds / 1e6).toFixed(2)} M/s), ` +
      `${(totals.busyMs / 1000).toFixed(0)} s of it operating, the rest waiting for refreshes; ${totals.refreshes} refreshes; ` +
      `admitted ${totals.admitted} units; refused ${totals.refused} of ${totals.asked} asked ` +
      `(${((100 * totals.refused) / totals.asked).toFixed(0)}%); ` +
      `${totals.settled} settled (at most ${totals.maxOpen} open): refunded ${totals.refunded}, overage ${totals.overage}`,
  );
  console.log(`heap after gc: first ${mb(heap[0])} MB, last ${mb(heap.at(-1))} MB, max ${mb(Math.max(...heap))} MB (${heap.length} samples)`);
  console.log(`violations: ${bad.length === 0 ? 'none' : bad.map(([k, n]) => `${k} ${n}`).join(', ')}`);
  for (const line of firstViolations) console.log(`  ${line}`.slice(0, 160));
  return bad.map(([kind, n]) => `${n} ${kind} violation(s)`);
}
