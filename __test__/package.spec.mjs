// The package as users load it: CJS and ESM entry points, the per-platform package, and a
// sentinel that is garbage-collected without close().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { runNode } from './helpers/wait.mjs';
import { PUBLIC_API, INTERNAL, namedKeys } from './helpers/public-api.mjs';

const require = createRequire(import.meta.url);
const root = new URL('../', import.meta.url);
const json = (path) => JSON.parse(readFileSync(new URL(path, root), 'utf8'));

test('require and import by package name expose the same Sentinel', async () => {
  const cjs = require('spend-sentinel');
  const esm = await import('spend-sentinel');
  assert.equal(typeof cjs.Sentinel, 'function');
  assert.equal(esm.Sentinel, cjs.Sentinel);
});

test('every entry point exports exactly the public names, in CJS and ESM; no internal leaks from index.js', async () => {
  const entries = Object.keys(json('package.json').exports).filter((k) => k !== './package.json').map((k) => `spend-sentinel${k.slice(1)}`);
  assert.deepEqual(entries.sort(), Object.keys(PUBLIC_API).sort(), 'PUBLIC_API lists every entry point of "exports"');
  for (const [entry, names] of Object.entries(PUBLIC_API)) {
    const cjs = require(entry);
    assert.deepEqual(Object.keys(cjs).filter((k) => k !== 'default').sort(), [...names].sort(), `require('${entry}')`);
    assert.deepEqual(namedKeys(await import(entry)), [...names].sort(), `import * from '${entry}'`);
  }
  const main = require('spend-sentinel');
  for (const name of INTERNAL) assert.equal(main[name], undefined, `${name} is not exported`);
  // Each public name is documented: README.md shows it in code.
  const readme = readFileSync(new URL('README.md', root), 'utf8');
  for (const name of Object.values(PUBLIC_API).flat()) assert.match(readme, new RegExp(`\\b${name}\\b[(\\s,.}'\`]`), `README.md shows ${name}`);
});

test('the framework entry points load by name, in CJS and ESM, with their typings', async () => {
  const express = require('spend-sentinel/express');
  const expressEsm = await import('spend-sentinel/express');
  for (const name of ['probes', 'admission', 'gracefulShutdown']) {
    assert.equal(typeof express[name], 'function', name);
    assert.equal(expressEsm[name], express[name], `ESM named export ${name}`);
  }
  const fastify = require('spend-sentinel/fastify');
  const fastifyEsm = await import('spend-sentinel/fastify');
  assert.equal(fastifyEsm.default, fastify);
  assert.equal(typeof fastify.admission, 'function');
  assert.equal(typeof fastify.gracefulShutdown, 'function');
  const exportsMap = json('package.json').exports;
  for (const entry of ['./express', './fastify']) {
    assert.ok(readFileSync(new URL(exportsMap[entry].types, root), 'utf8').length > 0, `${entry} types`);
  }
});

test('the published file list carries the JavaScript glue, its typings and the CLI', () => {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' });
  const files = JSON.parse(out)[0].files.map((f) => f.path);
  const expected = ['index.js', 'index.d.ts', 'js/express.js', 'js/fastify.js', 'js/cli.js', 'js/common.d.ts', 'js/express.d.ts', 'js/fastify.d.ts'];
  for (const f of expected) assert.ok(files.includes(f), `${f} is packed`);
  assert.deepEqual(
    files.filter((f) => /^(__test__|src|examples|bench|target)\//.test(f)),
    [],
    'no tests, sources, examples or build output in the tarball',
  );
});

test('the linux-x64-gnu package is the one the loader falls back to', () => {
  const platform = json('npm/linux-x64-gnu/package.json');
  const loader = readFileSync(new URL('index.js', root), 'utf8');
  assert.ok(loader.includes(`require('${platform.name}')`), `index.js requires ${platform.name}`);
  assert.equal(platform.version, json('package.json').version);
  assert.equal(platform.main, `${json('package.json').napi.binaryName}.linux-x64-gnu.node`);
  assert.deepEqual([platform.os, platform.cpu, platform.libc], [['linux'], ['x64'], ['glibc']]);
});

test('a sentinel collected without close() stops refreshing', async () => {
  const fixture = new URL('fixtures/collected.mjs', import.meta.url).pathname;
  const run = await runNode(['--expose-gc', fixture], { timeoutMs: 20_000 });
  assert.equal(run.code, 0, run.stderr);
  const { afterCollection, later } = JSON.parse(run.stdout);
  assert.ok(afterCollection >= 1);
  assert.equal(later, afterCollection, 'no inspect call after the sentinel was collected');
});
