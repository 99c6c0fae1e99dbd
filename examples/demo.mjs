// The spend-sentinel demo:  npm run demo   (or: node examples/demo.mjs [--fleet] [--fast] [--out PATH] [--plan])
//
// One process: a fake account authority and two Express services (node-a, node-b), each with a
// sentinel configured as the README's seed example (b = 200, r = 20/s, nodes = 2 → 100 units and
// a 5 s window per node) and the probe routes. 20 POST /v1/usage a second go into each node
// through admission(), over real HTTP, while the story plays (40.5 s; --fast: 23 s): healthy, the
// authority goes silent, comes back, revokes the credential, restores it, and goes silent again
// while node-a serves streamed answers through reservations (./demo/streams.mjs; its plain
// requests stop at the restore). Every 0.5 s one line (≤ 100 columns, as every line here) shows
// each node's GET /ready and unverified units; at the end demo-timeline.svg draws it all: status
// bands by reason, refreshes, refused requests, the stale window w from the last answered refresh
// to the cutoff, and the streams phase stretched: exposure (recorded and held units stacked),
// refunded and overage units.
//
//   --fast       the short story (for CI): every effect still shows, in 23 s
//   --out PATH   where to write the SVG (default: demo-timeline.svg in the current directory)
//   --plan       print the story's phases and exit
//   --fleet      the fleet story instead (./demo/fleet.mjs): 2 → 5 node processes sharing b through
//                leases in their own redis-server; authority cut, kill -9, the fleet's key evicted,
//                Redis paused; at least 35 s (--fast: 23.5 s), each phase also waiting for its
//                event; writes fleet-timeline.svg
import http from 'node:http';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { storyPlan, storyLength } from './demo/plan.mjs';
import { startAuthority } from './demo/authority.mjs';
import { startNode, BUDGET } from './demo/node.mjs';
import { startLoad, readReady } from './demo/load.mjs';
import { storyClock, createRecorder } from './demo/record.mjs';
import { startStreams } from './demo/streams.mjs';
import { headerLines, planLines, phaseLine, sampleLine, transitionLine, cutLine, endLine, summaryLines, streamsLines } from './demo/report.mjs';
import { renderTimeline } from './demo/svg.mjs';
import { streamsPanel } from './demo/streams-svg.mjs';

const NAMES = ['node-a', 'node-b'];
const UNITS_PER_SECOND = 20; // r: the most each node may take, so its budget lasts exactly w
const SAMPLE_MS = 500;

let args;
try {
  ({ values: args } = parseArgs({ options: { fast: { type: 'boolean' }, out: { type: 'string' }, plan: { type: 'boolean' }, fleet: { type: 'boolean' } } }));
} catch (err) {
  console.error(`${err.message}\nusage: node examples/demo.mjs [--fleet] [--fast] [--out PATH] [--plan]`);
  process.exit(2);
}
if (args.fleet) {
  const { runFleetDemo } = await import('./demo/fleet.mjs');
  process.exit(await runFleetDemo(args)); // it stopped everything it started
}
const plan = storyPlan({ fast: args.fast });
const total = storyLength(plan);
if (args.plan) {
  console.log(planLines(plan).join('\n'));
  process.exit(0);
}
const svgPath = resolve(args.out ?? 'demo-timeline.svg');
const print = (lines) => console.log([lines].flat().join('\n'));

const clock = storyClock();
const recorder = createRecorder(NAMES);
const authority = await startAuthority();
const nodes = [];
const stops = [];
try {
  for (const name of NAMES) nodes.push(await startNode(name, authority.urlFor(name)));
  await Promise.all(nodes.map((n) => n.sentinel.whenReady({ timeoutMs: 10_000 })));
  await play();
} finally {
  for (const stop of stops.reverse()) await stop();
  await Promise.all(nodes.map((n) => n.close()));
  await authority.close();
}

async function play() {
  const { sentinel } = nodes[0];
  const streamer = nodes[0]; // it serves the streamed answers of the last phase
  print(headerLines({ budget: BUDGET, nodeBudget: sentinel.nodeBudgetUnits, windowSeconds: sentinel.staleWindowSeconds, names: NAMES, perSecond: UNITS_PER_SECOND, plan }));

  clock.start();
  for (const node of nodes) {
    const r = node.sentinel.readiness();
    recorder.state(node.name, 0, r.status, r.reason);
    const remove = node.sentinel.onTransition((e) => {
      const t = clock.t();
      recorder.transition(node.name, t, e);
      print(transitionLine(t, node.name, e));
    });
    const load = startLoad(node.url, UNITS_PER_SECOND);
    node.load = load;
    node.counts = load.counts;
    node.refusals = load.refusals;
    stops.push(remove, () => load.stop());
  }
  let streams = null;
  const chart = setInterval(() => nodes.forEach((n) => recorder.units(n.name, clock.t(), n.sentinel.exposureUnits)), 100);
  stops.push(() => clearInterval(chart));
  const probeAgent = new http.Agent({ keepAlive: true });
  stops.push(() => probeAgent.destroy());

  const starts = new Map();
  for (let tick = 0; tick * SAMPLE_MS <= total * 1000; tick += 1) {
    await sleepUntil(clock.stamp((tick * SAMPLE_MS) / 1000));
    const phase = plan.find((p) => p.start * 1000 === tick * SAMPLE_MS);
    if (phase) {
      authority.setMode(phase.authority);
      starts.set(phase.name, clock.t());
      print(phaseLine(starts.get(phase.name), phase));
      // node-a's plain requests stop at the restore: its first valid answer then empties the
      // ledger, so its streamed answers start from 0 units, the same on every run.
      if (phase.name === 'restored') await streamer.load.stop();
      if (phase.name === 'streams') streams = startStreams(streamer.sentinel, { t: clock.t, onCut: (c) => print(cutLine(streamer.name, c)) });
    }
    const t = clock.t();
    const samples = await Promise.all(nodes.map((n) => sample(n, probeAgent, t)));
    print(sampleLine(t, total, samples));
  }
  const streamed = streams?.stop();
  for (const stop of stops.splice(0).reverse()) await stop();
  print(endLine(clock.t()));

  const silentAt = starts.get('silent');
  const budget = sentinel.nodeBudgetUnits;
  const streamsFigures = streamed && { name: streamer.name, budget, streamed };
  writeFileSync(svgPath, renderTimeline({
    total,
    plan,
    budget,
    windowSeconds: sentinel.staleWindowSeconds,
    nodes: nodes.map((n) => timelineOf(n, silentAt)),
    panel: streamed ? streamsPanel({ ...streamsFigures, phase: plan.find((p) => p.name === 'streams') }) : null,
  }));
  const extra = streamed ? streamsLines({ ...streamsFigures, counters: reservationCounters(streamer.sentinel) }) : [];
  print(summaryLines(nodes.map((n) => summaryOf(n, silentAt)), svgPath, extra));
}

/** The sentinel's own count of its reservations (its metrics), to set beside the demo's. */
function reservationCounters(sentinel) {
  const value = (name) => sentinel.metricFamilies().find((f) => f.name === name)?.samples[0]?.value;
  return {
    refunded: value('spend_sentinel_refunded_units_total'),
    overage: value('spend_sentinel_overage_units_total'),
    reserved: value('spend_sentinel_reserved_units'),
  };
}

async function sample(node, agent, t) {
  const ready = await readReady(node.url, agent);
  recorder.state(node.name, t, ready.status, ready.reason);
  return {
    name: node.name,
    status: ready.status,
    reason: ready.reason,
    evidenceAge: ready.evidence_age_seconds,
    units: node.sentinel.exposureUnits,
    budget: node.sentinel.nodeBudgetUnits,
  };
}

function timelineOf(node, silentAt) {
  const lastValid = silentAt === undefined ? null : authority.lastValid(node.name, clock.stamp(silentAt));
  return {
    name: node.name,
    segments: recorder.segments(node.name, total),
    units: recorder.unitSeries(node.name),
    refreshes: authority.log.filter((e) => e.node === node.name).map((e) => ({ t: clock.t(e.at), answer: e.answer })),
    refusals: node.refusals.map((r) => ({ t: clock.t(r.at), reason: r.reason })),
    // the stale window, from the last refresh answered before the silence: the cutoff at age w
    window: lastValid === null ? null : { from: clock.t(lastValid) },
  };
}

/** When the node went not_ready after the silence: from the silence, and from its last confirmed evidence. */
function summaryOf(node, silentAt) {
  const cut = recorder.transitions(node.name).find((e) => e.t >= silentAt && e.to === 'not_ready');
  const lastValid = authority.lastValid(node.name, clock.stamp(silentAt));
  const cutoff = cut && lastValid !== null
    ? { afterSilence: cut.t - silentAt, afterLastValid: cut.t - clock.t(lastValid), lastValidAt: clock.t(lastValid) }
    : null;
  return { name: node.name, counts: node.counts, maxUnverified: node.maxUnverified, budget: node.sentinel.nodeBudgetUnits, cutoff };
}

function sleepUntil(stamp) {
  return new Promise((done) => setTimeout(done, Math.max(0, stamp - performance.now())));
}
