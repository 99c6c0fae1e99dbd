// A/B of fire()'s success overhead: js/breaker.js now against js/breaker.js at a git revision
// (default c77e131, before fallback/signals/bulkhead), both over the addon built now, with cockatiel,
// in one process, interleaved round by round so that a loaded machine slows both alike. Prints
// medians; asserts nothing. Run: node bench/breaker-ab.mjs [revision]   (after npm run build).
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { writeFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { circuitBreaker, handleAll, ConsecutiveBreaker } from 'cockatiel';
const require = createRequire(import.meta.url);
const rev = process.argv[2] ?? 'c77e131';
// The old file requires './native', so it is written next to the new one, and removed at once.
const oldPath = fileURLToPath(new URL(`../js/.ab-breaker-${process.pid}.js`, import.meta.url));
writeFileSync(oldPath, execFileSync('git', ['show', `${rev}:js/breaker.js`], { cwd: fileURLToPath(new URL('..', import.meta.url)) }));
let Old;
try {
  Old = require(oldPath).CircuitBreaker;
} finally {
  rmSync(oldPath);
}
const New = require('../js/breaker.js').CircuitBreaker;
const ok = async () => 1;
const N = 50_000, ROUNDS = 21;
async function time(f) { const s = process.hrtime.bigint(); for (let i = 0; i < N; i++) await f(); return Number(process.hrtime.bigint() - s) / N; }
const oldB = new Old({ name: 'old', timeoutMs: 0 });
const newB = new New({ name: 'new', timeoutMs: 0 });
const fb = new New({ name: 'fb', timeoutMs: 0, maxConcurrent: 1000, fallback: () => 0 });
const sigB = new New({ name: 'sig', timeoutMs: 0 });
const opts = { signal: new AbortController().signal };
const policy = circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) });
const rows = { base: [ok, []], old: [() => oldB.fire(ok), []], new: [() => newB.fire(ok), []], cockatiel: [() => policy.execute(ok), []], fallbackBulkhead: [() => fb.fire(ok), []], fireWithSignal: [() => sigB.fireWith(opts, ok), []] };
for (const [f] of Object.values(rows)) await time(f); // warm-up
const ratios = { old: [], new: [], fallbackBulkhead: [], fireWithSignal: [] };
for (let r = 0; r < ROUNDS; r++) {
  const t = {};
  for (const [k, [f, xs]] of Object.entries(rows)) { t[k] = await time(f); xs.push(t[k]); }
  const c = t.cockatiel - t.base;
  for (const k of Object.keys(ratios)) ratios[k].push((t[k] - t.base) / c);
}
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`old = js/breaker.js at ${rev}; medians of ${ROUNDS} interleaved rounds × ${N.toLocaleString('en-US')} calls`);
for (const [k, [, xs]] of Object.entries(rows)) console.log(k.padEnd(18), 'ns/call', med(xs).toFixed(1), 'overhead', (med(xs) - med(rows.base[1])).toFixed(1));
for (const [k, xs] of Object.entries(ratios)) console.log(k.padEnd(18), 'overhead × cockatiel (median of per-round ratios)', med(xs).toFixed(2));
