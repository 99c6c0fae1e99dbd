// `npm run test:release`: the one check that needs a third Rust build, kept out of `npm test` so
// that the README's test command builds the crate twice (the tested binary and the test harness).
// CI (.ci/run) runs it after `npm test`, on every run.
//
// The promise: on a platform without the prebuilt binary, docs/platforms.md's build-from-source
// command, run in the user's project, compiles the shipped Rust sources with the user's Rust
// (`cargo build --release --locked`) and the package then loads that build. Here: the release's
// main tarball installed without its platform package (as on such a platform), the command run
// there with its own temporary build directory, and the package loaded from what it built.
// Needs the built addon (for the tarballs; `npm run build`) and cargo; a release build from scratch
// takes a few minutes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILD_FROM_SOURCE, STEP_TIMEOUT_MS, binaryName, childEnv, describeRun, installWithoutPlatformPackage, mustRun, packRelease, platformPkg, root, run } from '../helpers/pack.mjs';

/** A release build from scratch on a busy machine: minutes; the bound only ends a hang. */
const BUILD_TIMEOUT_MS = 1_800_000;
const FROM_SOURCE_BINARY = join('node_modules', 'spend-sentinel', 'spend-sentinel.from-source.node');

/** Loads the package in `dir` and prints the seed example's budget, or the load error's code. */
const LOAD = `
  let code = 'loaded';
  try {
    const { Sentinel, computeBudget } = require('spend-sentinel');
    const s = new Sentinel({ budget: { unverifiedUnits: 200, maxUnitsPerSecond: 20, nodes: 2 }, authority: { inspect: async () => 'valid' } });
    s.close().then(() => console.log(JSON.stringify({ code, budget: computeBudget({ unverifiedUnits: 200, maxUnitsPerSecond: 20, nodes: 2 }) })));
  } catch (e) {
    console.log(JSON.stringify({ code: e.code }));
  }`;

let tmp;
let bare;
before(async () => {
  assert.ok(existsSync(join(root, binaryName)), `${binaryName} is built (npm run build): the tarballs are made from it`);
  tmp = realpathSync(mkdtempSync(join(tmpdir(), 'spend-sentinel-from-source-')));
  const tarballs = join(tmp, 'tarballs');
  mkdirSync(tarballs);
  const { main } = await packRelease(tarballs);
  bare = join(tmp, 'bare-consumer');
  await installWithoutPlatformPackage(bare, main.tarball);
  assert.ok(!existsSync(join(bare, 'node_modules', platformPkg.name)), `${platformPkg.name} is not installed`);
}, { timeout: 10 * STEP_TIMEOUT_MS });
after(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test("docs/platforms.md's build-from-source command, run in a project without the prebuilt binary, builds one the package then loads", { timeout: BUILD_TIMEOUT_MS + 2 * STEP_TIMEOUT_MS }, async () => {
  const unbuilt = await mustRun('node -e require spend-sentinel (nothing built yet)', process.execPath, ['-e', LOAD], { cwd: bare });
  assert.equal(JSON.parse(unbuilt.stdout).code, 'ERR_SPEND_SENTINEL_NATIVE', 'premise: no binary to load before the build');

  const [cmd, ...args] = BUILD_FROM_SOURCE.split(' ');
  const env = childEnv();
  delete env.CARGO_TARGET_DIR; // the command's own temporary build directory, as a user gets it
  const built = await run(cmd, args, { cwd: bare, env, timeoutMs: BUILD_TIMEOUT_MS });
  assert.equal(built.code, 0, describeRun(BUILD_FROM_SOURCE, { ...built, stderr: built.stderr.slice(-4000) }));
  assert.ok(existsSync(join(bare, FROM_SOURCE_BINARY)), 'the build is installed in the package');

  const loaded = await mustRun('node -e require spend-sentinel (built from source)', process.execPath, ['-e', LOAD], { cwd: bare });
  const { code, budget } = JSON.parse(loaded.stdout);
  assert.equal(code, 'loaded', loaded.stdout);
  assert.equal(budget.nodeBudgetUnits, 100);
  assert.equal(budget.staleWindowSeconds, 5);
});
