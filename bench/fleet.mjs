// Fleet budget benchmark, against local redis-servers this script starts (and stops):
//  1. admit(0) and isServing() with a fleet budget vs a fixed budget, same process (the hot path
//     never touches Redis);
//  2. Redis calls (round trips: EVALSHA, EVAL, SCRIPT, WAIT) and commands as Redis counts them
//     (INFO commandstats: the scripts' own HGETALL, HSET, INFO, ... included) per node per minute,
//     with the default 30 s lease: at rest, and under full-rate traffic with an authority that
//     answers in 700 ms (the two run side by side, each with its own server);
//  3. the renew script's round trip from Node.js, next to a PING's, and what WAIT adds to a
//     growth on a primary with one replica;
//  4. RSS and OS threads a fleet sentinel adds once the addon's runtime is running.
// Run: node --expose-gc bench/fleet.mjs [--seconds N] (after npm run build; needs redis-server).
// Prints; asserts nothing.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { measure, printRatios } from './measure.mjs';
import { rawCommands, startRedis } from '../__test__/helpers/redis.mjs';
import { startReplicated } from '../__test__/helpers/redis-topologies.mjs';

const { Sentinel } = createRequire(import.meta.url)('../js/main.js');
const { values } = parseArgs({ options: { seconds: { type: 'string', default: '60' } } });
const SECONDS = Number(values.seconds);

const status = (field) => Number(readFileSync('/proc/self/status', 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))[1]);
const valid = async () => 'valid';
const fixedOptions = { budget: { unverifiedUnits: 1e9, maxUnitsPerSecond: 1e9 / 600 }, authority: { inspect: valid } };
const fleetOptions = (url, name, { inspect = valid, b = 1e9, r = 1e9 / 600 } = {}) => ({
  budget: { unverifiedUnits: b, maxUnitsPerSecond: r, fleet: { redis: url, name, maxNodes: 4 } },
  authority: { inspect },
});
/**
 * `calls`: what clients sent (EVALSHA, EVAL, SCRIPT, WAIT); `commands`: everything Redis counted,
 * the commands the scripts ran included (this INFO is counted from the next sample on).
 */
const commandCounts = async (port) => {
  const [info] = await rawCommands(port, [['INFO', 'commandstats']]);
  const counts = [...info.matchAll(/cmdstat_([a-z|]+):calls=(\d+)/g)].map((m) => [m[1], Number(m[2])]);
  const sum = (names) => counts.filter(([name]) => !names || names.includes(name)).reduce((total, [, n]) => total + n, 0);
  return { calls: sum(['evalsha', 'eval', 'script', 'wait']), commands: sum() };
};
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)];

async function footprintAndHotPath(redis) {
  // The runtime thread is started by a fixed sentinel first, then a fleet one is added.
  const fixed = new Sentinel(fixedOptions);
  await fixed.whenReady({ timeoutMs: 5000 });
  await sleep(200);
  globalThis.gc?.();
  const before = { rss: status('VmRSS'), threads: status('Threads') };
  const fleet = new Sentinel(fleetOptions(redis.url, 'bench-footprint'));
  await fleet.whenReady({ timeoutMs: 5000 });
  await sleep(500);
  globalThis.gc?.();
  const after = { rss: status('VmRSS'), threads: status('Threads') };
  console.log(`A fleet sentinel adds ${after.threads - before.threads} OS threads and ${after.rss - before.rss} KiB RSS ` +
    `(threads ${before.threads} → ${after.threads}; fleet mode ${fleet.fleet().mode}).`);

  // admit(0) never spends the budget, so every call takes the whole admission path.
  printRatios('\nadmit(0) and isServing(), fixed budget vs fleet budget (ns/call, median of 7 runs)', 'ns', [
    ['admit, fixed budget', measure(() => fixed.admit(0))],
    ['admit, fleet budget', measure(() => fleet.admit(0))],
  ]);
  printRatios('', 'ns', [
    ['isServing, fixed budget', measure(() => fixed.isServing())],
    ['isServing, fleet budget', measure(() => fleet.isServing())],
  ]);
  await Promise.all([fixed.close(), fleet.close()]);
}

/**
 * Two nodes on the default 30 s lease: commands per node per minute once both hold grants.
 * `traffic`: each node admits 1 unit at a time as fast as it is admitted (full rate), and the
 * authority answers in 700 ms.
 */
async function commandsPerMinute(traffic) {
  const redis = await startRedis();
  const inspect = traffic ? () => sleep(700).then(() => 'valid') : valid;
  // b 2000 at r 50 per node: a floor of 125, grants of 750, windows of 17.5 s.
  const nodes = [0, 1].map(() => new Sentinel(fleetOptions(redis.url, 'bench-commands', { inspect, b: 2000, r: 50 })));
  let running = traffic;
  const load = (node) => {
    if (!running) return;
    let n = 0;
    while (n < 1000 && node.admit(1)) n += 1;
    if (n > 0) setImmediate(() => load(node));
    else setTimeout(() => load(node), 1);
  };
  nodes.forEach(load);
  try {
    // A fresh fleet holds growth for leaseSeconds × 1.03 + 2 s: measure once both nodes hold grants.
    const leasedBy = Date.now() + 90_000;
    while (!nodes.every((n) => n.fleet().mode === 'leased') && Date.now() < leasedBy) await sleep(200);
    await sleep(12_000); // past the convergence renewals
    const admitted = () => nodes.reduce((sum, n) => sum + n.metricFamilies()
      .find((f) => f.name === 'spend_sentinel_admitted_units_total').samples.reduce((s, x) => s + x.value, 0), 0);
    const start = await commandCounts(redis.port);
    const unitsBefore = admitted();
    await sleep(SECONDS * 1000);
    const end = await commandCounts(redis.port);
    const calls = end.calls - start.calls;
    const commands = end.commands - start.commands - 1; // less the first sample's own INFO
    const perNodeMinute = (n) => ((n / nodes.length) * (60 / SECONDS)).toFixed(1);
    const rate = (admitted() - unitsBefore) / nodes.length / SECONDS;
    const what = traffic ? 'full-rate traffic, authority at 700 ms' : 'at rest';
    console.log(`\n${what}: ${perNodeMinute(calls)} Redis calls and ${perNodeMinute(commands)} commands (as Redis counts them) ` +
      `per node per minute (${calls} calls, ${commands} commands in ${SECONDS} s for ${nodes.length} nodes; ` +
      `modes ${nodes.map((n) => n.fleet().mode).join(', ')}; ${rate.toFixed(1)} units admitted per node per second, r = 50)`);
  } finally {
    running = false;
    await Promise.all(nodes.map((n) => n.close()));
    await redis.stop();
  }
}

async function roundTrips() {
  const topology = await startReplicated({ replicas: 1, linkThroughProxy: false });
  const { primary } = topology;
  try {
    const script = ['common.lua', 'renew.lua'].map((f) => readFileSync(new URL(`../src/fleet/${f}`, import.meta.url), 'utf8')).join('\n');
    const [sha] = await rawCommands(primary.port, [['SCRIPT', 'LOAD', script]]);
    // A renewal that asks for everything: node, seq, want, keep, b, reserve, maxNodes, lease_ms,
    // known id/version/epoch, acked seq, clock_to, settle_through, end_hold, new id, ttl.
    const renew = (seq) => ['EVALSHA', sha, '1', '{spend-sentinel:bench-rtt}', 'n1', String(seq), '-1', '0', '1000', '0.25', '4',
      '30000', '', '0', '', '0', '-1', '0', '', `id${seq}`, '3600000'];
    const timings = { 'renew script': [], 'renew script + WAIT 1 (one replica)': [], PING: [] };
    for (let seq = 1; seq <= 2000; seq += 1) {
      let t = process.hrtime.bigint();
      await rawCommands(primary.port, [renew(2 * seq)]);
      timings['renew script'].push(Number(process.hrtime.bigint() - t) / 1e3);
      t = process.hrtime.bigint();
      await rawCommands(primary.port, [renew(2 * seq + 1), ['WAIT', '1', '1000']]);
      timings['renew script + WAIT 1 (one replica)'].push(Number(process.hrtime.bigint() - t) / 1e3);
      t = process.hrtime.bigint();
      await rawCommands(primary.port, [['PING']]);
      timings.PING.push(Number(process.hrtime.bigint() - t) / 1e3);
    }
    console.log('\nround trip from Node.js, new connection per call (µs): | p50 | p99 |');
    for (const [name, xs] of Object.entries(timings)) console.log(`| ${name} | ${pct(xs, 0.5).toFixed(0)} | ${pct(xs, 0.99).toFixed(0)} |`);
  } finally {
    await topology.stop();
  }
}

const redis = await startRedis();
try {
  await footprintAndHotPath(redis);
} finally {
  await redis.stop();
}
await roundTrips();
await Promise.all([commandsPerMinute(false), commandsPerMinute(true)]);
