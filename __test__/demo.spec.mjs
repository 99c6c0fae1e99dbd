// The demo, as `npm run demo -- --fast` runs it after its build step: `node examples/demo.mjs
// --fast` (the addon must be built; `npm test` builds it first, and a test run never rebuilds the
// addon other suites are loading). A test checks that the `demo` script is that build and this
// command. The printed story is parsed and checked per node, and the SVG it writes is checked for
// well-formed XML with both nodes' status bands; the streams phase (node-a's streamed answers
// through reservations, each chunk recorded as produced, the authority silent) is checked in its
// printed figures and its panel, where the recorded units and the held ones are drawn apart.
//
// Lines parsed (written by examples/demo/report.mjs; every other line is ignored). Every line the
// demo prints is at most 100 columns:
//   == <t>s  <phase>: <what the authority does>            a phase starts; t in story seconds, 2 decimals
//        t <node> status / reason  age units │ <node> …     the column header: the nodes' order
//   <t>s <status> <reason> <age>s <u>/<b> │ <status> …      a sample every 0.5 s: GET /ready of each
//                                                          node, age = evidence_age_seconds (1 decimal,
//                                                          "—" without evidence), u = sentinel.exposureUnits
//            ↳ <node>  <from> → <to> (<reason>)  at <t>s, evidence age <age>s   a transition (onTransition)
//            ↳ <node>  #<n> cut short at <t>s (<reason>): recorded R, billed B, overage O
//   == <t>s  end of the story: …
//     <node>  admitted N  refused N  max unverified N/B
//             not_ready X s into the silence, Y s after <node>'s last answered refresh (Ts)
//     <node>  N answers streamed: completed N, cut short N, refused N, open at the end N
//             units admitted A (reserve + extend), refunded F, overage O: recorded R
//             recorded as produced (record) P, beyond it at the close (settle) S
//             held by open reservations: peak H at Ts; recorded: peak R at Ts
//             exposure X at the start, Y at the end …
//             exposure ≤ node budget + overage so far at all N readings; max M/B at Ts
//             the sentinel's counters: refunded F, overage O, reserved H
//   timeline: <path of the SVG>
// A line belongs to the phase whose "==" line was printed last before it.
//
// Timing: the story plays on real time, so what it printed is checked for order (what happened in
// which phase), for rules that hold at any speed (an evidence_too_old node's evidence is at least
// w old, a degraded one's younger) and for the drawing agreeing with the printed figures; never
// for how soon something followed something else. That the cutoff comes at the very moment the
// evidence is w old is tested on fake time (src/refresher/cadence_tests.rs,
// the_change_to_not_ready_is_reported_the_moment_the_window_runs_out_with_no_refresh_near_it).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { XMLValidator, XMLParser } from 'fast-xml-parser';
import { runCommand, runNode } from './helpers/wait.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const NODES = ['node-a', 'node-b'];
const WINDOW = 5; // seconds: the seed example's stale window
// Generous: the fast story takes ~24 s.
const RUN_TIMEOUT_MS = 120_000;

const PHASE = /^== (\d+\.\d+)s {2}([a-z]+)/;
const HEADER = /^\s+t (node-[ab]) status \/ reason .*│ (node-[ab]) status \/ reason /;
const SAMPLE = /^\s*(\d+\.\d)s ((?:ready|degraded|not_ready) .*)$/;
const CELL = /^(ready|degraded|not_ready)\s+([a-z_]+)\s+(—|\d+\.\d)s?\s+(\d+)\/(\d+)$/;
const TRANSITION = /↳ (node-[ab]) {2}(\w+) → (\w+) \((\w+)\) {2}at (\d+\.\d+)s, evidence age (—|\d+\.\d+)s?/;
const SUMMARY = /^\s+(node-[ab]) {2}admitted (\d+) {2}refused (\d+).*max unverified (\d+)\/(\d+)/;
const CUTOFF = /not_ready (\d+\.\d+) s into the silence, (\d+\.\d+) s after (node-[ab])'s last answered refresh/;
const CUT = /↳ (node-[ab]) {2}#(\d+) cut short at (\d+\.\d+)s \((\w+)\): recorded (\d+), billed (\d+), overage (\d+)$/;
const STREAMED = /^\s+(node-[ab]) {2}(\d+) answers streamed: completed (\d+), cut short (\d+), refused (\d+), open at the end (\d+)$/;
const STREAM_UNITS = /^\s+units admitted (\d+) \(reserve \+ extend\), refunded (\d+), overage (\d+): recorded (\d+)$/;
const STREAM_RECORD = /^\s+recorded as produced \(record\) (\d+), beyond it at the close \(settle\) (\d+)$/;
const STREAM_SPLIT = /^\s+held by open reservations: peak (\d+) at (\d+\.\d+)s; recorded: peak (\d+) at (\d+\.\d+)s$/;
const STREAM_EXPOSURE = /^\s+exposure (\d+) at the start, (\d+) at the end/;
const STREAM_BOUND = /^\s+exposure (≤|>) node budget \+ overage so far at (?:all (\d+)|\d+ of (\d+)) readings(?:; max (\d+)\/(\d+))?/;
const STREAM_COUNTERS = /^\s+the sentinel's counters: refunded (\d+), overage (\d+), reserved (\d+)$/;
const COLUMNS = 100;

const num = (s) => (s === '—' ? null : Number(s));

/**
 * { phases: [{ name, t }], seen: { node: [{ kind, t, phase, status, reason, age, units, budget }] }, summary,
 *   cuts: [{ node, id, t, phase, reason, recorded, billed, overage }], streams: { node, answers, …, counters }, svg }
 */
function parseStory(stdout) {
  const story = { phases: [], seen: Object.fromEntries(NODES.map((n) => [n, []])), summary: {}, cuts: [], streams: null, svg: null };
  const ints = (m) => m.slice(1).map((v) => (/^\d+(\.\d+)?$/.test(v) ? Number(v) : v)); // the groups, numbers as numbers
  let phase = null;
  let order = null; // the nodes, in the order of the sample cells
  for (const line of stdout.split('\n')) {
    let m;
    if ((m = HEADER.exec(line))) {
      order = [m[1], m[2]];
    } else if ((m = PHASE.exec(line))) {
      phase = m[2];
      story.phases.push({ name: phase, t: Number(m[1]) });
    } else if ((m = SAMPLE.exec(line))) {
      const t = Number(m[1]);
      m[2].split(' │ ').forEach((cell, i) => {
        const [, status, reason, age, units, budget] = CELL.exec(cell.trim()) ?? [];
        if (status && order) story.seen[order[i]].push({ kind: 'sample', t, phase, status, reason, age: num(age), units: Number(units), budget: Number(budget) });
      });
    } else if ((m = CUT.exec(line))) {
      const [node, id, t, reason, recorded, billed, overage] = ints(m);
      story.cuts.push({ node, id, t, phase, reason, recorded, billed, overage });
    } else if ((m = STREAMED.exec(line))) {
      const [node, answers, completed, cut, refused, ended] = ints(m);
      story.streams = { node, answers, completed, cut, refused, ended };
    } else if ((m = STREAM_UNITS.exec(line))) {
      const [admitted, refunded, overage, recorded] = ints(m);
      Object.assign(story.streams, { admitted, refunded, overage, recorded });
    } else if ((m = STREAM_RECORD.exec(line))) {
      const [byRecord, atSettle] = ints(m);
      Object.assign(story.streams, { byRecord, atSettle });
    } else if ((m = STREAM_SPLIT.exec(line))) {
      const [held, heldAt, recorded, recordedAt] = ints(m);
      story.streams.peaks = { held, heldAt, recorded, recordedAt };
    } else if ((m = STREAM_EXPOSURE.exec(line))) {
      const [start, end] = ints(m);
      story.streams.exposure = { start, end };
    } else if ((m = STREAM_BOUND.exec(line))) {
      const [, within, all, of, max, budget] = m;
      story.streams.bound = { within: within === '≤', readings: Number(all ?? of), max: Number(max), budget: Number(budget) };
    } else if ((m = STREAM_COUNTERS.exec(line))) {
      const [refunded, overage, reserved] = ints(m);
      story.streams.counters = { refunded, overage, reserved };
    } else if ((m = TRANSITION.exec(line))) {
      const [, node, from, status, reason, t, age] = m;
      story.seen[node].push({ kind: 'transition', t: Number(t), phase, from, status, reason, age: num(age) });
    } else if ((m = SUMMARY.exec(line))) {
      const [, node, admitted, refused, max, budget] = m.map((v, i) => (i === 1 ? v : Number(v)));
      story.summary[node] = { admitted, refused, max, budget };
    } else if ((m = CUTOFF.exec(line))) {
      Object.assign(story.summary[m[3]], { afterSilence: Number(m[1]), afterLastValid: Number(m[2]) });
    } else if ((m = /^timeline: (.+)$/.exec(line))) {
      story.svg = m[1];
    }
  }
  return story;
}

/** Runs `node examples/demo.mjs <args>` in the repository; kills its whole process group on timeout. */
function runDemo(args) {
  return runCommand(process.execPath, ['examples/demo.mjs', ...args], { cwd: root, timeoutMs: RUN_TIMEOUT_MS, group: true });
}

const key = (s) => `${s.status}/${s.reason}`;
const ALLOWED = {
  healthy: ['ready/verified'],
  // the cutoff: evidence_too_old at age 5 s; budget_exhausted (degraded: it refuses requests, not
  // the pod) a few ms before when the 100th unverified unit lands first (at 20 units/s both come at w)
  silent: ['ready/verified', 'degraded/refresh_indeterminate', 'not_ready/evidence_too_old', 'degraded/budget_exhausted'],
  back: ['not_ready/evidence_too_old', 'ready/verified'],
  revoked: ['ready/verified', 'not_ready/invalid_credential'],
  restored: ['not_ready/invalid_credential', 'ready/verified'],
  // silent again: node-a's streamed answers fill its budget (overage takes it past), node-b's
  // plain requests as in the first silence
  streams: ['ready/verified', 'degraded/refresh_indeterminate', 'not_ready/evidence_too_old', 'degraded/budget_exhausted'],
};
const STORY = [
  ['healthy', 'ready/verified'],
  ['silent', 'degraded/refresh_indeterminate'],
  ['silent', 'not_ready/evidence_too_old'],
  ['back', 'ready/verified'],
  ['revoked', 'not_ready/invalid_credential'],
  ['restored', 'ready/verified'],
];

let run;
let story;
let outDir;
before(async () => {
  outDir = mkdtempSync(join(tmpdir(), 'spend-sentinel-demo-'));
  run = await runDemo(['--fast', '--out', join(outDir, 't.svg')]);
  story = parseStory(run.stdout);
}, { timeout: RUN_TIMEOUT_MS + 10_000 });
after(() => rmSync(outDir, { recursive: true, force: true }));

const failure = () => `exit ${run.code} signal ${run.signal} timedOut ${run.timedOut}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;

test('`npm run demo` checks its tools, builds, then runs node examples/demo.mjs with its arguments (so `npm run demo -- --fast` plays the story below)', () => {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  assert.equal(scripts.demo, 'node scripts/demo.mjs');
  const steps = readFileSync(join(root, 'scripts', 'demo.mjs'), 'utf8');
  const order = ['preflight(', "['scripts/build.mjs']", "['examples/demo.mjs', ...args]"].map((step) => steps.indexOf(step));
  assert.ok(order.every((at, i) => at > 0 && (i === 0 || at > order[i - 1])), `scripts/demo.mjs: preflight, build, then the demo with its arguments (${order})`);
});

test('node examples/demo.mjs --fast plays the whole story and exits 0 on its own', () => {
  assert.equal(run.timedOut, false, failure());
  assert.equal(run.code, 0, failure());
  assert.deepEqual(story.phases.map((p) => p.name), ['healthy', 'silent', 'back', 'revoked', 'restored', 'streams', 'end'], failure());
  for (const node of NODES) assert.ok(story.seen[node].filter((s) => s.kind === 'sample').length >= 30, `${node}: samples every 0.5 s`);
  assert.match(run.stdout, /node budget = b × share = 200 × 1\/2 = 100 units$/m);
  assert.match(run.stdout, /stale window w = node budget \/ r = 100 \/ 20 = 5 s$/m);
});

test(`every line the demo prints is at most ${COLUMNS} columns`, () => {
  const lines = run.stdout.split('\n');
  assert.ok(lines[0].startsWith('spend-sentinel demo:'), failure());
  assert.ok(lines.length > 50, `${lines.length} lines`);
  const wide = lines.filter((line) => [...line].length > COLUMNS); // columns: code points, not UTF-8 bytes
  assert.deepEqual(wide.map((line) => `${[...line].length}: ${line}`), [], `lines over ${COLUMNS} columns`);
});

for (const node of NODES) {
  test(`${node}: ready → degraded → not_ready (evidence_too_old) → ready → not_ready (invalid_credential) → ready, each in its phase`, () => {
    const seen = story.seen[node];
    for (const s of seen) {
      assert.ok(ALLOWED[s.phase === 'end' ? 'streams' : s.phase]?.includes(key(s)), `${node} ${key(s)} during ${s.phase} at ${s.t}s\n${failure()}`);
    }
    let i = 0;
    for (const [phase, state] of STORY) {
      while (i < seen.length && !(seen[i].phase === phase && key(seen[i]) === state)) i += 1;
      assert.ok(i < seen.length, `${node}: no ${state} during ${phase} after the earlier steps\n${failure()}`);
    }
    const restored = seen.filter((s) => s.phase === 'restored');
    assert.equal(key(restored.at(-1)), 'ready/verified', `${node} is ready when the streams phase starts`);
  });

  test(`${node}: cut off during the silence, when its evidence is 5 s old`, () => {
    const seen = story.seen[node];
    // The transition, printed after the silence began and before it ended.
    const cut = seen.find((s) => s.kind === 'transition' && s.phase === 'silent' && s.status === 'not_ready');
    assert.ok(cut, `${node} went not_ready while the authority was silent\n${failure()}`);
    assert.equal(cut.reason, 'evidence_too_old');
    // Not before the window ran out, on the sentinel's own clock (ages print with 2 decimals, and
    // one of at least 5.000 s prints at least 5.00).
    assert.ok(cut.age >= WINDOW, `${node} cut off at evidence age ${cut.age} s, before the ${WINDOW} s window ran out`);
    // The authority's account: it last answered this node before the silence, and the cut came after.
    const { afterSilence, afterLastValid } = story.summary[node];
    assert.ok(afterSilence >= 0 && afterLastValid > afterSilence, `${node}: cut ${afterSilence} s into the silence, ${afterLastValid} s after the last answered refresh`);
    // The samples agree: degraded while younger than w, evidence_too_old from w on.
    const silent = seen.filter((s) => s.kind === 'sample' && s.phase === 'silent');
    // (ages print with 1 decimal: a degraded sample at 4.96 s shows 5.0)
    for (const s of silent.filter((x) => x.status === 'degraded')) assert.ok(s.age <= WINDOW, `${node} degraded at age ${s.age}`);
    const old = silent.filter((s) => s.reason === 'evidence_too_old');
    assert.ok(old.length > 0, `${node}: a sample shows evidence_too_old during the silence`);
    for (const s of old) assert.ok(s.age >= WINDOW, `${node} evidence_too_old at age ${s.age}`);
  });

  test(`${node}: unverified units never above the node budget (while it streams: plus the overage it recorded)`, () => {
    const samples = story.seen[node].filter((s) => s.kind === 'sample');
    const streaming = story.streams?.node === node;
    for (const s of samples) {
      assert.equal(s.budget, 100);
      const overage = streaming && ['streams', 'end'].includes(s.phase) ? story.streams.overage : 0;
      assert.ok(s.units <= s.budget + overage, `${node} ${s.units}/${s.budget} (overage ${overage}) at ${s.t}s`);
    }
    const { max, budget, admitted, refused } = story.summary[node];
    assert.equal(budget, 100);
    // (How near the silence brings the peak to the budget depends on how many of the 20 requests a
    // second the process got to serve in time: not checked.)
    assert.ok(max <= budget && max > 0, `${node} peak ${max}/${budget}`);
    assert.ok(admitted > 0 && refused > 0, `${node} admitted ${admitted}, refused ${refused}`);
  });
}

/** The SVG the demo wrote, parsed: elements with an id, by id. */
function svgById() {
  const xml = readFileSync(story.svg, 'utf8');
  const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => ['g', 'rect', 'line', 'polyline', 'text', 'path'].includes(name) }).parse(xml);
  const byId = new Map();
  (function walk(value) {
    if (Array.isArray(value)) return value.forEach(walk);
    if (value === null || typeof value !== 'object') return;
    if (typeof value.id === 'string') byId.set(value.id, value);
    Object.values(value).forEach(walk);
  })(doc.svg);
  return byId;
}
const textOf = (t) => String(typeof t === 'object' ? t['#text'] : t);

/** The picture's time scale, read off a time axis's labelled ticks ("0 s", "2 s", …): t → x. */
function timeScale(byId, id = 'time-axis') {
  const axis = byId.get(id);
  const ticks = (axis.text ?? []).map((t) => [Number(/^(\d+) s$/.exec(textOf(t))?.[1]), Number(t.x)]).filter(([t]) => Number.isFinite(t));
  assert.ok(ticks.length >= 5, `labelled ticks on the time axis: ${JSON.stringify(ticks)}`);
  const [[t0, x0], [t1, x1]] = [ticks[0], ticks.at(-1)];
  const perSecond = (x1 - x0) / (t1 - t0);
  return { perSecond, x: (t) => x0 + (t - t0) * perSecond, t: (x) => t0 + (x - x0) / perSecond };
}

test('the SVG is well-formed XML with both nodes’ status bands, their unverified units and the budget line', () => {
  assert.equal(story.svg, join(outDir, 't.svg'));
  const xml = readFileSync(story.svg, 'utf8');
  const valid = XMLValidator.validate(xml);
  assert.equal(valid, true, JSON.stringify(valid));
  const byId = svgById();
  for (const node of NODES) {
    const band = byId.get(`${node}-status`);
    assert.ok(band, `${node}-status band`);
    const statuses = new Set(band.rect.map((r) => r.class.replace('status status-', '')));
    assert.deepEqual([...statuses].sort(), ['degraded', 'not_ready', 'ready'], `${node} band statuses`);
    const line = byId.get(`${node}-unverified`);
    assert.ok(line?.points.split(' ').length >= 100, `${node} unverified units line`);
  }
  const budget = byId.get('budget-line');
  assert.equal(budget?.class, 'budget');
  assert.ok(budget['stroke-dasharray'], 'the budget line is dashed');
  for (const id of ['phases', 'time-axis', 'legend', 'unverified-chart']) assert.ok(byId.has(id), id);
});

test('the SVG: every status band’s reason is in the legend, as "status: reason"', () => {
  const byId = svgById();
  const legend = new Set((byId.get('legend').text ?? []).map(textOf));
  const shown = new Set();
  for (const node of NODES) {
    for (const rect of byId.get(`${node}-status`).rect) {
      const status = rect.class.replace('status status-', '');
      assert.ok(rect['data-reason'], `${node}: a band without its reason`);
      shown.add(`${status}: ${rect['data-reason']}`);
    }
  }
  for (const entry of shown) assert.ok(legend.has(entry), `legend lacks "${entry}" (legend: ${[...legend].join(' | ')})`);
  for (const entry of ['ready: verified', 'degraded: refresh_indeterminate', 'not_ready: evidence_too_old', 'not_ready: invalid_credential']) {
    assert.ok(shown.has(entry), `the story shows ${entry}`);
  }
});

test('the SVG: a time axis ticked every second, and w marked from the last answered refresh to not_ready', () => {
  const byId = svgById();
  const scale = timeScale(byId);
  // The axis spans the planned story (the header's "story (T s)"), whatever time it took to play.
  const total = Number(/^story \((\d+(?:\.\d+)?) s\)/m.exec(run.stdout)?.[1]);
  assert.ok(total > 0, `the planned story length in the header\n${failure()}`);
  assert.ok(byId.get('time-axis').line.length - 1 >= Math.floor(total) + 1, 'a tick every second (plus the axis line)');
  const silentAt = story.phases.find((p) => p.name === 'silent').t;
  for (const node of NODES) {
    const mark = byId.get(`${node}-window`);
    assert.ok(mark, `${node}-window`);
    const span = mark.line.find((l) => l.class === 'window-span');
    const [from, to] = [scale.t(Number(span.x1)), scale.t(Number(span.x2))];
    assert.ok(Math.abs(to - from - WINDOW) < 0.05, `${node}: the window spans ${(to - from).toFixed(2)} s on the time axis, not ${WINDOW}`);
    assert.match(mark.text.map(textOf).join(' '), new RegExp(`w = ${WINDOW} s`));
    assert.equal(mark.line.filter((l) => l.class === 'age-tick').length, WINDOW - 1, 'a tick per second of evidence age');
    // It starts at the last refresh the authority answered before the silence …
    const answered = byId.get(`${node}-refreshes`).rect.filter((r) => r.class === 'refresh refresh-valid').map((r) => scale.t(Number(r.x) + Number(r.width) / 2));
    const lastBefore = answered.filter((t) => t < silentAt).at(-1);
    assert.ok(Math.abs(from - lastBefore) < 0.05, `${node}: window from ${from.toFixed(2)} s, last answered refresh at ${lastBefore?.toFixed(2)} s`);
    // … and the band turns not_ready after it starts, where the demo first saw this node not_ready
    // in the silence (a sample or the transition: the printed times have 1 or 2 decimals).
    const cut = byId.get(`${node}-status`).rect.find((r) => r.class === 'status status-not_ready' && scale.t(Number(r.x)) > silentAt);
    assert.ok(cut, `${node}: not_ready after the silence in the band`);
    const cutAt = scale.t(Number(cut.x));
    const firstSeen = Math.min(...story.seen[node].filter((s) => s.phase === 'silent' && s.status === 'not_ready').map((s) => s.t));
    assert.ok(cutAt > from, `${node}: band not_ready at ${cutAt.toFixed(2)} s, before the window starts at ${from.toFixed(2)} s`);
    assert.ok(Math.abs(cutAt - firstSeen) <= 0.06, `${node}: band not_ready at ${cutAt.toFixed(2)} s, first seen not_ready at ${firstSeen} s`);
  }
});

test('the SVG: every refused request is drawn, at the time and for the reason it was refused', () => {
  const byId = svgById();
  const scale = timeScale(byId);
  const phase = (name) => {
    const i = story.phases.findIndex((p) => p.name === name);
    return { from: story.phases[i].t, to: story.phases[i + 1].t };
  };
  // From the phase that causes a reason to the end of the one that follows it: a phase takes
  // effect at a node's next refresh (the story shows each node recovered within that next phase).
  const through = (first, next) => ({ from: phase(first).from, to: next ? phase(next).to : phase(first).to });
  const silences = [through('silent', 'back'), through('streams')];
  const during = { evidence_too_old: silences, budget_exhausted: silences, invalid_credential: [through('revoked', 'restored')] };
  for (const node of NODES) {
    const marks = byId.get(`${node}-refused`)?.rect ?? [];
    assert.equal(marks.length, story.summary[node].refused, `${node}: one mark per refused request`);
    assert.ok(marks.length > 0);
    for (const mark of marks) {
      const t = scale.t(Number(mark.x) + Number(mark.width) / 2);
      const when = during[mark['data-reason']];
      assert.ok(when, `${node}: refused for ${mark['data-reason']}`);
      assert.ok(when.some((w) => t >= w.from - 0.1 && t <= w.to + 0.1), `${node}: ${mark['data-reason']} refusal drawn at ${t.toFixed(2)} s`);
    }
  }
});

test('streams: node-a streams answers through reservations, each chunk recorded once produced, the authority silent: some complete (the rest of their last chunk refunded), some are cut short (billed above what they recorded: overage), each holds about a chunk, and the figures add up', () => {
  const s = story.streams;
  assert.ok(s?.exposure && s.bound && s.counters && s.peaks, `the streams figures\n${failure()}`);
  assert.equal(s.node, 'node-a');
  assert.equal(s.answers, s.completed + s.cut + s.refused + s.ended, 'every answer counted once');
  assert.ok(s.completed > 0 && s.refunded > 0, `completed ${s.completed}, refunded ${s.refunded}`);
  assert.ok(s.cut > 0, `cut short ${s.cut}`);
  // A line per answer cut short, during the phase, each billed above what it recorded (it holds
  // nothing then: its last chunk was recorded and the extend for the next one refused).
  assert.equal(story.cuts.length, s.cut);
  for (const c of story.cuts) {
    assert.equal(c.phase, 'streams', JSON.stringify(c));
    assert.ok(c.billed > c.recorded && c.overage === c.billed - c.recorded, JSON.stringify(c));
  }
  assert.ok(s.overage >= story.cuts.reduce((sum, c) => sum + c.overage, 0), `overage ${s.overage}`);
  // Admitted, less what was refunded, plus the overage, is what was recorded; the addon counted the same.
  assert.equal(s.recorded, s.admitted - s.refunded + s.overage);
  assert.deepEqual(s.counters, { refunded: s.refunded, overage: s.overage, reserved: 0 }, 'the sentinel’s own counters');
  // Recorded chunk by chunk as produced; the settles added only the provider's count beyond it.
  assert.equal(s.byRecord + s.atSettle, s.recorded, `record ${s.byRecord} + settle ${s.atSettle}`);
  assert.ok(s.byRecord > s.atSettle, `recorded as produced ${s.byRecord}, at the settles ${s.atSettle}`);
  // Held and recorded apart: the answers hold about a chunk each (holding their whole answers
  // instead, the same answers hold up to ~70 units), and the recorded part, which nothing clears
  // in the silence, is the whole exposure at the end.
  assert.ok(s.peaks.recorded > 0 && s.peaks.held > 0, JSON.stringify(s.peaks));
  assert.ok(s.peaks.held < s.bound.budget / 2, `held at most ${s.peaks.held} of ${s.bound.budget}`);
  assert.equal(s.peaks.recorded, s.exposure.end, 'at the end nothing is held and nothing was cleared');
  // The restore's valid answer emptied node-a's ledger; the silence cleared nothing after it.
  assert.equal(s.exposure.start, 0, 'node-a starts streaming on an empty ledger');
  assert.equal(s.exposure.end, s.exposure.start + s.recorded, 'all the recorded usage is still exposure');
  // Admission kept the ledger within the node budget; only the overage took it past.
  assert.ok(s.bound.within, 'exposure ≤ node budget + overage so far at every reading');
  assert.equal(s.bound.budget, 100);
  assert.ok(s.bound.max <= s.bound.budget + s.overage, `max exposure ${s.bound.max}, overage ${s.overage}`);
});

test('the SVG: the streams panel draws the exposure under node budget + overage so far at every reading, stacked as the recorded units under the held ones, the refunds and the overage, and every answer cut short or refused, at its time', () => {
  const byId = svgById();
  const s = story.streams;
  const points = (id) => byId.get(id).points.split(' ').map((p) => p.split(',').map(Number));
  const [exposure, bound] = [points('streams-exposure'), points('streams-bound')];
  assert.equal(exposure.length, s.bound.readings, 'a point per reading');
  assert.equal(bound.length, exposure.length);
  // y grows downwards: never above the bound (at equal readings the points coincide)
  exposure.forEach(([x, y], i) => assert.ok(x === bound[i][0] && y >= bound[i][1], `reading ${i}: exposure at y ${y}, bound at y ${bound[i][1]}`));
  // The units scale, read off the chart's labelled grid: the last readings are the printed figures.
  const grid = byId.get('streams-chart').text.map((t) => [Number(textOf(t)), Number(t.y) - 4]).filter(([u]) => Number.isFinite(u));
  const [[u0, y0], [u1, y1]] = [grid[0], grid.at(-1)];
  const units = ([, y]) => u0 + ((y - y0) / (y1 - y0)) * (u1 - u0);
  const last = (id) => Math.round(units(points(id).at(-1)));
  assert.deepEqual([last('streams-exposure'), last('streams-refunded'), last('streams-overage')], [s.exposure.end, s.refunded, s.overage]);
  // Two stacked areas, each its upper edge left to right, then its lower edge back: recorded from
  // 0, held from the recorded edge up to the exposure.
  const edges = (id) => {
    const all = points(id);
    assert.equal(all.length, 2 * exposure.length, `${id}: an upper and a lower edge, a point per reading each`);
    return [all.slice(0, exposure.length), all.slice(exposure.length).toReversed()];
  };
  const [recordedTop, recordedBottom] = edges('streams-recorded');
  const [heldTop, heldBottom] = edges('streams-held');
  assert.deepEqual(heldTop, exposure, 'the held area reaches the exposure');
  assert.deepEqual(heldBottom, recordedTop, 'the held area stands on the recorded one');
  recordedBottom.forEach((p, i) => assert.ok(p[0] === exposure[i][0] && Math.round(units(p)) === 0, `recorded area from 0 at reading ${i}`));
  // Apart, and as printed: the recorded area up to its peak, the held band as thick as its peak.
  assert.equal(Math.round(Math.max(...recordedTop.map(units))), s.peaks.recorded, 'recorded peak');
  assert.equal(Math.round(Math.max(...heldTop.map((p, i) => units(p) - units(heldBottom[i])))), s.peaks.held, 'held peak');
  // The marks, on the panel's own time scale, where the printed lines put them.
  const scale = timeScale(byId, 'streams-time-axis');
  const at = (mark) => scale.t(Number(mark.x) + Number(mark.width) / 2);
  const cutMarks = byId.get('streams-cut').rect ?? [];
  assert.equal(cutMarks.length, story.cuts.length);
  cutMarks.forEach((mark, i) => {
    const cut = story.cuts[i];
    assert.ok(Math.abs(at(mark) - cut.t) < 0.02 && mark['data-reason'] === cut.reason, `answer ${cut.id} cut at ${cut.t} s (${cut.reason}), drawn at ${at(mark).toFixed(2)} s (${mark['data-reason']})`);
  });
  const start = story.phases.find((p) => p.name === 'streams').t;
  const refusedMarks = byId.get('streams-refused').rect ?? [];
  assert.equal(refusedMarks.length, s.refused);
  for (const mark of refusedMarks) assert.ok(at(mark) >= start - 0.1, `refused answer drawn at ${at(mark).toFixed(2)} s`);
  const legend = new Set((byId.get('legend').text ?? []).map(textOf));
  for (const entry of [
    'node-a exposure (streams)',
    `recorded as produced or at settle (peak ${s.peaks.recorded} units)`,
    `held by open reservations (peak ${s.peaks.held} units)`,
    `refunded so far (${s.refunded} units)`,
    `overage so far (${s.overage} units)`,
    'node budget + overage so far',
  ]) {
    assert.ok(legend.has(entry), `legend lacks "${entry}"`);
  }
});

test('--plan: the default story is about 40 s, the fast one under 25 s with the silence outlasting the window', async () => {
  const plan = async (args) => {
    const { code, stdout } = await runNode([join(root, 'examples/demo.mjs'), '--plan', ...args]);
    assert.equal(code, 0);
    const total = Number(/^story \((\d+(?:\.\d+)?) s\)/.exec(stdout)?.[1]);
    const silent = /silent (\d+(?:\.\d+)?)–(\d+(?:\.\d+)?) s/.exec(stdout);
    return { total, silent: Number(silent[2]) - Number(silent[1]) };
  };
  const normal = await plan([]);
  assert.ok(normal.total >= 35 && normal.total <= 45, `default story ${normal.total} s`);
  const fast = await plan(['--fast']);
  assert.ok(fast.total >= 15 && fast.total <= 25, `fast story ${fast.total} s`);
  assert.ok(fast.silent >= WINDOW + 1, `fast silence ${fast.silent} s: the cutoff must show`);
});
