// The fleet demo, as a user runs it without the build step: `node examples/demo.mjs --fleet --fast`
// (the addon must be built; `npm test` builds it first). Needs redis-server on PATH, like the
// other fleet suites. The printed story is parsed (lines written by examples/demo/report.mjs):
//   == <t>s  <phase>: <what happens>                 a phase starts (continuation lines indented)
//   <t> <cell> <cell> <cell> <cell> <cell> <Σ>        a sample every 0.5 s, and one when a phase's
//                                                     event has come (its last); a cell per node:
//        <mode mark> <grant> <status>, mode mark C connecting, F floor, L leased, ✕ killed, · not started
//          ↳ <node>  <from> → <to>  at <t>s, grant <g>   a node's fleet mode changed
//          ↳ <node>  growth held  at <t>s: …                  it saw the fleet's state lost
//          ↳ <node>  growth allowed  at <t>s                  a hold ended for it
//   exposure after the cut: <X> units ≤ b = 300        the final check
//   timeline: <path of the SVG>
// A sample belongs to the phase whose "==" line was printed last before it. Each phase lasts at
// least its length and until its event (examples/demo/plan.mjs), so the checks below hold however
// slow the machine: the last sample of a phase shows what it waited for.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { XMLValidator, XMLParser } from 'fast-xml-parser';
import { runCommand, runNode } from './helpers/wait.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const NODES = ['node-1', 'node-2', 'node-3', 'node-4', 'node-5'];
const B = 300;
const POOL = 225; // b × (1 − reserve)
const FLOOR = 12.5; // b × reserve / maxNodes
const PHASES = ['hold', 'scale-up', 'cut', 'kill', 'evicted', 'redis-paused', 'redis-back', 'restore', 'end'];
// An upper bound: the fast story takes ~26 s on an idle machine, longer on a busy one; a phase
// whose event has not come 30 s after its start fails the demo on its own (8 phases).
const RUN_TIMEOUT_MS = 300_000;
const SHARE_TOLERANCE = 0.05; // the demo waits for grants this close to the fair share
const SHOWN = 0.05; // grants are printed with one decimal
const ROUNDED = 0.011; // times are printed with two decimals
// the --fast story's minimum phase lengths (s); each phase also waits for its event
const FAST_MIN = { hold: 8, 'scale-up': 4, cut: 1.5, kill: 1.5, evicted: 2, 'redis-paused': 2, 'redis-back': 1.5, restore: 3 };

const PHASE = /^== (\d+\.\d+)s {2}([a-z-]+)/;
const SAMPLE = /^\s*(\d+\.\d) ((?:[CFL✕·] +(?:—|\d+(?:\.\d)?) +[a-z_]* *){5}) *(\d+)$/;
const CELL = /([CFL✕·]) +(—|\d+(?:\.\d)?) +([a-z_]*)/g;
const MODE = /↳ (node-\d) {2}(\w+) → (\w+) {2}at (\d+\.\d+)s/;
const HELD = /↳ (node-\d) {2}growth (held|allowed) {2}at (\d+\.\d+)s/;
const EXPOSURE = /^exposure after the cut: (\d+) units (≤|>) b = (\d+)/;
const MARK = { C: 'connecting', F: 'floor', L: 'leased', '✕': 'killed', '·': null };

function parseStory(stdout) {
  const story = { phases: [], samples: [], modes: [], holds: [], exposure: null, svg: null };
  let phase = null;
  for (const line of stdout.split('\n')) {
    let m;
    if ((m = PHASE.exec(line))) {
      phase = m[2];
      story.phases.push({ name: phase, t: Number(m[1]) });
    } else if ((m = SAMPLE.exec(line))) {
      const cells = [...m[2].matchAll(CELL)].map(([, mark, grant, status]) => ({ mode: MARK[mark], grant: grant === '—' ? null : Number(grant), status }));
      story.samples.push({ t: Number(m[1]), phase, nodes: Object.fromEntries(NODES.map((n, i) => [n, cells[i]])), sigma: Number(m[3]) });
    } else if ((m = MODE.exec(line))) {
      story.modes.push({ node: m[1], from: m[2], to: m[3], t: Number(m[4]), phase });
    } else if ((m = HELD.exec(line))) {
      story.holds.push({ node: m[1], held: m[2] === 'held', t: Number(m[3]), phase });
    } else if ((m = EXPOSURE.exec(line))) {
      story.exposure = { units: Number(m[1]), sign: m[2], b: Number(m[3]) };
    } else if ((m = /^timeline: (.+)$/.exec(line))) {
      story.svg = m[1];
    }
  }
  return story;
}

let run;
let story;
let outDir;
before(async () => {
  outDir = mkdtempSync(join(tmpdir(), 'spend-sentinel-demo-fleet-'));
  // Its own process group: on a timeout the node processes and redis-server are killed with it.
  run = await runCommand(process.execPath, ['examples/demo.mjs', '--fleet', '--fast', '--out', join(outDir, 'fleet.svg')], { cwd: root, timeoutMs: RUN_TIMEOUT_MS, group: true });
  story = parseStory(run.stdout);
}, { timeout: RUN_TIMEOUT_MS + 10_000 });
after(() => rmSync(outDir, { recursive: true, force: true }));

const failure = () => `exit ${run.code} signal ${run.signal} timedOut ${run.timedOut}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;
const during = (phase) => story.samples.filter((s) => s.phase === phase);
const nearShare = (grant, n) => Math.abs(grant - POOL / n) <= SHARE_TOLERANCE * (POOL / n) + SHOWN;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
// the story with each wrapped line joined to the one before it
const joined = () => run.stdout.replace(/\n {9,}/g, ' ');

test('node examples/demo.mjs --fleet --fast plays every phase in order and exits 0 on its own', () => {
  assert.equal(run.timedOut, false, failure());
  assert.equal(run.code, 0, failure());
  assert.deepEqual(story.phases.map((p) => p.name), PHASES, failure());
  for (const phase of PHASES.slice(0, -1)) assert.ok(during(phase).length >= 1, `a sample in ${phase}`);
  const gaps = story.samples.slice(1).map((s, i) => s.t - story.samples[i].t);
  assert.ok(gaps.every((g) => g >= 0), 'samples in time order');
  const typical = median(gaps);
  assert.ok(typical >= 0.35 && typical <= 0.65, `samples ~0.5 s apart: median gap ${typical} s`);
  for (const [i, p] of story.phases.slice(0, -1).entries()) {
    const length = story.phases[i + 1].t - p.t;
    assert.ok(length >= FAST_MIN[p.name] - ROUNDED, `${p.name} lasted ${length.toFixed(2)} s, at least ${FAST_MIN[p.name]} s`);
  }
  for (const line of run.stdout.split('\n')) assert.ok([...line].length <= 100, `line over 100 columns: ${line}`);
  assert.match(run.stdout, /floor = b × reserve \/ maxNodes = 12\.5 units; pool = b × \(1 − reserve\) = 225 units/);
});

test('hold: the first two nodes run on their floors for leaseSeconds × 1.03 + 2 s, then lease pool / 2', () => {
  const hold = during('hold');
  const early = hold.filter((s) => s.t >= 1 && s.t <= 6.5);
  assert.ok(early.length >= 8, failure());
  for (const s of early) {
    for (const n of ['node-1', 'node-2']) assert.deepEqual([s.nodes[n].mode, s.nodes[n].grant], ['floor', 0], `${n} at ${s.t}s`);
    for (const n of NODES.slice(2)) assert.equal(s.nodes[n].mode, null, `${n} not started at ${s.t}s`);
  }
  const last = hold.at(-1);
  for (const n of ['node-1', 'node-2']) assert.deepEqual([last.nodes[n].mode, last.nodes[n].grant], ['leased', POOL / 2], `${n} at the end of the hold`);
  const firstLease = story.modes.find((m) => m.to === 'leased');
  assert.ok(firstLease.t >= 7.15 && firstLease.phase === 'hold', `first lease at ${firstLease.t}s: not before the 7.15 s hold`);
});

test('scale-up: the grants rebalance to pool / 5 before the cut', () => {
  const last = during('scale-up').at(-1);
  for (const n of NODES) {
    const { mode, grant } = last.nodes[n];
    assert.equal(mode, 'leased', `${n} leased at ${last.t}s\n${failure()}`);
    assert.ok(nearShare(grant, 5), `${n} grant ${grant} at ${last.t}s, expected ${POOL / 5} ± 5 %`);
  }
});

test('cut: the victim admits units after the cut before it is killed', () => {
  const killed = /node-4 \(pid \d+\) killed with SIGKILL at (\d+\.\d+)s; it admitted (\d+) units after the cut/.exec(run.stdout);
  assert.ok(killed, `the kill line\n${failure()}`);
  assert.ok(Number(killed[2]) >= 10, `node-4 admitted ${killed[2]} units after the cut`);
  const kill = story.phases.find((p) => p.name === 'kill').t;
  assert.ok(Math.abs(Number(killed[1]) - kill) <= ROUNDED, `killed at ${killed[1]}s, as the kill phase starts (${kill}s)`);
});

test('evicted: every live node sees the fleet\'s state lost (growth held), keeps what it held, and grows again after the restore', () => {
  const text = joined();
  const eviction = /the fleet's key was evicted \(volatile-lru: the only key with a TTL\) when maxmemory was lowered below the \d+ kB in use \(evicted_keys \+1 after \d+ ms\); maxmemory is 0 again/.exec(text);
  assert.ok(eviction, `the eviction line\n${failure()}`);
  const at = (phase) => text.search(new RegExp(`^== \\d+\\.\\d+s {2}${phase}:`, 'm'));
  assert.ok(eviction.index > at('evicted') && eviction.index < at('redis-paused'), 'the eviction is told in the evicted phase');
  assert.doesNotMatch(run.stdout, /filler/);
  for (const n of NODES.filter((x) => x !== 'node-4')) {
    const held = story.holds.find((h) => h.node === n && h.held);
    assert.equal(held?.phase, 'evicted', `${n} saw the loss in the evicted phase (${JSON.stringify(held)})\n${failure()}`);
    const allowed = story.holds.find((h) => h.node === n && !h.held && h.t > held.t);
    assert.equal(allowed?.phase, 'restore', `${n}'s hold ended once the authority answered again (${JSON.stringify(allowed)})`);
  }
  // the first hold report of a node is not printed (a fresh fleet is held): only the loss is
  assert.equal(story.holds.filter((h) => h.held).length, 4, 'one growth held per live node');
});

test('cut, kill, Redis paused: the killed node stays down, the others fall back to their floors', () => {
  for (const s of [...during('kill'), ...during('evicted'), ...during('redis-paused'), ...during('redis-back'), ...during('restore')]) {
    assert.equal(s.nodes['node-4'].mode, 'killed', `node-4 at ${s.t}s`);
  }
  const live = NODES.filter((n) => n !== 'node-4');
  for (const n of live) {
    const lapsed = story.modes.find((m) => m.node === n && m.from === 'leased' && m.to === 'floor');
    assert.ok(lapsed?.phase === 'redis-paused', `${n}'s lease lapsed while Redis was paused (${JSON.stringify(lapsed)})`);
    assert.equal(during('redis-paused').at(-1).nodes[n].mode, 'floor', `${n} on its floor at the end of the pause`);
  }
  // while the authority is silent the ledgers only grow to what the fleet's budget allows
  for (const s of [...during('cut'), ...during('kill'), ...during('evicted'), ...during('redis-paused'), ...during('redis-back')]) {
    assert.ok(s.sigma <= B, `Σ unverified ${s.sigma} at ${s.t}s`);
    for (const n of live) assert.ok(s.nodes[n].grant <= POOL / 5 + 1e-9, `${n} grant ${s.nodes[n].grant} at ${s.t}s`);
  }
});

test('restore: the live nodes are ready, their holds over, and share the pool four ways', () => {
  const last = during('restore').at(-1);
  for (const n of NODES.filter((x) => x !== 'node-4')) {
    assert.equal(last.nodes[n].status, 'ready', `${n} at ${last.t}s\n${failure()}`);
    assert.equal(last.nodes[n].mode, 'leased', `${n} at ${last.t}s`);
    assert.ok(nearShare(last.nodes[n].grant, 4), `${n} grant ${last.nodes[n].grant}, expected ${POOL / 4} ± 5 %`);
    const allowed = story.holds.filter((h) => h.node === n && h.phase === 'restore');
    assert.ok(allowed.length === 1 && !allowed[0].held && allowed[0].t <= last.t + 0.05, `${n}: growth allowed before the last sample (${JSON.stringify(allowed)})`);
  }
});

test('the exposure after the cut, over all nodes (the killed one included), stays ≤ b', () => {
  assert.ok(story.exposure, `an exposure line\n${failure()}`);
  assert.equal(story.exposure.b, B);
  assert.equal(story.exposure.sign, '≤');
  assert.ok(story.exposure.units <= B, `exposure ${story.exposure.units}`);
  // 4–5 nodes spend most of floor + pool / 5 = 57.5 units each: the demo shows a real exposure
  assert.ok(story.exposure.units >= 150, `exposure ${story.exposure.units}: the cut should spend most grants`);
  assert.ok(FLOOR * 6 + POOL === B);
});

test('the SVG is well-formed, with one grant line per node, the fleet units, b and the phase markers', () => {
  assert.equal(story.svg, join(outDir, 'fleet.svg'));
  const xml = readFileSync(story.svg, 'utf8');
  const valid = XMLValidator.validate(xml);
  assert.equal(valid, true, JSON.stringify(valid));
  const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => ['g', 'rect', 'line', 'polyline', 'text'].includes(name) }).parse(xml);
  const byId = new Map();
  const polylines = [];
  const lines = [];
  (function walk(value) {
    if (Array.isArray(value)) return value.forEach(walk);
    if (value === null || typeof value !== 'object') return;
    if (typeof value.id === 'string') byId.set(value.id, value);
    for (const p of value.polyline ?? []) polylines.push(p);
    for (const l of value.line ?? []) lines.push(l);
    Object.values(value).forEach(walk);
  })(doc.svg);
  const grants = polylines.filter((p) => p.class === 'grant');
  assert.deepEqual(grants.map((p) => p['data-node']).sort(), NODES);
  // a point per state line (every 100 ms) of the node's life: node-4's lasts ≥ 5.5 s
  for (const p of grants) assert.ok(p.points.split(' ').length >= 20, `${p.id}: points`);
  for (const id of ['fleet-unverified', 'exposure']) assert.ok(byId.get(id)?.points.split(' ').length >= 20, id);
  assert.equal(byId.get('b-line')?.class, 'budget');
  const markers = lines.filter((l) => l.class === 'phase-marker').map((l) => l['data-phase']);
  assert.deepEqual(markers, PHASES.slice(0, -1));
  // the phases as they ran (each lasted its minimum and until its event), not as planned
  const desc = /<desc>Phases: (.*?)\. Floor/.exec(xml)?.[1] ?? '';
  const ran = [...desc.matchAll(/([a-z-]+) (\d+\.\d+)–(\d+\.\d+) s/g)].map(([, name, start, end]) => ({ name, start: Number(start), end: Number(end) }));
  assert.deepEqual(ran.map((p) => [p.name, p.start]), story.phases.slice(0, -1).map((p) => [p.name, p.t]), desc);
  for (const [i, p] of ran.entries()) assert.ok(p.end >= p.start && (i === 0 || Math.abs(p.start - ran[i - 1].end) <= ROUNDED), desc);
  const end = story.phases.at(-1).t;
  assert.ok(ran.at(-1).end <= end, `the story's end ${ran.at(-1).end} s, before the end line (${end} s)`);
  const total = Number(/fleet demo \((\d+\.\d) s\)/.exec(xml)?.[1]);
  assert.ok(Math.abs(total - ran.at(-1).end) <= 0.06, `the title's length ${total} s: the story as it ran`);
  for (const id of ['phases', 'grant-chart', 'units-chart', 'time-axis', 'legend']) assert.ok(byId.has(id), id);
  assert.match(xml, /time \(s\)/);
});

test('--fleet --plan: minimum lengths (at least 35 s, --fast 23.5 s), each phase waits for its event', async () => {
  const plan = async (args) => {
    const { code, stdout } = await runNode([join(root, 'examples/demo.mjs'), '--fleet', '--plan', ...args]);
    assert.equal(code, 0);
    const total = Number(/^fleet story \(at least (\d+(?:\.\d+)?) s\): /.exec(stdout)?.[1]);
    const head = stdout.slice(0, stdout.indexOf('\n  ('));
    const mins = [...head.matchAll(/([a-z-]+) ≥ (\d+(?:\.\d+)?) s/g)].map((m) => [m[1], Number(m[2])]);
    const names = [...stdout.matchAll(/^ {2}([a-z-]+) +\S/gm)].map((m) => m[1]);
    const waits = [...stdout.matchAll(/^ {15}waits for: (.+)$/gm)].map((m) => m[1]);
    return { total, mins, names, waits, stdout };
  };
  for (const [args, minimum] of [[[], 35], [['--fast'], 23.5]]) {
    const { total, mins, names, waits, stdout } = await plan(args);
    assert.equal(total, minimum, stdout);
    assert.deepEqual(mins.map(([name]) => name), PHASES.slice(0, -1), stdout);
    assert.equal(mins.reduce((sum, [, s]) => sum + s, 0), total, 'the total is the sum of the minimums');
    assert.deepEqual(names, PHASES.slice(0, -1));
    assert.equal(waits.length, names.length, 'a "waits for" line per phase');
    assert.match(stdout, /each phase: at least its length, and until its event/);
    for (const line of stdout.split('\n')) assert.ok([...line].length <= 100, `line over 100 columns: ${line}`);
  }
});
