// Every JavaScript and TypeScript example of README.md and of every page in docs/ (docs/*.md, found
// by listing the directory, so a new page is checked without being named here) compiles under
// `tsc --strict`, against this package's own typings (resolved by name, `spend-sentinel/...`, as a
// user's code resolves them). Each checked block is a test named after its place, `docs/api.md:LINE`.
//
// Marker convention: each ```js / ```ts block of these files is preceded (on the line right before
// its fence) by an HTML comment that says what it is — invisible on GitHub and npm:
//
//   <!-- check-snippet -->              the block is a complete program: compiled as is.
//   <!-- check-snippet                  the same, with declarations of what the reader's own code
//   declare const app: import('express').Express;    provides (the app, `recordUsage`, a pool…):
//   declare function recordUsage(units: number): void;   ambient declarations (a global .d.ts), so
//   -->                                 they type what the snippet uses and cannot change it.
//   <!-- fragment: why -->              not a program (e.g. a top-level `return` from a handler
//                                       body, or `/* as before */` in an object): not compiled.
//   <!-- runs-as-pasted: app.cjs (…) -->  a whole program, run as pasted under that file name by
//                                       doc-programs.spec.mjs (a stronger check than compiling);
//                                       a ```ts one is compiled here too (it must, to run at all).
//
// A block with none of these markers fails the test, so a new example is checked or says why not.
//
// How a block is compiled: ```ts as an ES module (.mts); ```js as CommonJS (.cjs, `require`) unless
// it has `import` statements (then .mjs), with `checkJs`, so `require('spend-sentinel/express')` is
// typed as an import. Options: strict, module/moduleResolution nodenext, target es2022, types node.
// Each block is its own program (the declarations of two blocks may differ). Only the block's own
// diagnostics count (skipLibCheck: the typings themselves are checked by `tsc -p __test__`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileSnippet, documentationFiles, documentationSnippets } from './helpers/readme-snippets.mjs';

const files = documentationFiles();
const snippets = documentationSnippets(files);

test('README.md and docs/*.md have js/ts examples, and each says whether it is checked (check-snippet) or why not (fragment: …)', () => {
  assert.equal(files[0], 'README.md');
  assert.ok(files.length > 1 && files.slice(1).every((f) => /^docs\/[^/]+\.md$/.test(f)), `the pages of docs/: ${files}`);
  assert.ok(snippets.length >= 5, `found ${snippets.length} js/ts blocks`);
  assert.ok(snippets.some((s) => s.file === 'README.md') && snippets.some((s) => s.file !== 'README.md'), 'examples in README.md and in docs/');
  const unmarked = snippets.filter((s) => s.marker === null).map((s) => `${s.file}:${s.line}`);
  assert.deepEqual(unmarked, [], 'blocks without <!-- check-snippet -->, <!-- runs-as-pasted: name --> or <!-- fragment: reason --> right before the fence');
  const checked = snippets.filter((s) => s.marker === 'check');
  assert.ok(checked.length >= 4, `${checked.length} blocks checked`);
  for (const lang of ['js', 'ts']) assert.ok(checked.some((s) => s.lang === lang), `a checked \`\`\`${lang} block`);
});

for (const snippet of snippets.filter((s) => s.marker === 'check' || (s.marker === 'run' && s.lang === 'ts'))) {
  test(`${snippet.file}:${snippet.line} (\`\`\`${snippet.lang}) compiles under --strict`, () => {
    assert.deepEqual(compileSnippet(snippet), []);
  });
}

test('the checker can fail: a strict error and an unresolved package in a snippet are reported', () => {
  const bad = compileSnippet({
    line: 1,
    lang: 'ts',
    code: "import spendSentinel from 'spend-sentinel/fastify';\nspendSentinel.admission(sentinel, { units: (req) => req.body.units });\nimport missing from 'no-such-package';\nvoid missing;\n",
    declarations: "declare const sentinel: import('spend-sentinel').Sentinel;",
  });
  assert.ok(bad.some((d) => d.includes('TS18046')), bad.join('\n')); // 'req.body' is of type 'unknown'
  assert.ok(bad.some((d) => d.includes('TS2307')), bad.join('\n')); // cannot find module
});
