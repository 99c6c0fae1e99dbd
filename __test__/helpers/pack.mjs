// The release tarballs, as the packaging suites install them: __test__/pack-install.spec.mjs (every
// `npm test`) and __test__/release/build-from-source.spec.mjs (`npm run test:release`).
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCommand } from './wait.mjs';

export const root = fileURLToPath(new URL('../../', import.meta.url));
export const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
export const platformPkg = JSON.parse(readFileSync(join(root, 'npm', 'linux-x64-gnu', 'package.json'), 'utf8'));
export const binaryName = `${pkg.napi.binaryName}.linux-x64-gnu.node`;

/** The one command docs/platforms.md gives for building from source (the first sh line naming it). */
export const BUILD_FROM_SOURCE = /^(npx spend-sentinel build-from-source)\b/m.exec(readFileSync(join(root, 'docs', 'platforms.md'), 'utf8'))?.[1];
assert.ok(BUILD_FROM_SOURCE, 'docs/platforms.md gives the build-from-source command on a line of its own');

// Upper bounds that only end a hang: a slow machine or registry makes these steps slower, not red.
export const INSTALL_TIMEOUT_MS = 300_000;
export const STEP_TIMEOUT_MS = 120_000;

/**
 * The repository's files the newest release build compiled (Rust sources, the Lua scripts it
 * includes, build.rs), relative to the repository, from cargo's dep-info (`libspend_sentinel.d`
 * in a release directory of target/). Its paths are absolute: they are read relative to the
 * directory of its `src/lib.rs`, so a target/ copied from another checkout of the same commit
 * reads the same.
 */
export function compiledByReleaseBuild() {
  const depInfo = readdirSync(join(root, 'target'), { recursive: true })
    .filter((f) => f.endsWith('libspend_sentinel.d') && f.includes('release'))
    .map((f) => join(root, 'target', f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  assert.ok(depInfo, 'the release build left its dep-info (target/**/release/libspend_sentinel.d)');
  const paths = readFileSync(depInfo, 'utf8').split(/\s+/).filter((f) => f !== '' && !f.endsWith(':'));
  const libRs = paths.find((f) => f.endsWith('/src/lib.rs'));
  assert.ok(libRs, `dep-info lists src/lib.rs: ${depInfo}`);
  const checkout = libRs.slice(0, -'src/lib.rs'.length);
  const compiled = [...new Set(paths.filter((f) => f.startsWith(checkout) && !f.startsWith(`${checkout}target/`)))].map((f) => f.slice(checkout.length));
  assert.ok(compiled.some((f) => f.endsWith('.lua')), `dep-info lists the sources and the Lua scripts: ${compiled.slice(0, 5)}`);
  return compiled;
}

/** Environment of the child processes: nothing that points module resolution or the loader elsewhere. */
export function childEnv() {
  const env = { ...process.env };
  for (const key of ['NODE_PATH', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT', 'NAPI_RS_NATIVE_LIBRARY_PATH', 'NAPI_RS_FORCE_WASI', 'NAPI_RS_WASI_FLAVOR']) {
    delete env[key];
  }
  return env;
}

/**
 * Runs `cmd args` in `cwd` (its own process group, so a timeout ends npm's children too).
 * Resolves { code, signal, stdout, stderr, timedOut }; never rejects on a non-zero exit.
 */
export function run(cmd, args, { cwd, env = childEnv(), timeoutMs = STEP_TIMEOUT_MS } = {}) {
  return runCommand(cmd, args, { cwd, env, timeoutMs, group: true });
}

export const describeRun = (what, r) =>
  `${what}: exit ${r.code}${r.signal ? ` (${r.signal})` : ''}${r.timedOut ? ', killed after its timeout' : ''}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;

/** `run`, failing the test (with the output) unless it exits 0. */
export async function mustRun(what, cmd, args, opts) {
  const r = await run(cmd, args, opts);
  assert.equal(r.code, 0, describeRun(what, r));
  return r;
}

/**
 * The release's own tarballs in `dir` (`npm run release:local -- --no-build`: the platform package,
 * npm/linux-x64-gnu plus the built binary, and the main package with its optionalDependencies);
 * resolves with release-local's report `{ main, platform }`, each with `tarball` and `files`.
 */
export async function packRelease(dir) {
  const release = await mustRun('npm run release:local -- --no-build', process.execPath, [join(root, 'scripts', 'release-local.mjs'), '--no-build', '--json', '--out', dir], {
    cwd: root,
  });
  return JSON.parse(release.stdout);
}

/** A new project in `dir` with only the main tarball installed (`--omit=optional`: no platform package). */
export async function installWithoutPlatformPackage(dir, mainTarball) {
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'bare-consumer', version: '1.0.0', private: true }, null, 2)}\n`);
  return mustRun('npm install --omit=optional of the main tarball', 'npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--omit=optional', mainTarball], {
    cwd: dir,
    timeoutMs: INSTALL_TIMEOUT_MS,
  });
}
