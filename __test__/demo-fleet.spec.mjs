// The fleet demo, as a user runs it without the build step: `node examples/demo.mjs --fleet --fast`
// (the addon must be built; `npm test` builds it first). Needs redis-server on PATH, like the
// other fleet suites. The printed story is parsed (lines written by examples/demo/report.mjs):
//   == <t>s  <phase>: <what happens>                 a phase starts (continuation lines indented)
//   <t> <cell> <cell> <cell> <cell> <cell> <Σ>        a sample every 0.5 s; a cell per node:
//        <mode mark> <grant> <status>, mode mark C connecting, F floor, L leased, ✕ killed, · not started
//          ↳ <node>  <from> → <to>  at <t>s, grant <g>   a node's fleet mode changed
//          ↳ <node>  growth held  at <t>s: …                  it saw the fleet's state lost
//          ↳ <node>  growth allowed  at <t>s                  a hold ended for it
//   exposure after the cut: <X> units ≤ b = 300        the final check
//   timeline: <path of the SVG>
// A sample belongs to the phase whose "==" line was printed last before it.
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
// Generous: the fast story takes ~35.5 s, with 5 node processes on a small machine.
const RUN_TIMEOUT_MS = 120_000;

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

test('node examples/demo.mjs --fleet --fast plays every phase in order and exits 0 on its own', () => {
  assert.equal(run.timedOut, false, failure());
  assert.equal(run.code, 0, failure());
  assert.deepEqual(story.phases.map((p) => p.name), PHASES, failure());
  assert.ok(story.samples.length >= 55, `a sample every 0.5 s (${story.samples.length})`);
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
    assert.ok(Math.abs(grant - POOL / 5) <= 0.2 * (POOL / 5), `${n} grant ${grant} at ${last.t}s, expected ${POOL / 5} ± 20 %`);
  }
});

test('evicted: every live node sees the fleet\'s state lost (growth held), keeps what it held, and grows again after the restore', () => {
  assert.match(run.stdout, /the fleet's key was evicted after \d+ filler keys/, failure());
  for (const n of NODES.filter((x) => x !== 'node-4')) {
    const held = story.holds.find((h) => h.node === n && h.held);
    assert.ok(held && ['evicted', 'redis-paused'].includes(held.phase), `${n} saw the loss (${JSON.stringify(held)})\n${failure()}`);
    const allowed = story.holds.find((h) => h.node === n && !h.held && h.t > held.t);
    assert.equal(allowed?.phase, 'restore', `${n}'s hold ended once the authority answered again (${JSON.stringify(allowed)})`);
  }
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

test('restore: the live nodes are ready and share the pool four ways', () => {
  const last = during('restore').at(-1);
  for (const n of NODES.filter((x) => x !== 'node-4')) {
    assert.equal(last.nodes[n].status, 'ready', `${n} at ${last.t}s\n${failure()}`);
    assert.equal(last.nodes[n].mode, 'leased', `${n} at ${last.t}s`);
    assert.ok(Math.abs(last.nodes[n].grant - POOL / 4) <= 0.2 * (POOL / 4), `${n} grant ${last.nodes[n].grant}`);
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
  for (const p of grants) assert.ok(p.points.split(' ').length >= 50, `${p.id}: points`);
  for (const id of ['fleet-unverified', 'exposure']) assert.ok(byId.get(id)?.points.split(' ').length >= 20, id);
  assert.equal(byId.get('b-line')?.class, 'budget');
  const markers = lines.filter((l) => l.class === 'phase-marker').map((l) => l['data-phase']);
  assert.deepEqual(markers, PHASES.slice(0, -1));
  for (const id of ['phases', 'grant-chart', 'units-chart', 'time-axis', 'legend']) assert.ok(byId.has(id), id);
  assert.match(xml, /time \(s\)/);
});

test('--fleet --plan: about 48 s, --fast about 35.5 s, phases in story order', async () => {
  const plan = async (args) => {
    const { code, stdout } = await runNode([join(root, 'examples/demo.mjs'), '--fleet', '--plan', ...args]);
    assert.equal(code, 0);
    const total = Number(/^fleet story \((\d+(?:\.\d+)?) s\)/.exec(stdout)?.[1]);
    const names = [...stdout.matchAll(/^ {2}([a-z-]+) +\S/gm)].map((m) => m[1]);
    return { total, names };
  };
  const normal = await plan([]);
  assert.ok(normal.total >= 40 && normal.total <= 60, `default story ${normal.total} s`);
  assert.deepEqual(normal.names, PHASES.slice(0, -1));
  const fast = await plan(['--fast']);
  assert.ok(fast.total >= 20 && fast.total <= 36, `fast story ${fast.total} s`);
});
