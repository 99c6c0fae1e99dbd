#!/usr/bin/env node
// npm run release:local [-- --no-build] [--out DIR] [--json]
//
// Makes the two tarballs a release publishes, from this checkout, and checks them:
//   1. builds the addon (`npm run build`, release), unless --no-build takes the binary already built;
//   2. copies spend-sentinel.linux-x64-gnu.node into npm/linux-x64-gnu and packs that package;
//   3. packs the main package with its optionalDependencies naming the platform package at the
//      main package's version, and without `"private": true` (which keeps the checkout itself from
//      being published: see docs/publishing.md);
//   4. reads package.json back out of the main tarball and fails unless it names the platform
//      package at the same version; fails unless the platform tarball holds the binary.
// Publishing is then `npm publish <platform tarball>` and `npm publish <main tarball>`, in that
// order (printed at the end). Nothing here talks to the registry.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const { values: opts } = parseArgs({
  options: {
    'no-build': { type: 'boolean', default: false },
    out: { type: 'string', default: join(root, 'dist') },
    json: { type: 'boolean', default: false },
  },
});
const log = (line) => (opts.json ? process.stderr : process.stdout).write(`${line}\n`);

class ReleaseError extends Error {}
const fail = (message) => {
  throw new ReleaseError(message);
};

/** Runs a command; its output goes to stderr (stdout stays for --json); returns stdout when captured. */
function run(cmd, args, { cwd = root, capture = false } = {}) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', capture ? 'pipe' : 2, 2] });
  if (r.error) fail(`${cmd} ${args.join(' ')} could not start: ${r.error.message}`);
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')} (in ${cwd}) exited with ${r.status ?? r.signal}`);
  return r.stdout;
}

/** `npm pack --json --ignore-scripts` of dir into dest: npm's report plus the tarball's path. */
function npmPack(dir, dest) {
  const [report] = JSON.parse(run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dest], { cwd: dir, capture: true }));
  return { ...report, tarball: join(dest, report.filename) };
}

const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));

function main() {
  const pkg = readJson(join(root, 'package.json'));
  const platformDir = join(root, 'npm', 'linux-x64-gnu');
  const platformPkg = readJson(join(platformDir, 'package.json'));
  const binaryName = `${pkg.napi.binaryName}.linux-x64-gnu.node`;
  if (platformPkg.version !== pkg.version) {
    fail(`npm/linux-x64-gnu/package.json has version ${platformPkg.version}, package.json ${pkg.version}: they must be equal (the loader checks)`);
  }
  if (platformPkg.main !== binaryName) fail(`npm/linux-x64-gnu/package.json's main is ${platformPkg.main}, not ${binaryName}`);
  if (!readFileSync(join(root, 'binding.js'), 'utf8').includes(`require('${platformPkg.name}')`)) {
    fail(`binding.js does not load ${platformPkg.name}: run npm run build`);
  }

  if (!opts['no-build']) {
    log('building the addon (npm run build)…');
    run('npm', ['run', 'build']);
  }
  const binary = join(root, binaryName);
  if (!existsSync(binary)) fail(`${binaryName} is not built: run npm run build (or drop --no-build)`);
  copyFileSync(binary, join(platformDir, binaryName));

  const out = resolve(opts.out);
  mkdirSync(out, { recursive: true });
  const platform = npmPack(platformDir, out);
  const packedBinary = platform.files.find((f) => f.path === binaryName);
  if (!packedBinary || packedBinary.size !== statSync(binary).size) {
    fail(`${platform.filename} does not hold ${binaryName} (${statSync(binary).size} bytes): ${platform.files.map((f) => f.path).join(', ')}`);
  }

  // The main package: pack the checkout, write the release fields into the packed package.json,
  // pack that again. The checkout's package.json stays as it is (npm ci keeps working: an
  // optional dependency that is not yet on the registry has no lockfile entry, and npm ci refuses).
  const stage = mkdtempSync(join(tmpdir(), 'spend-sentinel-release-'));
  try {
    const first = npmPack(root, stage);
    run('tar', ['-xzf', first.tarball, '-C', stage]);
    const stagedJson = join(stage, 'package', 'package.json');
    const staged = readJson(stagedJson);
    delete staged.private;
    staged.optionalDependencies = { ...staged.optionalDependencies, [platformPkg.name]: pkg.version };
    writeFileSync(stagedJson, `${JSON.stringify(staged, null, 2)}\n`);
    const mainPack = npmPack(join(stage, 'package'), out);

    const paths = (r) => r.files.map((f) => f.path).sort().join('\n');
    if (paths(first) !== paths(mainPack)) fail(`repacking changed the file list:\n${paths(first)}\n---\n${paths(mainPack)}`);

    // The check: package.json as it is inside the tarball that would be published.
    const packed = JSON.parse(run('tar', ['-xzOf', mainPack.tarball, 'package/package.json'], { capture: true }));
    const named = packed.optionalDependencies?.[platformPkg.name];
    if (named !== packed.version || packed.version !== pkg.version) {
      fail(`${mainPack.filename}: optionalDependencies["${platformPkg.name}"] is ${named}, version ${packed.version}; both must be ${pkg.version}`);
    }
    if (packed.private) fail(`${mainPack.filename} is marked private`);

    log(`${platform.tarball}\n  ${platformPkg.name}@${platformPkg.version}, holds ${binaryName} (${packedBinary.size} bytes)`);
    log(`${mainPack.tarball}\n  ${pkg.name}@${pkg.version}, optionalDependencies: ${platformPkg.name}@${named}`);
    log(`publish, platform package first:\n  npm publish ${platform.tarball}\n  npm publish ${mainPack.tarball}`);
    if (opts.json) process.stdout.write(`${JSON.stringify({ main: mainPack, platform }, null, 2)}\n`);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

try {
  main();
} catch (err) {
  if (!(err instanceof ReleaseError)) throw err;
  process.stderr.write(`release:local: ${err.message}\n`);
  process.exitCode = 1;
}
