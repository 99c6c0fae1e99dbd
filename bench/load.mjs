// Readiness under load (docs/benchmarks.md, Readiness under load): a node with budget 500 and
// r = 100 (w = 5 s, the default cadence: pauses of 1.5 to 2.5 s) admits 1-unit requests at 1×,
// 4× and 20× r for 10 s each, against a local HTTP authority that answers in 50 ms, while
// readiness() is sampled every 10 ms. Printed per run: the share of samples that said not_ready
// (and why), the share of units refused, the refreshes started on demand a second, and every call
// to the authority a second.
//
// Three authorities: `valid` always; `401` and `429` after a first valid answer (the node has
// evidence, then the credential is refused or the authority rate-limits). Refresh on demand
// follows only a valid answer, so under 401 and 429 the calls keep the normal cadence's rate
// (about one per 2 s), whatever the load.
//
// Not part of npm test; asserts nothing. About 90 s (1.7 min):
//   node bench/load.mjs [--seconds 10] [--authorities valid,401,429] [--rates 1,4,20]
import http from 'node:http';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';

const require = createRequire(import.meta.url);
const { Sentinel } = require('spend-sentinel');

const NODE_BUDGET = 500;
const R = 100; // units a second: w = 500 / 100 = 5 s
const LATENCY_MS = 50;
const SAMPLE_MS = 10;
const TICK_MS = 5; // how often the load generator catches up with its schedule

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    authorities: { type: 'string', default: 'valid,401,429' },
    rates: { type: 'string', default: '1,4,20' },
  },
});
const SECONDS = Number(args.seconds);
const AUTHORITIES = args.authorities.split(',');
const RATES = args.rates.split(',').map(Number);

/** A local authority answering after LATENCY_MS: valid first, then `answer` (valid, 401 or 429). */
async function startAuthority(answer) {
  let calls = 0;
  const server = http.createServer((req, res) => {
    calls += 1;
    const first = calls === 1;
    setTimeout(() => {
      if (first || answer === 'valid') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ capabilities: ['metered-api'] }));
      } else {
        res.writeHead(Number(answer), { 'content-type': 'application/json', 'retry-after': '1' });
        res.end(JSON.stringify({ error: answer === '429' ? 'rate limited' : 'unauthorized' }));
      }
    }, LATENCY_MS);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1/account`,
    get calls() {
      return calls;
    },
    close() {
      server.closeAllConnections(); // the addon's HTTP client keeps its connections alive
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

const demandRefreshes = (sentinel) => Number(/^spend_sentinel_refresh_on_demand_total (\S+)$/m.exec(sentinel.metrics())[1]);

/** One run: `rate` × r units a second for SECONDS against an authority answering `answer`. */
async function run(answer, rate) {
  const authority = await startAuthority(answer);
  const sentinel = new Sentinel({
    budget: { unverifiedUnits: NODE_BUDGET, maxUnitsPerSecond: R },
    authority: { url: authority.url, credential: 'bench-token', requiredCapability: 'metered-api', allowInsecureHttp: true },
  });
  await sentinel.whenReady({ timeoutMs: 5000 });
  const callsBefore = authority.calls;
  const demandBefore = demandRefreshes(sentinel);
  const unitsPerMs = (rate * R) / 1000;
  const samples = new Map();
  let sampleCount = 0;
  let issued = 0;
  let refused = 0;
  const t0 = performance.now();
  const sampler = setInterval(() => {
    const { status, reason } = sentinel.readiness();
    const key = `${status}/${reason}`;
    samples.set(key, (samples.get(key) ?? 0) + 1);
    sampleCount += 1;
  }, SAMPLE_MS);
  await new Promise((resolve) => {
    const load = setInterval(() => {
      const elapsed = performance.now() - t0;
      const due = Math.floor(Math.min(elapsed, SECONDS * 1000) * unitsPerMs);
      for (; issued < due; issued += 1) if (!sentinel.admit(1)) refused += 1;
      if (elapsed >= SECONDS * 1000) {
        clearInterval(load);
        resolve();
      }
    }, TICK_MS);
  });
  clearInterval(sampler);
  const seconds = (performance.now() - t0) / 1000;
  const row = {
    answer,
    rate,
    notReady: sumWhere(samples, (k) => k.startsWith('not_ready')) / sampleCount,
    reasons: [...samples].map(([k, n]) => `${k} ${((100 * n) / sampleCount).toFixed(1)}%`).join(', '),
    refused: refused / issued,
    demandPerSecond: (demandRefreshes(sentinel) - demandBefore) / seconds,
    callsPerSecond: (authority.calls - callsBefore) / seconds,
  };
  await sentinel.close();
  await authority.close();
  return row;
}

function sumWhere(counts, predicate) {
  let sum = 0;
  for (const [key, n] of counts) if (predicate(key)) sum += n;
  return sum;
}

const pct = (x) => `${(100 * x).toFixed(1)} %`;

console.log(
  `node budget ${NODE_BUDGET}, r = ${R}/s (w = ${NODE_BUDGET / R} s), authority latency ${LATENCY_MS} ms, ` +
    `${SECONDS} s a run, readiness sampled every ${SAMPLE_MS} ms; Node ${process.version}`,
);
console.log('| authority | load | not_ready samples | units refused | demand refreshes/s | authority calls/s | samples by status/reason |');
console.log('|---|---:|---:|---:|---:|---:|---|');
for (const answer of AUTHORITIES) {
  for (const rate of RATES) {
    const row = await run(answer, rate);
    const label = answer === 'valid' ? 'valid' : `valid, then ${answer}`;
    console.log(
      `| ${label} | ${rate} × r | ${pct(row.notReady)} | ${pct(row.refused)} | ${row.demandPerSecond.toFixed(2)} | ` +
        `${row.callsPerSecond.toFixed(2)} | ${row.reasons} |`,
    );
  }
}
