// The package as users load it: CJS and ESM entry points, the per-platform package, and a
// sentinel that is garbage-collected without close().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runNode, runCommand } from './helpers/wait.mjs';
import { PUBLIC_API, INTERNAL, namedKeys } from './helpers/public-api.mjs';
import { GENERATED, changedSince, readGenerated } from '../scripts/build.mjs';
import { headingAnchors, posixJoin, relativeLinks } from './helpers/markdown-links.mjs';

const require = createRequire(import.meta.url);
const root = new URL('../', import.meta.url);
const json = (path) => JSON.parse(readFileSync(new URL(path, root), 'utf8'));

test('require and import by package name expose the same Sentinel', async () => {
  const cjs = require('spend-sentinel');
  const esm = await import('spend-sentinel');
  assert.equal(typeof cjs.Sentinel, 'function');
  assert.equal(esm.Sentinel, cjs.Sentinel);
});

test('every entry point exports exactly the public names, in CJS and ESM; no internal leaks from binding.js', async () => {
  const entries = Object.keys(json('package.json').exports).filter((k) => k !== './package.json').map((k) => `spend-sentinel${k.slice(1)}`);
  assert.deepEqual(entries.sort(), Object.keys(PUBLIC_API).sort(), 'PUBLIC_API lists every entry point of "exports"');
  for (const [entry, names] of Object.entries(PUBLIC_API)) {
    const cjs = require(entry);
    assert.deepEqual(Object.keys(cjs).filter((k) => k !== 'default').sort(), [...names].sort(), `require('${entry}')`);
    assert.deepEqual(namedKeys(await import(entry)), [...names].sort(), `import * from '${entry}'`);
  }
  const main = require('spend-sentinel');
  for (const name of INTERNAL) assert.equal(main[name], undefined, `${name} is not exported`);
  // Each public name is documented: README.md or a page of docs/ shows it in code.
  const pages = ['README.md', ...readdirSync(new URL('docs/', root)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  const documentation = pages.map((page) => readFileSync(new URL(page, root), 'utf8')).join('\n');
  for (const name of Object.values(PUBLIC_API).flat()) assert.match(documentation, new RegExp(`\\b${name}\\b[(\\s,.}'\`]`), `README.md or docs/ shows ${name}`);
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

/** The paths `npm pack` would put in the tarball. */
const packedFiles = () => JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' }))[0].files.map((f) => f.path);

test('the published file list carries the JavaScript glue, its typings, the CLI and the documentation', () => {
  const files = packedFiles();
  const expected = ['binding.js', 'binding.d.ts', 'js/express.js', 'js/fastify.js', 'js/cli.js', 'js/common.d.ts', 'js/express.d.ts', 'js/fastify.d.ts', 'README.md'];
  for (const f of expected) assert.ok(files.includes(f), `${f} is packed`);
  const pages = readdirSync(new URL('docs/', root)).map((f) => `docs/${f}`);
  assert.deepEqual(files.filter((f) => f.startsWith('docs/')).sort(), pages.sort(), 'every page of docs/ (and the README\'s image) is packed, so the README\'s links work in node_modules');
  assert.deepEqual(
    files.filter((f) => /^(__test__|examples|bench|target|scripts)\//.test(f) || (f.startsWith('src/') && !/\.(rs|lua)$/.test(f))),
    [],
    'no tests, examples, scripts or build output in the tarball; of src/ only the Rust sources (for build-from-source)',
  );
  for (const f of ['Cargo.toml', 'Cargo.lock', 'build.rs', 'src/lib.rs']) assert.ok(files.includes(f), `${f} is packed (build-from-source compiles it)`);
});

test('every relative link of README.md and docs/*.md names a packed file, and its #anchor a heading there', () => {
  const files = new Set(packedFiles());
  const pages = ['README.md', ...readdirSync(new URL('docs/', root)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  const broken = [];
  let links = 0;
  for (const page of pages) {
    for (const { line, target } of relativeLinks(readFileSync(new URL(page, root), 'utf8'))) {
      links += 1;
      const [path, anchor] = target.split('#');
      const file = path === '' ? page : posixJoin(page, path);
      if (!files.has(file)) {
        broken.push(`${page}:${line}: ${target} → ${file} is not in the package (write it as \`code\`, not a link, or ship it)`);
      } else if (anchor !== undefined && file.endsWith('.md') && !headingAnchors(readFileSync(new URL(file, root), 'utf8')).has(anchor)) {
        broken.push(`${page}:${line}: ${target} → no heading #${anchor} in ${file}`);
      }
    }
  }
  assert.ok(links > 20, `${links} relative links found`);
  assert.deepEqual(broken, []);
});

test('the link check can fail: a link outside the package, a missing anchor, and links in code are told apart', () => {
  const links = relativeLinks('See [a](docs/api.md#options) and ![img](x.svg) and [ext](https://e.com/x).\n```sh\n[not](a.md)\n```\n`[no](b.md)`\n');
  assert.deepEqual(links.map((l) => l.target), ['docs/api.md#options', 'x.svg']);
  assert.equal(posixJoin('docs/fleet.md', '../examples/x.mjs'), 'examples/x.mjs');
  assert.deepEqual([...headingAnchors('# A fleet that scales\n## Floor, grant and window\n## `budget.fleet` (Redis)\n## Floor, grant and window\n')], [
    'a-fleet-that-scales',
    'floor-grant-and-window',
    'budgetfleet-redis',
    'floor-grant-and-window-1',
  ]);
});


test('napi build names its loader and typings binding.js and binding.d.ts, apart from the hand-written entry js/main.js', () => {
  const pkg = json('package.json');
  assert.deepEqual(GENERATED, { js: 'binding.js', dts: 'binding.d.ts' });
  assert.ok(pkg.scripts['build:debug'].endsWith('--js binding.js --dts binding.d.ts'), pkg.scripts['build:debug']);
  for (const name of Object.values(GENERATED)) assert.ok(pkg.files.includes(name), `${name} is in package.json's files`);
  for (const name of ['index.js', 'index.d.ts']) assert.ok(!existsSync(new URL(name, root)), `no ${name} at the root`);
  assert.equal(pkg.main, 'js/main.js');
});

test('npm run build tells the generated files it changed from those it left as they were', () => {
  const dir = mkdtempSync(join(tmpdir(), 'spend-sentinel-generated-'));
  try {
    writeFileSync(join(dir, GENERATED.js), 'loader');
    const before = readGenerated(dir);
    assert.deepEqual(changedSince(before), []);
    writeFileSync(join(dir, GENERATED.dts), 'typings');
    writeFileSync(join(dir, GENERATED.js), 'loader, regenerated');
    assert.deepEqual(changedSince(before).map(({ name }) => name), [GENERATED.js, GENERATED.dts]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the linux-x64-gnu package is the one the loader falls back to', () => {
  const platform = json('npm/linux-x64-gnu/package.json');
  const loader = readFileSync(new URL('binding.js', root), 'utf8');
  assert.ok(loader.includes(`require('${platform.name}')`), `binding.js requires ${platform.name}`);
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

test('the load-failure message names the platform found, the supported one, the package and the source build', () => {
  const { nativeLoadError, PLATFORM_PACKAGE, MIN_GLIBC } = require('../js/native-error.js');
  const platform = json('npm/linux-x64-gnu/package.json');
  assert.equal(PLATFORM_PACKAGE, platform.name, 'the package it tells users to install is the platform package');
  assert.ok(readFileSync(new URL('README.md', root), 'utf8').includes(`glibc ≥ ${MIN_GLIBC}`), 'README states the same glibc');
  const rust = /^rust-version\s*=\s*"([^"]+)"/m.exec(readFileSync(new URL('Cargo.toml', root), 'utf8'))?.[1];
  const cause = new Error('Cannot find native binding.');
  const hosts = [
    [{ platform: 'linux', arch: 'x64', libc: 'glibc', glibc: '2.36' }, 'linux-x64 (glibc 2.36)', /is not installed: run `npm install spend-sentinel-linux-x64-gnu@0\.1\.0`/],
    [{ platform: 'linux', arch: 'x64', libc: 'glibc', glibc: '2.12' }, 'linux-x64 (glibc 2.12)', /glibc 2\.12 is older than 2\.17/],
    [{ platform: 'linux', arch: 'x64', libc: 'musl', glibc: null }, 'linux-x64 (musl)', /no prebuilt binary for this platform/],
    [{ platform: 'darwin', arch: 'arm64', libc: null, glibc: null }, 'darwin-arm64.', /no prebuilt binary for this platform/],
  ];
  for (const [host, found, advice] of hosts) {
    const error = nativeLoadError(cause, { host, version: '0.1.0' });
    assert.equal(error.code, 'ERR_SPEND_SENTINEL_NATIVE');
    assert.equal(error.cause, cause);
    assert.ok(error.message.includes(`could not be loaded on ${found}`), error.message);
    assert.ok(error.message.includes(`linux-x64-gnu (Linux x64, glibc ≥ ${MIN_GLIBC}), in the package spend-sentinel-linux-x64-gnu@0.1.0`), error.message);
    assert.match(error.message, advice);
    assert.ok(error.message.includes(`Rust ≥ ${rust}`) && error.message.includes('`npx spend-sentinel build-from-source`'), error.message);
  }
});

test('js/main.js and js/breaker.js load the addon only through js/native.js', () => {
  for (const file of ['js/main.js', 'js/breaker.js']) {
    const text = readFileSync(new URL(file, root), 'utf8');
    assert.doesNotMatch(text, /require\(\s*['"]\.\.\/binding(\.js)?['"]\s*\)/, `${file} does not require binding.js directly`);
    assert.match(text, /require\(\s*['"]\.\/native['"]\s*\)/, `${file} requires ./native`);
  }
});

test('the checkout cannot be published as is: private, no publish scripts; release:local makes the tarballs', () => {
  const pkg = json('package.json');
  assert.equal(pkg.private, true, 'npm refuses to publish the checkout (its package.json has no optionalDependencies)');
  assert.equal(pkg.optionalDependencies, undefined, 'optionalDependencies are written into the tarball only');
  for (const script of ['prepublishOnly', 'prepublish', 'prepack', 'artifacts']) assert.equal(pkg.scripts[script], undefined, script);
  assert.equal(pkg.scripts['release:local'], 'node scripts/release-local.mjs');
});

test('fastify-plugin: the only runtime dependency, dependency-free, loaded only by spend-sentinel/fastify, and justified in docs/frameworks.md', async () => {
  const pkg = json('package.json');
  assert.deepEqual(Object.keys(pkg.dependencies), ['fastify-plugin']);
  const locked = json('package-lock.json').packages['node_modules/fastify-plugin'];
  assert.equal(locked.dependencies, undefined, 'fastify-plugin has no dependencies of its own');
  const page = readFileSync(new URL('docs/frameworks.md', root), 'utf8');
  assert.ok(page.includes(`\`fastify-plugin\`** (${locked.version} locked`), `docs/frameworks.md names fastify-plugin ${locked.version}`);

  const script = `
    const loaded = () => Object.keys(require.cache).some((p) => p.includes('/node_modules/fastify-plugin/'));
    require('spend-sentinel'); require('spend-sentinel/express'); require('spend-sentinel/prom-client');
    const before = loaded();
    require('spend-sentinel/fastify');
    console.log(JSON.stringify({ before, after: loaded() }));`;
  const run = await runCommand(process.execPath, ['-e', script], { cwd: fileURLToPath(root) });
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), { before: false, after: true }, 'only spend-sentinel/fastify loads fastify-plugin');
});
