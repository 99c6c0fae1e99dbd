// The read-outs say one thing wherever they are described. `unverifiedUnits`, the getter, is the
// older name of `exposureUnits`, kept as a deprecated alias: its JSDoc in the generated typings
// (from the Rust doc comment) carries `@deprecated`, which editors show, and docs/api.md says so;
// the option `budget.unverifiedUnits` (b, the fleet-wide ceiling) is a different thing and is not
// deprecated.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

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
