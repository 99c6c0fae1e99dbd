// The package as it is published: the two tarballs `npm run release:local` makes
// (scripts/release-local.mjs, with --no-build) ship only what a user needs; the main one names the
// platform package as an optional dependency at its own version, and — installed with the platform
// package into a fresh project outside this checkout — loads through `require` and `import` at
// every entry point, runs its bin, and type-checks with the consumer's own `tsc`. Installed
// without the platform package, it says what to install or build (the build itself, a third Rust
// build, is `npm run test:release`: __test__/release/build-from-source.spec.mjs).
//
// Needs npm and the registry (or npm's cache) for express, fastify, prom-client, @opentelemetry/api, typescript and
// @types/*, at the versions of package-lock.json. Needs the built addon
// (spend-sentinel.linux-x64-gnu.node); it does not build it.
import { describe, before, after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILD_FROM_SOURCE, INSTALL_TIMEOUT_MS, STEP_TIMEOUT_MS, binaryName, childEnv, compiledByReleaseBuild, describeRun, installWithoutPlatformPackage, mustRun, packRelease, pkg, platformPkg, root, run } from './helpers/pack.mjs';
import { PUBLIC_API, INTERNAL } from './helpers/public-api.mjs';
import { posixJoin, relativeLinks } from './helpers/markdown-links.mjs';
import { glibcVersionsNeeded, sha256, versionAtMost } from './helpers/elf.mjs';

const fixtures = fileURLToPath(new URL('fixtures/pack-consumer/', import.meta.url));
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));

/** The package's entry points as users name them: `spend-sentinel`, `spend-sentinel/express`, … */
const ENTRY_POINTS = Object.keys(pkg.exports)
  .filter((k) => k !== './package.json')
  .map((k) => posix.join(pkg.name, k));

const require = createRequire(import.meta.url);
const { MIN_GLIBC } = require('../js/native-error.js');

/** What the consumer installs besides the two tarballs, at the versions this repository locks. */
const CONSUMER_DEPS = ['express', 'fastify', 'prom-client', '@opentelemetry/api', 'typescript', '@types/node', '@types/express'];
const lockedVersion = (name) => {
  const version = lock.packages?.[`node_modules/${name}`]?.version;
  assert.ok(version, `${name} is in package-lock.json`);
  return version;
};

/** The kinds of file a user needs; anything else in the tarball is a packaging mistake. */
const ALLOWED = [
  /^binding\.js$/, /^binding\.d\.ts$/, /^js\/[^/]+\.js$/, /^js\/[^/]+\.d\.ts$/, /^README\.md$/, /^LICENSE$/, /^package\.json$/,
  // The documentation the README links to, so its links work in node_modules and on the package page.
  /^docs\/[a-z-]+\.(md|svg)$/,
  // The Rust sources, for `npx spend-sentinel build-from-source` on platforms without a prebuilt binary.
  /^Cargo\.(toml|lock)$/, /^build\.rs$/, /^src\/([a-z_]+\/)*[a-z_]+\.(rs|lua)$/,
];

/** Relative specifiers a packed file loads: `require('./x')` in JS, `from '../x'` / `import('./x')` / `import './x'` in typings. */
function relativeImports(text) {
  const found = [];
  for (const re of [/require\(\s*['"](\.\.?\/[^'"]*)['"]\s*\)/g, /\bfrom\s+['"](\.\.?\/[^'"]*)['"]/g, /import\(\s*['"](\.\.?\/[^'"]*)['"]\s*\)/g, /\bimport\s+['"](\.\.?\/[^'"]*)['"]/g]) {
    for (const m of text.matchAll(re)) found.push(m[1]);
  }
  return found;
}

/**
 * The generated loader's local candidates (`./spend-sentinel.<platform>.node`, the WASI loader
 * `./spend-sentinel.wasi.cjs`) are optional by design: each is tried in a try/catch, and a release
 * tarball has none of them (the binary comes from the platform package).
 */
const OPTIONAL_LOADER_CANDIDATE = /^\.\/[^/]+\.(node|wasi\.cjs)$/;

/** Packed files reachable from `entries` through relative imports, trying the extensions given. */
function reachable(entries, files, readPacked, extensions) {
  const seen = new Set();
  const missing = [];
  const queue = [...entries];
  while (queue.length > 0) {
    const file = queue.shift();
    if (seen.has(file)) continue;
    seen.add(file);
    for (const spec of relativeImports(readPacked(file))) {
      if (file === 'binding.js' && OPTIONAL_LOADER_CANDIDATE.test(spec)) continue;
      const base = posix.normalize(posix.join(posix.dirname(file), spec));
      const stem = base.replace(/\.(js|d\.ts)$/, '');
      const target = [base, ...extensions.map((ext) => stem + ext)].find((candidate) => files.includes(candidate));
      if (target === undefined) missing.push(`${file} → ${spec}`);
      else queue.push(target);
    }
  }
  return { seen, missing };
}

describe('the packed package, installed into a new project', () => {
  let tmp;
  let main; // pack report of this package
  let platform; // pack report of the platform package
  let unpacked; // the main tarball, extracted
  let consumer;
  let install;

  before(
    async () => {
      assert.ok(existsSync(join(root, binaryName)), `${binaryName} is built (this test does not build it)`);
      tmp = realpathSync(mkdtempSync(join(tmpdir(), 'spend-sentinel-pack-')));
      const tarballs = join(tmp, 'tarballs');
      mkdirSync(tarballs);

      // The release's own tarballs: the platform package (npm/linux-x64-gnu plus the built
      // binary) and the main package with its optionalDependencies.
      ({ main, platform } = await packRelease(tarballs));
      for (const report of [main, platform]) report.paths = report.files.map((f) => f.path).sort();
      unpacked = join(tmp, 'unpacked');
      mkdirSync(unpacked);
      await mustRun('tar -x of the main tarball', 'tar', ['-xzf', main.tarball, '-C', unpacked]);

      consumer = join(tmp, 'consumer');
      mkdirSync(consumer);
      writeFileSync(
        join(consumer, 'package.json'),
        `${JSON.stringify({ name: 'pack-consumer', version: '1.0.0', private: true, type: 'commonjs' }, null, 2)}\n`,
      );
      for (const file of readdirSync(fixtures)) copyFileSync(join(fixtures, file), join(consumer, file));
      const deps = CONSUMER_DEPS.map((name) => `${name}@${lockedVersion(name)}`);
      install = await mustRun(
        'npm install in the consumer',
        'npm',
        ['install', '--no-audit', '--no-fund', '--prefer-offline', main.tarball, platform.tarball, ...deps],
        { cwd: consumer, timeoutMs: INSTALL_TIMEOUT_MS },
      );
    },
    { timeout: INSTALL_TIMEOUT_MS + 4 * STEP_TIMEOUT_MS },
  );

  after(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test('npm pack ships the loader, typings, JS helpers, README, docs/, LICENSE and package.json, nothing else', () => {
    const unexpected = main.paths.filter((p) => !ALLOWED.some((re) => re.test(p)));
    assert.deepEqual(unexpected, [], 'files outside binding.js, binding.d.ts, js/*.js, js/*.d.ts, README.md, docs/*.md and its image, LICENSE, package.json and the Rust sources');

    const exportTargets = Object.values(pkg.exports).flatMap((t) => (typeof t === 'string' ? [t] : Object.values(t)));
    const required = [
      'binding.js',
      'binding.d.ts',
      'README.md',
      'LICENSE',
      'package.json',
      pkg.main,
      pkg.types,
      ...Object.values(pkg.bin),
      ...exportTargets,
    ].map((p) => posix.normalize(p));
    for (const p of new Set(required)) assert.ok(main.paths.includes(p), `${p} is packed`);
    // The README's links and its image work from the installed package (node_modules, the package page).
    const readmeTargets = relativeLinks(readFileSync(join(unpacked, 'package', 'README.md'), 'utf8')).map((l) => posixJoin('README.md', l.target.split('#')[0]));
    assert.ok(readmeTargets.includes('docs/api.md') && readmeTargets.includes('docs/demo-timeline.svg'), `README links: ${readmeTargets}`);
    for (const target of readmeTargets) assert.ok(existsSync(join(unpacked, 'package', target)), `README links to ${target}: not in the tarball`);

    // Only what the entry points load: every packed JS file is reachable from main/exports/bin by
    // require(), every packed typing from the exports' "types" by import/export; nothing dangles.
    const readPacked = (p) => readFileSync(join(unpacked, 'package', p), 'utf8');
    const jsFiles = main.paths.filter((p) => p.endsWith('.js') && !p.startsWith('src/'));
    const dtsFiles = main.paths.filter((p) => p.endsWith('.d.ts'));
    const jsEntries = [pkg.main, ...Object.values(pkg.bin), ...Object.values(pkg.exports).map((t) => t.default).filter(Boolean)];
    const js = reachable(jsEntries.map((p) => posix.normalize(p)), jsFiles, readPacked, ['.js']);
    assert.deepEqual(js.missing, [], 'relative require() targets missing from the tarball');
    assert.deepEqual(jsFiles.filter((p) => !js.seen.has(p)), [], 'packed JS no entry point loads');
    const dtsEntries = [pkg.types, ...Object.values(pkg.exports).map((t) => t.types).filter(Boolean)];
    const dts = reachable(dtsEntries.map((p) => posix.normalize(p)), dtsFiles, readPacked, ['.d.ts']);
    assert.deepEqual(dts.missing, [], 'relative typing imports missing from the tarball');
    assert.deepEqual(dtsFiles.filter((p) => !dts.seen.has(p)), [], 'packed typings no entry point refers to');

    assert.ok(readPacked(pkg.bin['spend-sentinel']).startsWith('#!/usr/bin/env node\n'), 'the bin has a node shebang');
    assert.deepEqual(JSON.parse(readPacked('package.json')).exports, pkg.exports);
  });

  test("the main tarball's package.json names the platform package, at the same version, as an optional dependency", async () => {
    // Read from the tarball itself: what `npm publish <tarball>` sends, scripts or not.
    const r = await mustRun('tar -xzOf package/package.json', 'tar', ['-xzOf', main.tarball, 'package/package.json']);
    const packed = JSON.parse(r.stdout);
    assert.equal(packed.version, pkg.version);
    assert.deepEqual(packed.optionalDependencies, { [platformPkg.name]: pkg.version });
    assert.equal(packed.private, undefined, 'the published package.json is not private');
    assert.deepEqual(packed.dependencies, pkg.dependencies);
  });

  test('the platform package tarball carries the binary its package.json names', () => {
    assert.deepEqual(platform.paths, ['README.md', 'package.json', binaryName].sort());
    assert.equal(platformPkg.main, binaryName);
    assert.equal(platformPkg.version, pkg.version);
    const packedBinary = platform.files.find((f) => f.path === binaryName);
    assert.equal(packedBinary.size, statSync(join(root, binaryName)).size);
  });

  test('the binary the release ships is the binary the tests load, byte for byte, and needs glibc ≤ ' + MIN_GLIBC, async () => {
    const dir = join(tmp, 'platform-unpacked');
    mkdirSync(dir);
    await mustRun('tar -x of the platform tarball', 'tar', ['-xzf', platform.tarball, '-C', dir]);
    const shipped = join(dir, 'package', binaryName);
    assert.equal(sha256(shipped), sha256(join(root, binaryName)), 'the shipped binary is the tested one');
    const above = glibcVersionsNeeded(shipped).filter((v) => !versionAtMost(v, MIN_GLIBC));
    assert.deepEqual(above, [], `the shipped binary needs glibc ${above.join(', ')}, above ${MIN_GLIBC}`);
  });

  test('the install holds no binary in the main package: the loader has to use the platform package', () => {
    const installed = join(consumer, 'node_modules', 'spend-sentinel');
    const nodeFiles = readdirSync(installed, { recursive: true }).filter((p) => String(p).endsWith('.node'));
    assert.deepEqual(nodeFiles, [], 'no .node file in node_modules/spend-sentinel');
    assert.ok(existsSync(join(consumer, 'node_modules', platformPkg.name, binaryName)), `${platformPkg.name} holds ${binaryName}`);
    const bin = join(consumer, 'node_modules', '.bin', 'spend-sentinel');
    assert.equal(realpathSync(bin), join(realpathSync(installed), 'js', 'cli.js'), 'the bin links to js/cli.js');
    assert.doesNotMatch(install.stderr, /\bERR!/, 'npm install reported no error');
  });

  test('require() of every entry point, a Sentinel that becomes ready, admits and closes', async () => {
    const r = await mustRun('node check.cjs', process.execPath, ['check.cjs'], { cwd: consumer });
    const report = JSON.parse(r.stdout);
    assert.equal(report.version, pkg.version);
    assert.ok(report.binary.startsWith(join(consumer, 'node_modules', platformPkg.name)), report.binary);
  });

  test('import of every entry point (named ESM exports), the same Sentinel lifecycle', async () => {
    const r = await mustRun('node check.mjs', process.execPath, ['check.mjs'], { cwd: consumer });
    assert.deepEqual(JSON.parse(r.stdout), { ok: true });
  });

  /** What the installed typings export at each entry point (fixtures/pack-consumer/typed-exports.cjs). */
  let typedExports;
  const readTypedExports = async () => {
    typedExports ??= JSON.parse((await mustRun('node typed-exports.cjs', process.execPath, ['typed-exports.cjs', ...ENTRY_POINTS], { cwd: consumer, timeoutMs: 60_000 })).stdout);
    return typedExports;
  };

  test('every name the typings export imports by name in ESM (a generated .mjs per entry point) and requires in CJS', async () => {
    const typed = await readTypedExports();
    for (const [i, entry] of ENTRY_POINTS.entries()) {
      const { values, hasDefault } = typed[entry];
      assert.ok(values.length > 0, `${entry}: the typings export values`);
      const spec = JSON.stringify(entry);
      const names = JSON.stringify(values);
      // Static named imports: a name Node's CommonJS export detection misses is a SyntaxError at link time.
      writeFileSync(
        join(consumer, `named-${i}.mjs`),
        [
          `import { ${values.join(', ')} } from ${spec};`,
          `import * as ns from ${spec};`,
          `import { createRequire } from 'node:module';`,
          `const cjs = createRequire(import.meta.url)(${spec});`,
          `const named = { ${values.join(', ')} };`,
          `const wrong = Object.keys(named).filter((k) => named[k] === undefined || named[k] !== cjs[k]);`,
          `process.stdout.write(JSON.stringify({ wrong, defaultIsModule: ns.default === cjs }) + '\\n');`,
        ].join('\n'),
      );
      const esm = await run(process.execPath, [`named-${i}.mjs`], { cwd: consumer });
      assert.equal(esm.code, 0, describeRun(`import { ${values.join(', ')} } from '${entry}'`, esm));
      assert.deepEqual(JSON.parse(esm.stdout), { wrong: [], defaultIsModule: true }, `${entry}: each named import is require()'s property`);

      writeFileSync(
        join(consumer, `named-${i}.cjs`),
        `const m = require(${spec});\nprocess.stdout.write(JSON.stringify(${names}.filter((n) => m[n] === undefined)) + '\\n');\n`,
      );
      const cjs = await mustRun(`require('${entry}')`, process.execPath, [`named-${i}.cjs`], { cwd: consumer });
      assert.deepEqual(JSON.parse(cjs.stdout), [], `${entry}: names the typings export that require() lacks`);
      assert.ok(hasDefault, `${entry}: an ES module's default import (module.exports) is typed`);
    }
  });

  test('the typings of every entry point export exactly the public names, and no internal type', async () => {
    const typed = await readTypedExports();
    assert.deepEqual(Object.keys(typed).sort(), Object.keys(PUBLIC_API).sort(), 'PUBLIC_API lists every entry point of "exports"');
    for (const [entry, names] of Object.entries(PUBLIC_API)) {
      assert.deepEqual(typed[entry].values, [...names].sort(), `values the typings of ${entry} export`);
      assert.deepEqual(typed[entry].all.filter((n) => INTERNAL.includes(n)), [], `internals in the typings of ${entry}`);
    }
  });

  test('attw (are the types wrong) finds no problem in the tarball, at every entry point and resolution mode', async () => {
    const attw = join(root, 'node_modules', '@arethetypeswrong', 'cli', JSON.parse(readFileSync(join(root, 'node_modules', '@arethetypeswrong', 'cli', 'package.json'), 'utf8')).bin.attw);
    // --no-definitely-typed: offline, the local tarball only.
    const r = await run(process.execPath, [attw, main.tarball, '--format', 'json', '--no-definitely-typed'], { cwd: tmp, timeoutMs: 60_000 });
    const report = JSON.parse(r.stdout);
    assert.deepEqual(report.analysis.problems, [], describeRun('attw', { ...r, stdout: JSON.stringify(report.analysis.problems, null, 2) }));
    assert.equal(r.code, 0, describeRun('attw', r));
    assert.deepEqual(Object.keys(report.analysis.entrypoints).sort(), Object.keys(pkg.exports).sort(), 'attw checked every entry point');
    for (const [entry, { resolutions }] of Object.entries(report.analysis.entrypoints)) {
      assert.deepEqual(Object.keys(resolutions).sort(), ['bundler', 'node10', 'node16-cjs', 'node16-esm'], `${entry}: every resolution mode`);
    }
  });

  test("the consumer's tsc --strict with moduleResolution node10 (which ignores \"exports\") resolves every entry point", async () => {
    const tsc = join(consumer, 'node_modules', 'typescript', 'bin', 'tsc');
    const r = await run(process.execPath, [tsc, '-p', 'tsconfig.node10.json'], { cwd: consumer, timeoutMs: 60_000 });
    assert.equal(r.code, 0, describeRun('tsc -p tsconfig.node10.json (consumer)', r));
  });

  test('npx spend-sentinel probe runs the installed bin: exit 0 on 200, 1 on 503', async () => {
    const server = createServer((req, res) => {
      const up = req.url === '/';
      res.writeHead(up ? 200 : 503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: up ? 'ready' : 'not_ready' }));
    });
    await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    try {
      const base = `http://127.0.0.1:${server.address().port}`;
      const ok = await run('npx', ['--no', '--', 'spend-sentinel', 'probe', `${base}/`], { cwd: consumer });
      assert.equal(ok.code, 0, describeRun('npx spend-sentinel probe /', ok));
      assert.match(ok.stdout, /^200 \{"status":"ready"\}/);
      const down = await run('npx', ['--no', '--', 'spend-sentinel', 'probe', `${base}/down`], { cwd: consumer });
      assert.equal(down.code, 1, describeRun('npx spend-sentinel probe /down', down));
      assert.match(down.stdout, /^503 /);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test("the consumer's tsc --noEmit (nodenext, strict, skipLibCheck false) accepts a typed use of every entry point", async () => {
    const tsc = join(consumer, 'node_modules', 'typescript', 'bin', 'tsc');
    const version = await mustRun('tsc --version', process.execPath, [tsc, '--version'], { cwd: consumer });
    assert.equal(version.stdout.trim(), `Version ${lockedVersion('typescript')}`);
    const r = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: consumer, timeoutMs: 60_000 });
    assert.equal(r.code, 0, describeRun('tsc -p tsconfig.json (consumer)', r));
    // The typings came from the installed tarball, not from this checkout.
    const files = await mustRun('tsc --listFilesOnly', process.execPath, [tsc, '-p', 'tsconfig.json', '--listFilesOnly'], { cwd: consumer, timeoutMs: 60_000 });
    const ours = files.stdout.split('\n').filter((f) => /\/spend-sentinel\//.test(f));
    for (const typing of ['binding.d.ts', 'js/main.d.ts', 'js/option-types.d.ts', 'js/express.d.ts', 'js/fastify.d.ts', 'js/prom-client.d.ts', 'js/opentelemetry.d.ts', 'js/common.d.ts', 'js/breaker.d.ts']) {
      assert.ok(ours.includes(join(consumer, 'node_modules', 'spend-sentinel', typing)), `${typing} read from the installed package`);
    }
    assert.deepEqual(ours.filter((f) => !f.startsWith(join(consumer, 'node_modules'))), [], 'no typing from outside the consumer');
  });

  let bare; // a consumer with the main tarball only, made by the next test
  test('installed without the platform package (--omit=optional), require and import say what to install or build', { timeout: INSTALL_TIMEOUT_MS + 2 * STEP_TIMEOUT_MS }, async () => {
    bare = join(tmp, 'bare-consumer');
    const installed = await installWithoutPlatformPackage(bare, main.tarball);
    assert.ok(!existsSync(join(bare, 'node_modules', platformPkg.name)), `${platformPkg.name} is not installed`);
    assert.doesNotMatch(installed.stderr, /\bERR!/, 'npm install reported no error');

    const script = `
      const report = (e) => ({ code: e.code, message: e.message, cause: e.cause && String(e.cause.message) });
      let cjs = { loaded: true };
      try { require('spend-sentinel'); } catch (e) { cjs = report(e); }
      import('spend-sentinel').then(() => ({ loaded: true }), report).then((esm) => console.log(JSON.stringify({ cjs, esm })));`;
    const r = await mustRun('node -e require/import spend-sentinel (no platform package)', process.execPath, ['-e', script], { cwd: bare });
    const { cjs, esm } = JSON.parse(r.stdout);
    const cargo = readFileSync(join(root, 'Cargo.toml'), 'utf8');
    const rust = /^rust-version\s*=\s*"([^"]+)"/m.exec(cargo)?.[1];
    assert.ok(rust, 'Cargo.toml has a rust-version');
    for (const [how, e] of [['require', cjs], ['import', esm]]) {
      assert.equal(e.code, 'ERR_SPEND_SENTINEL_NATIVE', `${how}: ${JSON.stringify(e)}`);
      assert.ok(e.message.includes(`${process.platform}-${process.arch}`), `${how} names the platform found: ${e.message}`);
      assert.match(e.message, /\((glibc \d+\.\d+|musl|libc unknown)\)/, `${how} names the libc found`);
      assert.ok(e.message.includes(`linux-x64-gnu (Linux x64, glibc ≥ ${MIN_GLIBC})`), `${how} names the supported platform: ${e.message}`);
      assert.ok(e.message.includes(`${platformPkg.name}@${pkg.version}`), `${how} names the package to install: ${e.message}`);
      assert.ok(e.message.includes(`Rust ≥ ${rust}`) && e.message.includes(BUILD_FROM_SOURCE), `${how} says how to build from source: ${e.message}`);
      assert.doesNotMatch(e.message, /wasm32|npm has a bug/, `${how}: not napi's generic text`);
      assert.match(e.cause, /Cannot find native binding/, `${how} keeps the loader's error as cause`);
    }
  });

  // build-from-source without a third Rust build (that one is `npm run test:release`): the tarball
  // holds every file the tested build compiled, byte for byte, and the command, with a stand-in
  // cargo, builds the shipped manifest and installs what cargo made where the loader finds it.
  test('the tarball ships every file the tested build compiled (cargo dep-info), byte for byte, with Cargo.toml and Cargo.lock', () => {
    const compiled = compiledByReleaseBuild();
    assert.ok(compiled.includes('src/lib.rs'), `dep-info lists the sources: ${compiled.slice(0, 5)}`);
    for (const file of [...compiled, 'Cargo.toml', 'Cargo.lock', 'build.rs']) {
      assert.ok(main.paths.includes(file), `${file} (compiled by the tested build) is in the tarball`);
      assert.ok(readFileSync(join(unpacked, 'package', file)).equals(readFileSync(join(root, file))), `${file} is shipped as compiled`);
    }
  });

  // The converse: the from-source build (`cargo build --release --lib`) compiles no test, so the
  // unit tests, the explorer and the simulations beside the sources stay out of the tarball
  // ("files" in package.json leaves them out by name).
  test('the tarball ships no file of src/ that the release build does not compile', () => {
    const compiled = new Set(compiledByReleaseBuild());
    const extra = main.paths.filter((file) => file.startsWith('src/') && !compiled.has(file));
    assert.deepEqual(extra, [], 'files of src/ the release build does not compile (test-only): leave them out with a "!…" entry in package.json\'s "files"');
  });

  test("docs/platforms.md's build-from-source command, with a stand-in cargo: builds the shipped manifest --locked, installs the library, the package loads it", async () => {
    assert.ok(bare, 'the consumer without the platform package was installed (previous test)');
    const log = join(tmp, 'stand-in-cargo.log');
    const env = { ...childEnv(), CARGO: join(fixtures, '..', 'stand-in-cargo.mjs'), STAND_IN_CARGO_LOG: log, STAND_IN_CARGO_BINARY: join(root, binaryName) };
    delete env.CARGO_TARGET_DIR;
    const [cmd, ...args] = BUILD_FROM_SOURCE.split(' ');
    const built = await run(cmd, args, { cwd: bare, env });
    assert.equal(built.code, 0, describeRun(BUILD_FROM_SOURCE, built));
    const installedPackage = join(bare, 'node_modules', 'spend-sentinel');
    const calls = readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    assert.equal(calls.length, 1, 'one cargo build');
    assert.deepEqual(calls[0].args, ['build', '--release', '--locked', '--lib', '--manifest-path', join(installedPackage, 'Cargo.toml')]);
    assert.ok(!existsSync(calls[0].targetDir), 'its own temporary build directory, removed afterwards');
    assert.ok(readFileSync(join(installedPackage, 'spend-sentinel.from-source.node')).equals(readFileSync(join(root, binaryName))), 'installed where the loader looks');
    const script = `const { computeBudget } = require('spend-sentinel'); console.log(JSON.stringify(computeBudget({ unverifiedUnits: 200, maxUnitsPerSecond: 20, nodes: 2 })));`;
    const r = await mustRun('node -e require spend-sentinel (the from-source build)', process.execPath, ['-e', script], { cwd: bare });
    assert.equal(JSON.parse(r.stdout).staleWindowSeconds, 5);
  });
});
