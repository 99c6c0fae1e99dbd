// Fleet budget benchmark, against a local redis-server this script starts (and stops):
//  1. admit(1) with a fleet budget vs a fixed budget, same process (the hot path never touches Redis);
//  2. Redis commands per node per minute at steady state (server-side INFO commandstats);
//  3. the renew script's round trip from Node.js (p50/p99), next to a PING's;
//  4. RSS and OS threads a fleet sentinel adds once the addon's runtime is running.
// Run: node bench/fleet.mjs [--seconds N] (after npm run build; needs redis-server on PATH).
// Prints; asserts nothing.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { measure, printRatios } from './measure.mjs';
import { rawCommands, startRedis } from '../__test__/helpers/redis.mjs';

const { Sentinel } = createRequire(import.meta.url)('../js/main.js');
const { values } = parseArgs({ options: { seconds: { type: 'string', default: '40' } } });
const SECONDS = Number(values.seconds);

const status = (field) => Number(readFileSync('/proc/self/status', 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))[1]);
const valid = async () => 'valid';
const fixedOptions = { budget: { unverifiedUnits: 1e9, maxUnitsPerSecond: 1e9 / 600 }, authority: { inspect: valid } };
const fleetOptions = (url, name, leaseSeconds) => ({
  budget: { unverifiedUnits: 1e9, maxUnitsPerSecond: 1e9 / 600, fleet: { redis: url, name, maxNodes: 4, leaseSeconds } },
  authority: { inspect: valid },
});
/** Commands clients sent (EVALSHA, EVAL, SCRIPT), not the ones the scripts ran inside Redis. */
const commandCalls = async (port) => {
  const [info] = await rawCommands(port, [['INFO', 'commandstats']]);
  return [...info.matchAll(/cmdstat_(evalsha|eval|script):calls=(\d+)/g)].reduce((sum, m) => sum + Number(m[2]), 0);
};

const redis = await startRedis();
try {
  // 4. footprint: the runtime thread is started by a fixed sentinel first, then a fleet one is added.
  const fixed = new Sentinel(fixedOptions);
  await fixed.whenReady({ timeoutMs: 5000 });
  await sleep(200);
  globalThis.gc?.();
  const before = { rss: status('VmRSS'), threads: status('Threads') };
  const fleet = new Sentinel(fleetOptions(redis.url, 'bench-footprint', 30));
  await fleet.whenReady({ timeoutMs: 5000 });
  await sleep(500);
  globalThis.gc?.();
  const after = { rss: status('VmRSS'), threads: status('Threads') };
  console.log(`A fleet sentinel adds ${after.threads - before.threads} OS threads and ${after.rss - before.rss} KiB RSS ` +
    `(threads ${before.threads} → ${after.threads}; fleet mode ${fleet.fleet().mode}).`);

  // 1. hot path: admit(1) on a node whose budget never runs out in the measured window.
  const admitFixed = measure(() => fixed.admit(0));
  const admitFleet = measure(() => fleet.admit(0));
  const readFixed = measure(() => fixed.isServing());
  const readFleet = measure(() => fleet.isServing());
  printRatios('\nadmit(0) and isServing(), fixed budget vs fleet budget (ns/call, median of 7 runs)', 'ns', [
    ['admit, fixed budget', admitFixed],
    ['admit, fleet budget', admitFleet],
  ]);
  printRatios('', 'ns', [
    ['isServing, fixed budget', readFixed],
    ['isServing, fleet budget', readFleet],
  ]);
  await Promise.all([fixed.close(), fleet.close()]);

  // 2. steady-state commands: nodes with the default lease (30 s) and with a 6 s lease.
  for (const lease of [30, 6]) {
    const nodes = [0, 1].map(() => new Sentinel(fleetOptions(redis.url, `bench-steady-${lease}`, lease)));
    // A fresh fleet holds growth for leaseSeconds + 2 s: measure once both nodes hold grants.
    const leasedBy = Date.now() + (lease + 30) * 1000;
    while (!nodes.every((n) => n.fleet().mode === 'leased') && Date.now() < leasedBy) await sleep(200);
    await sleep(2000); // past the convergence renewals
    const start = await commandCalls(redis.port);
    await sleep(SECONDS * 1000);
    const calls = (await commandCalls(redis.port)) - start;
    const perNodeMinute = (calls / nodes.length) * (60 / SECONDS);
    console.log(`\nleaseSeconds ${lease}: ${perNodeMinute.toFixed(1)} Redis commands per node per minute ` +
      `(${calls} in ${SECONDS} s for ${nodes.length} nodes; modes ${nodes.map((n) => n.fleet().mode).join(', ')})`);
    await Promise.all(nodes.map((n) => n.close()));
  }

  // 3. round trip of the renew script (EVAL of the same source) vs PING, from Node.js.
  const script = ['common.lua', 'renew.lua'].map((f) => readFileSync(new URL(`../src/fleet/${f}`, import.meta.url), 'utf8')).join('\n');
  const keys = ['{spend-sentinel:bench-rtt}:fleet', '{spend-sentinel:bench-rtt}:leases', '{spend-sentinel:bench-rtt}:charges'];
  const [sha] = await rawCommands(redis.port, [['SCRIPT', 'LOAD', script]]);
  const timings = { renew: [], ping: [] };
  for (let seq = 1; seq <= 2000; seq += 1) {
    let t = process.hrtime.bigint();
    await rawCommands(redis.port, [['EVALSHA', sha, '3', ...keys, 'n1', String(seq), '-1', '0', '1000', '0.25', '4', '30000', '', '0', 'f', '3600000']]);
    timings.renew.push(Number(process.hrtime.bigint() - t) / 1e3);
    t = process.hrtime.bigint();
    await rawCommands(redis.port, [['PING']]);
    timings.ping.push(Number(process.hrtime.bigint() - t) / 1e3);
  }
  const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)];
  console.log('\nround trip from Node.js, new connection per call (µs): | p50 | p99 |');
  for (const [name, xs] of Object.entries(timings)) console.log(`| ${name} | ${pct(xs, 0.5).toFixed(0)} | ${pct(xs, 0.99).toFixed(0)} |`);
} finally {
  await redis.stop();
}
