// The framework glue's options have one home, js/options-catalog.js: the typings' option fields
// (js/common.d.ts, js/fastify.d.ts) and the option tables of docs/frameworks.md are generated from
// it (`node scripts/gen-js-options.mjs`), and every option it lists is checked by the entry point
// it belongs to, with an ERR_SPEND_SENTINEL_CONFIG naming the option.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createRequire } from 'node:module';
import { COMMAND, generatedFiles } from '../scripts/gen-js-options.mjs';

const require = createRequire(import.meta.url);
const { PROBES, FASTIFY_PLUGIN, ADMISSION, SHUTDOWN } = require('../js/options-catalog.js');
const { createProbes } = require('../js/probes.js');
const { createAdmission } = require('../js/admission.js');
const { gracefulShutdown } = require('../js/shutdown.js');

/** The first lines where `actual` and `expected` part, for the failure message. */
function firstDifference(actual, expected) {
  const a = actual.split('\n');
  const e = expected.split('\n');
  const i = a.findIndex((line, n) => line !== e[n]);
  const at = i === -1 ? a.length : i;
  return `line ${at + 1}:\n  file:    ${a[at] ?? '(end)'}\n  catalog: ${e[at] ?? '(end)'}`;
}

test('the typings and the docs tables say what the option catalog says', () => {
  const stale = generatedFiles().filter(({ actual, expected }) => actual !== expected);
  assert.deepEqual(
    stale.map(({ file }) => file),
    [],
    `these files disagree with js/options-catalog.js; to rewrite them run \`${COMMAND}\`\n\n${stale
      .map(({ file, actual, expected }) => `${file}, ${firstDifference(actual, expected)}`)
      .join('\n')}`,
  );
});

/** Enough of a Sentinel for the option checks, which run before anything else is asked of it. */
const fakeSentinel = {
  ...Object.fromEntries(['readiness', 'admit', 'isServing', 'onTransition', 'drain', 'close', 'metricFamilies'].map((m) => [m, () => null])),
  refusalReason(units) {
    if (typeof units !== 'number') throw Object.assign(new TypeError('units: must be a finite number ≥ 0'), { code: 'ERR_SPEND_SENTINEL_UNITS' });
    return null;
  },
};

/** Each entry point, the catalog sections it reads, and a call with `options`. */
const ENTRY_POINTS = [
  { where: 'probes', sections: [PROBES], call: (options) => createProbes('probes', fakeSentinel, options) },
  { where: 'spendSentinel', sections: [PROBES, FASTIFY_PLUGIN], call: (options) => createProbes('spendSentinel', fakeSentinel, options, FASTIFY_PLUGIN) },
  { where: 'admission', sections: [ADMISSION], call: (options) => createAdmission('admission', fakeSentinel, options, () => {}) },
  { where: 'gracefulShutdown', sections: [SHUTDOWN], call: (options) => gracefulShutdown('gracefulShutdown', http.createServer(), fakeSentinel, options) },
];

function errorOf(call) {
  try {
    const made = call();
    made?.close?.();
    made?.dispose?.();
  } catch (err) {
    return err;
  }
  return null;
}

for (const { where, sections, call } of ENTRY_POINTS) {
  const names = sections.flatMap((section) => section.options.map((option) => option.name));

  test(`${where}: every option of the catalog is checked, and no other is accepted`, () => {
    for (const name of names) {
      const err = errorOf(() => call({ [name]: Symbol('not an option value') }));
      assert.equal(err?.code, 'ERR_SPEND_SENTINEL_CONFIG', `${name}: a symbol is refused (${err?.message})`);
      assert.ok(err.message.startsWith(`${where}: ${name}: `), `${name}: the message names it: ${err.message}`);
    }
    const err = errorOf(() => call({ notAnOption: 1 }));
    assert.equal(err?.message, `${where}: notAnOption: is not an option (known: ${names.join(', ')})`);
  });
}

test('a kind refuses with its own rule, in the words the docs and typings quote', () => {
  const err = errorOf(() => createProbes('probes', fakeSentinel, { checkTimeoutMs: 0 }));
  const rule = PROBES.options.find((option) => option.name === 'checkTimeoutMs').kind.rule;
  assert.equal(err?.message, `probes: checkTimeoutMs: must be ${rule} (got 0)`);
});
