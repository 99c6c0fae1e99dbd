// The read-outs say one thing wherever they are described. `unverifiedUnits`, the getter, is the
// older name of `exposureUnits`, kept as a deprecated alias: its JSDoc in the generated typings
// (from the Rust doc comment) carries `@deprecated`, which editors show, and docs/api.md says so;
// the option `budget.unverifiedUnits` (b, the fleet-wide ceiling) is a different thing and is not
// deprecated. `nodeBudgetUnits` (and its gauge) is b × share for a fixed budget and the floor +
// the current grant for a fleet (docs/fleet.md): every description says both.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const { metricCatalog } = createRequire(import.meta.url)('../js/native.js');

const read = (file) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');

/** The JSDoc block right above the line `declaration` of `typings` ('' when there is none). */
function jsdocOf(typings, declaration) {
  const lines = typings.split('\n');
  const at = lines.findIndex((line) => line.trim() === declaration);
  assert.ok(at > 0, `${declaration} is declared`);
  if (!lines[at - 1].trim().endsWith('*/')) return '';
  let start = at - 1;
  while (!lines[start].trim().startsWith('/**')) start -= 1;
  return lines.slice(start, at).join('\n');
}

/** The row of the API table of docs/api.md whose first cell starts with `start`. */
function apiRow(start) {
  const row = read('docs/api.md').split('\n').find((line) => line.startsWith(`| ${start}`));
  assert.ok(row, `docs/api.md has a row for ${start}`);
  return row;
}

test('the getter unverifiedUnits is @deprecated in favour of exposureUnits in the typings; exposureUnits is not', () => {
  const typings = read('binding.d.ts');
  assert.match(jsdocOf(typings, 'get unverifiedUnits(): number'), /@deprecated Use `exposureUnits`/);
  assert.doesNotMatch(jsdocOf(typings, 'get exposureUnits(): number'), /@deprecated/);
});

test('the option budget.unverifiedUnits (b) is not deprecated', () => {
  assert.doesNotMatch(jsdocOf(read('js/option-types.d.ts'), 'unverifiedUnits: number;'), /@deprecated/);
});

test('docs/api.md says the getter unverifiedUnits is deprecated, exposureUnits its name', () => {
  assert.match(apiRow('`exposureUnits`'), /`unverifiedUnits` is deprecated/);
});

test('nodeBudgetUnits is b × share for a fixed budget, floor + grant for a fleet, wherever it is described', () => {
  const descriptions = {
    'binding.d.ts (the getter)': jsdocOf(read('binding.d.ts'), 'get nodeBudgetUnits(): number'),
    'docs/api.md': apiRow('`exposureUnits`'),
    'README.md (the budget math)': read('README.md').split('\n').find((line) => line.startsWith('- **node budget**')),
    'docs/metrics.md': read('docs/metrics.md').split('\n').find((line) => line.startsWith('| `spend_sentinel_node_budget_units` | gauge')),
    'the gauge\'s HELP': metricCatalog().find((spec) => spec.name === 'spend_sentinel_node_budget_units').help,
  };
  for (const [where, text] of Object.entries(descriptions)) {
    assert.match(text ?? '', /b [×x] share/, `${where}: a fixed budget's`);
    assert.match(text ?? '', /floor \+ (the current )?grant/, `${where}: a fleet's`);
  }
});
