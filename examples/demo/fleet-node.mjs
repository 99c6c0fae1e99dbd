// One node of `npm run demo -- --fleet`, in its own process so that a SIGKILL is a real crash:
// the demo's Express service (./node.mjs) with a sentinel on `budget.fleet`, the Redis URL read
// from the environment variable the demo sets (budget.fleet.redisEnv; never printed).
//
// Usage: node fleet-node.mjs '<json>' with { name, authorityUrl, budget }.
// stdout, one line each (pipes are synchronous on Linux, so a line is in the pipe before the
// next statement runs, and survives a SIGKILL that comes after it):
//   listening <json>   { url, pid }: the service takes requests
//   a <ms>             one unit admitted, <ms> = when the evidence it was admitted on was sent
//                      (epoch ms); written BEFORE the response, so a node killed with SIGKILL has
//                      reported every unit it admitted
//   s <json>           state every 100 ms: fleet() plus status, reason, unverified, nodeBudget, admitted
//   m <json>           { from, to, grant }: fleet().mode changed (polled every 20 ms)
//   h <json>           { held }: fleet().growthHeld changed (polled with the mode)
//   closed             after a graceful close (the grant released)
// stdin: `close` → await the node's close, exit 0; stdin ending (the demo went away) → exit.
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { startNode } from './node.mjs';

const cfg = JSON.parse(process.argv[2]);
const say = (line) => process.stdout.write(`${line}\n`);
const epoch = () => performance.timeOrigin + performance.now();

let admitted = 0;
const node = await startNode(cfg.name, cfg.authorityUrl, {
  budget: cfg.budget,
  onAdmitted() {
    admitted += 1;
    const age = node.sentinel.readiness().evidenceAgeSeconds; // admitted, so there is evidence
    say(`a ${(epoch() - age * 1000).toFixed(0)}`);
  },
});
say(`listening ${JSON.stringify({ url: node.url, pid: process.pid })}`);

const { sentinel } = node;
let closing = false;
let mode = null;
let held = null;

function report() {
  const fleet = sentinel.fleet();
  const { status, reason } = sentinel.readiness();
  say(`s ${JSON.stringify({ ...fleet, status, reason, unverified: sentinel.exposureUnits, nodeBudget: sentinel.nodeBudgetUnits, admitted })}`);
}
function watchMode() {
  const { mode: next, grantUnits: grant, growthHeld } = sentinel.fleet();
  if (next !== mode) say(`m ${JSON.stringify({ from: mode, to: next, grant })}`);
  if (growthHeld !== held) say(`h ${JSON.stringify({ held: growthHeld })}`);
  mode = next;
  held = growthHeld;
}
watchMode();
report();
const timers = [setInterval(report, 100), setInterval(watchMode, 20)];

createInterface({ input: process.stdin })
  .on('line', async (line) => {
    if (line.trim() !== 'close' || closing) return;
    closing = true;
    timers.forEach(clearInterval);
    await node.close();
    say('closed');
    process.exit(0);
  })
  .on('close', () => {
    if (!closing) process.exit(0); // the demo went away
  });
