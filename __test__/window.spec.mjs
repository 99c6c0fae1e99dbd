// `spend-sentinel window` and `computeBudget`: the budget calculator uses the addon's own budget
// rules (README, The budget math), so its answers and its refusals are those of `new Sentinel`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { runNode, catchError } from './helpers/wait.mjs';

const require = createRequire(import.meta.url);
const { computeBudget, Sentinel } = require('spend-sentinel');
const CLI = fileURLToPath(new URL('../js/cli.js', import.meta.url));
const window = (...flags) => runNode([CLI, 'window', ...flags], { timeoutMs: 10_000 });

test('the seed example: b = 200, r = 20, 2 nodes → 100 units, 5 s, with the formula', async () => {
  const run = await window('--budget', '200', '--rate', '20', '--nodes', '2');
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^node budget {2}= b × share = 200 × 1\/2 = 100 units$/m);
  assert.match(run.stdout, /^stale window = node budget \/ r = 100 \/ 20 = 5 s$/m);
});

test('share 0.25 → 50 units, 2.5 s', async () => {
  const run = await window('--budget', '200', '--rate', '20', '--share', '0.25');
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /= 200 × 0\.25 = 50 units$/m);
  assert.match(run.stdout, /= 50 \/ 20 = 2\.5 s$/m);
});

test('--max-stale lowers the window, and one above the ceiling is refused naming the flag', async () => {
  const lowered = await window('--budget', '200', '--rate', '20', '--nodes', '2', '--max-stale', '4');
  assert.equal(lowered.code, 0, lowered.stderr);
  assert.match(lowered.stdout, /lowered to --max-stale: 4 s/);
  assert.match(lowered.stdout, /evidence older than 4 s makes it not_ready/);
  const refused = await window('--budget', '200', '--rate', '20', '--nodes', '2', '--max-stale', '6');
  assert.equal(refused.code, 1);
  assert.equal(refused.stdout, '');
  assert.match(refused.stderr, /--max-stale: must be at most .* = 5 s \(got "6"\)/);
});

test('bad and missing flags exit 1 with the rule and the usage', async () => {
  for (const [flags, rule] of [
    [['--budget', '200', '--rate', '20', '--nodes', '2', '--share', '0.5'], /give either --nodes or --share/],
    [['--rate', '20'], /--budget: is required/],
    [['--budget', 'abc', '--rate', '20'], /--budget: must be a finite number greater than 0 \(got "abc"\)/],
    [['--budget', '200', '--rate', '20', '--nodes', '1.5'], /--nodes: must be a whole number/],
    [['--budget', '200', '--rate', '20', '--bogus', '1'], /Unknown option '--bogus'/],
  ]) {
    const run = await window(...flags);
    assert.equal(run.code, 1, `${flags.join(' ')}: ${run.stdout}`);
    assert.match(run.stderr, rule, flags.join(' '));
    assert.match(run.stderr, /usage: spend-sentinel/);
  }
});

test('computeBudget answers what a Sentinel with the same budget uses, and refuses with the same error', () => {
  for (const budget of [
    { unverifiedUnits: 200, maxUnitsPerSecond: 20, nodes: 2 },
    { unverifiedUnits: 200, maxUnitsPerSecond: 20, share: 0.25 },
    { unverifiedUnits: 1000, maxUnitsPerSecond: 7, maxStaleSeconds: 30 },
  ]) {
    const answer = computeBudget(budget);
    const sentinel = new Sentinel({ budget, authority: { inspect: async () => 'valid' } });
    try {
      assert.equal(answer.nodeBudgetUnits, sentinel.nodeBudgetUnits);
      assert.equal(answer.staleWindowSeconds, sentinel.staleWindowSeconds);
    } finally {
      sentinel.close();
    }
  }
  const bad = { unverifiedUnits: 200, maxUnitsPerSecond: 20, nodes: 2, maxStaleSeconds: 6 };
  const fromCalculator = catchError(() => computeBudget(bad));
  const fromSentinel = catchError(() => new Sentinel({ budget: bad, authority: { inspect: async () => 'valid' } }));
  assert.equal(fromCalculator.code, 'ERR_SPEND_SENTINEL_CONFIG');
  assert.equal(fromCalculator.message, fromSentinel.message);
});
