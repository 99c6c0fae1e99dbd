// `spend-sentinel window` and `computeBudget`: the budget calculator uses the addon's own budget
// rules (README, The budget math), so its answers and its refusals are those of `new Sentinel`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { runNode, catchError } from './helpers/wait.mjs';
import { documentationFiles } from './helpers/readme-snippets.mjs';

const require = createRequire(import.meta.url);
const { computeBudget, Sentinel } = require('spend-sentinel');
const CLI = fileURLToPath(new URL('../js/cli.js', import.meta.url));
const window = (...flags) => runNode([CLI, 'window', ...flags], { timeoutMs: 10_000 });
/** A line of the call-rate table: its cells, in order, separated by padding. */
const row = (...cells) => new RegExp(`^ {2}${cells.map((c) => c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join(' {2,}')}$`, 'm');

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

test('bad and missing flags exit 1 with the rule in one line and a hint', async () => {
  for (const [flags, rule] of [
    [['--budget', '200', '--rate', '20', '--nodes', '2', '--share', '0.5'], /give either --nodes or --share/],
    [['--rate', '20'], /--budget: is required/],
    [['--budget', 'abc', '--rate', '20'], /--budget: must be a finite number greater than 0 \(got "abc"\)/],
    [['--budget', '200', '--rate', '20', '--nodes', '1.5'], /--nodes: must be a whole number/],
    [['--budget', '200', '--rate', '20', '--bogus', '1'], /^spend-sentinel: window: unknown flag --bogus$/m],
    [['--budget', '200', '--rate', '20', 'extra'], /^spend-sentinel: window: unexpected argument "extra"$/m],
  ]) {
    const run = await window(...flags);
    assert.equal(run.code, 1, `${flags.join(' ')}: ${run.stdout}`);
    assert.match(run.stderr, rule, flags.join(' '));
    assert.match(run.stderr, /^spend-sentinel: window: [^\n]+\nrun "spend-sentinel --help" for usage\n$/, flags.join(' '));
  }
});

// A fleet budget: the figures come from the addon (floor, pool, want, the settled grant for the
// live nodes, both windows) and the call rate from the default cadence at each window.
const FLEET = ['--budget', '20000', '--rate', '50', '--max-stale', '10', '--max-nodes', '25'];

test('the docs\' fleet: floor 200, pool 15000, grant 300 with 25 nodes alive, w 10 s; 4 s on the floor; at most 0.625 calls a second per node', async () => {
  const run = await window(...FLEET);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^floor {8}= b × reserve \/ max-nodes = 20000 × 0\.25 \/ 25 = 200 units$/m);
  assert.match(run.stdout, /^pool {9}= b × \(1 − reserve\) = 20000 × 0\.75 = 15000 units$/m);
  assert.match(run.stdout, /^want {9}= r × max-stale − floor = 50 × 10 − 200 = 300 units$/m);
  assert.match(run.stdout, /^grant {8}= min\(want, pool \/ live nodes\) = min\(300, 15000 \/ 25\) = 300 units \(25 of 25 nodes alive\)$/m);
  assert.match(run.stdout, /^node budget {2}= floor \+ grant = 200 \+ 300 = 500 units$/m);
  assert.match(run.stdout, /^stale window = min\(node budget \/ r, max-stale\) = min\(500 \/ 50, 10\) = 10 s$/m);
  assert.match(run.stdout, /first 44\.9 s at least/);
  assert.match(run.stdout, /200 units, stale window min\(200 \/ 50, 10\) = 4 s\.$/m);
  assert.match(run.stdout, row('leased', '10 s', '3–5 s', '≤ 0.25/s', '≤ 6.25/s'));
  assert.match(run.stdout, row('on the floor', '4 s', '1.2–2 s', '≤ 0.625/s', '≤ 15.625/s'));
  assert.doesNotMatch(run.stdout, /More than one call a second/);
});

test('the fleet example docs/fleet.md used to show (b 2000): 6.25 calls a second per node on its 0.4 s floor, 156.25 for 25 nodes, and a warning', async () => {
  const run = await window('--budget', '2000', '--rate', '50', '--max-stale', '10', '--max-nodes', '25');
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, row('on the floor', '0.4 s', '0.12–0.2 s', '≤ 6.25/s', '≤ 156.25/s'));
  assert.match(run.stdout, /^More than one call a second per node: new Sentinel logs a warning\. A stale window of at least$/m);
  assert.match(run.stdout, /^2\.5 s on the floor keeps it to one/m);
});

test('--live-nodes sets the grant: the equal split of the pool without --max-stale; and a fixed budget counts its --nodes', async () => {
  const run = await window('--budget', '2000', '--rate', '50', '--max-nodes', '25', '--live-nodes', '10');
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^want {9}= no limit without --max-stale: all the pool it can get$/m);
  assert.match(run.stdout, /^grant {8}= pool \/ live nodes = 1500 \/ 10 = 150 units \(10 of 25 nodes alive\)$/m);
  assert.match(run.stdout, /^stale window = node budget \/ r = 170 \/ 50 = 3\.4 s$/m);
  assert.match(run.stdout, /^ +window +pause +per node +10 nodes$/m);
  const bare = await window('--budget', '2000', '--rate', '50', '--max-nodes', '25', '--live-nodes', '10', '--reserve', '0');
  assert.match(bare.stdout, /no floor \(reserve 0\), not_ready \(no_fleet_lease\); its refreshes plan with the equal split's window, 1\.6 s\./);
  const fixed = await window('--budget', '200', '--rate', '20', '--nodes', '2');
  assert.match(fixed.stdout, row('window', 'pause', 'per node', '2 nodes'));
  assert.match(fixed.stdout, row('5 s', '1.5–2.5 s', '≤ 0.5/s', '≤ 1/s'));
});

test('fleet flags are refused with the rule, in flag names, and what was typed', async () => {
  for (const [flags, rule] of [
    [[...FLEET, '--live-nodes', '26'], /^spend-sentinel: window: --live-nodes: must be a whole number from 1 to --max-nodes = 25 \(got "26"\); nodes beyond maxNodes have no floor of their own$/m],
    [[...FLEET, '--live-nodes', 'two'], /--live-nodes: must be a whole number from 1 to --max-nodes = 25 \(got "two"\)/],
    [[...FLEET, '--live-nodes', '0'], /--live-nodes: .* \(got "0"\)/],
    [['--budget', '200', '--rate', '20', '--live-nodes', '2'], /^spend-sentinel: window: --live-nodes: only for a fleet budget \(--max-nodes\)/m],
    [['--budget', '200', '--rate', '20', '--reserve', '0.5'], /^spend-sentinel: window: --max-nodes: is required/m],
    [[...FLEET, '--nodes', '2'], /^spend-sentinel: window: --nodes: cannot be combined with a fleet budget \(--max-nodes\)/m],
    [[...FLEET, '--reserve', '1'], /^spend-sentinel: window: --reserve: .* \(got "1"\)/m],
    [[...FLEET, '--lease-seconds', '4'], /^spend-sentinel: window: --lease-seconds: .* \(got "4"\)/m],
    [['--budget', '2000', '--rate', '50', '--max-nodes', '25', '--max-stale', '40'], /--max-stale: must be at most/],
  ]) {
    const run = await window(...flags);
    assert.equal(run.code, 1, `${flags.join(' ')}: ${run.stdout}`);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, rule, flags.join(' '));
    assert.equal(run.stderr.split('\n').length, 3, `one line and a hint: ${run.stderr}`);
  }
});

test('the calculator\'s fleet figures are those a fleet Sentinel runs with on its floor', async () => {
  const { windowFigures } = require('../js/native.js');
  const budget = { unverifiedUnits: 20000, maxUnitsPerSecond: 50, maxStaleSeconds: 10 };
  const figures = windowFigures({ ...budget, fleet: { maxNodes: 25 } });
  // Redis is never reached (a closed port): the node runs on its floor.
  const sentinel = new Sentinel({
    budget: { ...budget, fleet: { redis: 'redis://127.0.0.1:1', name: 'window-spec', maxNodes: 25 } },
    authority: { inspect: async () => 'valid' },
  });
  try {
    assert.equal(sentinel.fleet().floorUnits, figures.fleet.floorUnits);
    assert.equal(sentinel.nodeBudgetUnits, figures.fleet.floorOnly.nodeBudgetUnits);
    assert.equal(sentinel.staleWindowSeconds, figures.fleet.floorOnly.staleWindowSeconds);
  } finally {
    await sentinel.close();
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

test('every calculator example in README.md and docs/ shows what the calculator prints (the first lines of it)', async () => {
  const examples = [];
  for (const file of documentationFiles()) {
    const text = readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
    for (const [, command, shown] of text.matchAll(/^```sh\nnpx spend-sentinel window ([^\n]*)\n([\s\S]*?)\n```$/gm)) {
      examples.push({ file, flags: command.replace(/#.*$/, '').trim().split(/\s+/), shown: shown.split('\n') });
    }
  }
  assert.ok(examples.some((e) => e.file === 'README.md') && examples.some((e) => e.flags.includes('--max-nodes')), `the README's and a fleet's: ${JSON.stringify(examples.map((e) => e.file))}`);
  for (const { file, flags, shown } of examples) {
    const run = await window(...flags);
    assert.equal(run.code, 0, `${file}: ${flags.join(' ')}: ${run.stderr}`);
    assert.deepEqual(run.stdout.split('\n').slice(0, shown.length), shown, `${file}: window ${flags.join(' ')}`);
  }
});
