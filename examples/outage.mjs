// A small outage story: a fake account authority goes silent and comes back, while a service
// admits 20 units/s through the sentinel. Prints readiness twice a second.
//
//   npm run demo
//
// Seed budget: b = 200 units across 2 nodes at r = 20 units/s → node budget 100, window 5 s.
import http from 'node:http';
import { createRequire } from 'node:module';

const { Sentinel } = createRequire(import.meta.url)('../index.js');

let authorityUp = true;
const authority = http.createServer((req, res) => {
  if (!authorityUp) return; // accept, never answer: the refresh times out → indeterminate
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ capabilities: ['meter.requests'] }));
});
await new Promise((resolve) => authority.listen(0, '127.0.0.1', resolve));

const sentinel = new Sentinel({
  budget: { unverifiedUnits: 200, maxUnitsPerSecond: 20, nodes: 2 },
  authority: {
    url: `http://127.0.0.1:${authority.address().port}/v1/account`,
    allowInsecureHttp: true, // a local fake; real authorities are https
    credential: 'sk_demo_not_a_real_key',
    requiredCapability: 'meter.requests',
  },
});
console.log(`node budget ${sentinel.nodeBudgetUnits} units, stale window ${sentinel.staleWindowSeconds} s`);
sentinel.onTransition((e) => console.log(`        transition ${e.from} → ${e.to} (${e.reason})`));

const story = [
  [0, 'authority healthy', () => { authorityUp = true; }],
  [4, 'authority stops answering', () => { authorityUp = false; }],
  [13, 'authority back', () => { authorityUp = true; }],
  [18, 'end', null],
];

let admitted = 0;
let refused = 0;
const load = setInterval(() => (sentinel.admit(1) ? admitted++ : refused++), 50); // 20 units/s

const started = Date.now();
const print = setInterval(() => {
  const r = sentinel.readiness();
  const t = ((Date.now() - started) / 1000).toFixed(1).padStart(5);
  const age = r.evidenceAgeSeconds === null ? '   -' : r.evidenceAgeSeconds.toFixed(1).padStart(4);
  console.log(`${t}s  ${r.status.padEnd(9)} ${r.reason.padEnd(21)} age ${age}s  unverified ${String(sentinel.unverifiedUnits).padStart(3)}/${sentinel.nodeBudgetUnits}  admitted ${admitted} refused ${refused}`);
}, 500);

for (const [at, title, act] of story) {
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + at * 1000 - Date.now())));
  console.log(`-- ${at}s: ${title}`);
  act?.();
}
clearInterval(load);
clearInterval(print);
sentinel.close();
authority.closeAllConnections();
authority.close();
