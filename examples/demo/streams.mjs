// The streams phase: one node serves streamed answers of random length (a model's answers, say),
// each paid for by a reservation, while the authority is silent: the evidence ages and nothing
// clears the ledger. An answer reserves its prompt and first chunk; as each chunk is produced
// (sent to the client) it records it (the first one with the prompt: the provider has read it
// once it answers) and extends by one chunk before it asks for the next. So an answer holds about
// one chunk, not its whole answer: what it sent is recorded usage (a valid answer to a refresh
// sent after the record would clear it; here none comes), what it may still send is held. It
// settles once its stream closed, with the provider's count of its whole usage:
// - an answer that ends by itself ends mid-chunk: the rest of the chunk it held is refunded;
// - an answer whose extend is refused is cancelled, but a cancel is not instant: the model goes
//   on generating until it arrives, and the provider bills that too (its usage report, read when
//   the stream closes, is the true count). So a cut-short answer settles above what it recorded
//   and held (it holds nothing then: its last chunk was recorded, the next one refused), and the
//   excess is overage: recorded all the same, never lost.
// A 50 ms tick on the wall clock drives it (a late timer catches up, so a loaded machine does not
// lower the demand) and a seeded generator draws the answers (the same ones on every run).
import { performance } from 'node:perf_hooks';

const TICK_MS = 50;
const CHUNK = 5; // units: the most a chunk costs (an answer's last one may cost less)
const CHUNK_TICKS = 4; // a chunk every 200 ms per answer: 25 units/s
const ARRIVAL = 0.15; // the chance of a new answer each tick: 3 a second
const PROMPT = [2, 6]; // units, known before the answer
const LENGTH = [3, 30]; // units of answer
const CANCEL_LAG = [1, 3]; // units the model generates before a cancel reaches it
// Demand: 3 answers a second × (4 + 16.5) units ≈ 60 units/s, 3 × r: started on an empty ledger,
// the budget fills about 1.5 s in, before evidence 2.5 s old at the start can reach w. Until then
// nothing depends on timing, and this seed's answers then always show completions (refunds) and
// answers cut short (overage); checked over every evidence age at the start a node can have (0 to
// 3 s: 4 completed, 3 cut short, refunded 10, overage 6, each time). A record moves units from the
// hold to the recorded part without changing the exposure, and no valid answer comes, so recording
// changes no admission: the same answers as when each held its whole answer until the settle,
// holding at most 31 units at once instead of 69.
const SEED = 18;

/** An LCG, plenty for a demo: the same sequence of answers on every run. */
function seeded(seed) {
  let state = seed >>> 0;
  return () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

const countIn = (counts, key) => (counts[key] = (counts[key] ?? 0) + 1);

/**
 * Starts serving on `sentinel`; `t()` is story time. `onCut({ t, id, reason, recorded, held, actual })`
 * runs for each answer cut short. `stop()` cancels the answers still open and returns what was seen.
 */
export function startStreams(sentinel, { t, onCut = () => {} }) {
  const random = seeded(SEED);
  const between = ([lo, hi]) => lo + Math.floor(random() * (hi - lo + 1));
  const open = new Set();
  const tally = {
    answers: 0, completed: 0, cut: 0, refused: 0, ended: 0, // ended: still open when the story ended
    // units: recorded = byRecord (each chunk as produced) + atSettle (the provider's count beyond it)
    admitted: 0, refunded: 0, overage: 0, recorded: 0, byRecord: 0, atSettle: 0,
    cutReasons: {}, refusedReasons: {},
  };
  const series = []; // { t, exposure, held, recorded, refunded, overage }
  const cuts = []; // { t, reason }
  const refusals = []; // { t, reason }
  const startExposure = sentinel.exposureUnits;
  const note = () => {
    const [exposure, held] = [sentinel.exposureUnits, sentinel.reservedUnits];
    series.push({ t: t(), exposure, held, recorded: exposure - held, refunded: tally.refunded, overage: tally.overage });
  };

  /** Records `units` `answer` has produced: they leave its hold (beyond it: overage). */
  const record = (answer, units) => {
    tally.overage += Math.max(0, units - answer.reservation.heldUnits);
    answer.reservation.record(units);
    tally.byRecord += units;
    tally.recorded += units;
  };
  /** Settles `answer` with its whole usage, `actual` units; returns { recorded, held } before it. */
  const settle = (answer, actual) => {
    const { heldUnits: held, recordedUnits: recorded } = answer.reservation;
    const fresh = Math.max(0, actual - recorded); // only what record did not report is new
    answer.reservation.settle(actual);
    tally.refunded += Math.max(0, held - fresh);
    tally.overage += Math.max(0, fresh - held);
    tally.atSettle += fresh;
    tally.recorded += fresh;
    open.delete(answer);
    return { recorded, held };
  };
  /** Cancels `answer`: what it produced, and what the model generated until the cancel reached it. */
  const cancel = (answer) => {
    const actual = answer.prompt + answer.done + answer.lag;
    return { ...settle(answer, actual), actual };
  };

  function arrive(tick) {
    // Every answer draws the same numbers, admitted or not, so the sequence never depends on timing.
    const answer = { id: (tally.answers += 1), prompt: between(PROMPT), length: between(LENGTH), lag: between(CANCEL_LAG), done: 0, next: tick + CHUNK_TICKS };
    answer.reservation = sentinel.reserve(answer.prompt + CHUNK);
    if (answer.reservation !== null) {
      tally.admitted += answer.prompt + CHUNK;
      open.add(answer);
      return;
    }
    const reason = sentinel.refusalReason(answer.prompt + CHUNK) ?? 'unknown';
    tally.refused += 1;
    countIn(tally.refusedReasons, reason);
    refusals.push({ t: t(), reason });
  }

  function produce(answer, tick) {
    const chunk = Math.min(CHUNK, answer.length - answer.done);
    // The chunk was sent: recorded now (the first with the prompt), never before it exists.
    record(answer, chunk + (answer.done === 0 ? answer.prompt : 0));
    answer.done += chunk;
    if (answer.done === answer.length) {
      tally.completed += 1;
      settle(answer, answer.prompt + answer.length);
    } else if (answer.reservation.extend(CHUNK)) {
      tally.admitted += CHUNK;
      answer.next = tick + CHUNK_TICKS;
    } else {
      const cut = { t: t(), reason: sentinel.refusalReason(CHUNK) ?? 'unknown' };
      tally.cut += 1;
      countIn(tally.cutReasons, cut.reason);
      cuts.push(cut);
      onCut({ ...cut, id: answer.id, ...cancel(answer) });
    }
  }

  const origin = performance.now();
  let tick = 0;
  note();
  const timer = setInterval(() => {
    for (const due = Math.floor((performance.now() - origin) / TICK_MS); tick <= due; tick += 1) {
      for (const answer of open) if (answer.next === tick) produce(answer, tick);
      if (random() < ARRIVAL) arrive(tick);
    }
    note();
  }, TICK_MS);

  return {
    /** Stops serving; the answers still open are cancelled (and settled) as the story ends. */
    stop() {
      clearInterval(timer);
      for (const answer of open) {
        tally.ended += 1;
        cancel(answer);
      }
      note();
      return { tally, series, cuts, refusals, startExposure, endExposure: sentinel.exposureUnits };
    },
  };
}
