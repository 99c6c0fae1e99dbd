#!/usr/bin/env node
// node scripts/preflight.mjs build|test|demo|demo-fleet
//
// Runs first in `npm run build`, `npm test` and `npm run demo`, before anything is compiled, so a
// fresh machine learns in about a second what it lacks instead of after a multi-minute build:
//   - everything present: silent, exit 0;
//   - something missing, running as root on Debian/Ubuntu: one line says what is installed with
//     apt-get, then it is installed (SPEND_SENTINEL_NO_INSTALL=1 turns this off);
//   - zig + cargo-zigbuild (the glibc 2.17 build on Linux x64) missing: fetched once, hash-pinned,
//     from PyPI into a cache directory (no root needed, only python3 with venv), announced;
//   - otherwise: one line per missing tool with the Debian/Ubuntu and the macOS way to get it,
//     exit 1, and nothing was changed.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync, chmodSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { atLeast, currentHost, MIN_RUST } = require('../js/native-error.js');
const here = dirname(fileURLToPath(import.meta.url));

/** The zig toolchain the shipped build uses: versions pinned (with hashes) in zig-toolchain.txt. */
export const ZIG_REQUIREMENTS = join(here, 'zig-toolchain.txt');
export const ZIG_VERSIONS = 'zig 0.17.1 + cargo-zigbuild 0.24.1';

/** Where the fetched zig toolchain lives: once per machine, shared by every clone. */
export function zigCacheDir(env = process.env) {
  const cache = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cache, 'spend-sentinel', 'zig-0.17.1-cargo-zigbuild-0.24.1');
}

/** Runs a command quietly; true when it started and exited 0. */
function succeeds(cmd, args, env = process.env) {
  const r = spawnSync(cmd, args, { stdio: 'ignore', env, timeout: 10_000 });
  return !r.error && r.status === 0;
}

function output(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 });
  return r.error || r.status !== 0 ? null : r.stdout;
}

/** The shipped binary is built with zig for glibc 2.17 on Linux x64 (glibc); elsewhere the build is native. */
export function buildsWithZig(host = currentHost()) {
  return host.platform === 'linux' && host.arch === 'x64' && host.libc === 'glibc';
}

/**
 * The bin directory to put first on PATH for `cargo zigbuild`, '' when zig and cargo-zigbuild are
 * on PATH already, or null when neither is there.
 */
export function zigToolchainBin(env = process.env) {
  const cached = join(zigCacheDir(env), 'bin');
  if (existsSync(join(cached, 'cargo-zigbuild'))) return cached;
  const zig = succeeds('zig', ['version'], env) || succeeds('python3', ['-m', 'ziglang', 'version'], env); // as cargo-zigbuild looks
  if (succeeds('cargo-zigbuild', ['--version'], env) && zig) return '';
  return null;
}

const RUSTUP = "curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh";

/**
 * What each purpose needs. A tool: `present()` says whether it is there, `apt` the Debian packages
 * that provide it, `debian` / `macos` how a user gets it there.
 */
export const TOOLS = {
  rust: {
    label: `Rust ≥ ${MIN_RUST} (cargo, rustc)`,
    present: () => {
      const v = /rustc (\d+\.\d+)/.exec(output('rustc', ['--version']) ?? '')?.[1];
      return Boolean(v && atLeast(v, MIN_RUST) && succeeds('cargo', ['--version']));
    },
    apt: null, // Debian's rustc is older than the crates need: rustup
    debian: `${RUSTUP} (or: rustup update)`,
    macos: `${RUSTUP} (or: rustup update)`,
  },
  zig: {
    label: `${ZIG_VERSIONS} (the glibc 2.17 build)`,
    present: () => zigToolchainBin() !== null,
    apt: null, // fetched from PyPI by fetchZig(); needs python3 with venv
    debian: 'sudo apt-get install python3-venv (then it fetches zig itself), or: pip install ziglang==0.17.1 cargo-zigbuild==0.24.1',
    macos: 'not needed (macOS builds natively)',
  },
  'redis-server': {
    label: 'redis-server (the fleet tests start their own)',
    present: () => succeeds('redis-server', ['--version']),
    apt: ['redis-server'],
    debian: 'sudo apt-get install redis-server',
    macos: 'brew install redis',
  },
  openssl: {
    label: 'openssl (test certificates for Redis over TLS)',
    present: () => succeeds('openssl', ['version']),
    apt: ['openssl'],
    debian: 'sudo apt-get install openssl',
    macos: 'brew install openssl@3',
  },
  cc: {
    label: 'a C compiler with libc headers (the clock-step shim the Redis tests build)',
    present: () => succeeds('cc', ['--version']) && (process.platform !== 'linux' || existsSync('/usr/include/dlfcn.h')),
    apt: ['gcc', 'libc6-dev'],
    debian: 'sudo apt-get install gcc libc6-dev',
    macos: 'xcode-select --install',
  },
};

/** The tools each command needs, in the order they are checked. */
export const NEEDS = {
  build: ['rust', 'zig'],
  demo: ['rust', 'zig'],
  'demo-fleet': ['rust', 'zig', 'redis-server'],
  test: ['rust', 'zig', 'redis-server', 'openssl', 'cc'],
};

/** The python3 to make the zig venv with, or null when there is none that can. */
function venvPython() {
  return succeeds('python3', ['-c', 'import venv, ensurepip']) ? 'python3' : null;
}

/** { root, apt, debianLike, venv } of this machine, as the plan needs it. */
export function probeHost() {
  let osRelease = '';
  try {
    osRelease = readFileSync('/etc/os-release', 'utf8');
  } catch {
    // not Linux, or an unusual one: never apt
  }
  return {
    platform: process.platform,
    root: typeof process.getuid === 'function' && process.getuid() === 0,
    apt: succeeds('apt-get', ['--version']),
    debianLike: /^ID(_LIKE)?=.*\b(debian|ubuntu)\b/m.test(osRelease),
    venv: venvPython() !== null,
  };
}

/**
 * What to do about the missing tools, decided without doing it:
 * `{ apt: [packages], fetchZig: bool, stop: [lines] }`. When `stop` has lines, nothing is done.
 */
export function planFor(missing, host, { noInstall = false } = {}) {
  const canApt = !noInstall && host.platform === 'linux' && host.root && host.apt && host.debianLike;
  const zigFetchable = !noInstall && (host.venv || canApt);
  const obtainable = (id) => (id === 'zig' ? zigFetchable : Boolean(TOOLS[id].apt) && canApt);
  if (!missing.every(obtainable)) {
    // Half an install helps nobody: the user gets every line, and nothing is changed.
    const stop = missing.map((id) => `missing ${TOOLS[id].label} — Debian/Ubuntu: ${TOOLS[id].debian} · macOS: ${TOOLS[id].macos}`);
    return { apt: [], fetchZig: false, stop };
  }
  const apt = new Set(missing.flatMap((id) => (id === 'zig' ? [] : TOOLS[id].apt)));
  const fetchesZig = missing.includes('zig');
  if (fetchesZig && !host.venv) apt.add('python3-venv');
  return { apt: [...apt], fetchZig: fetchesZig, stop: [] };
}

/** apt-get install, with a policy-rc.d that keeps installed services (redis) from starting. */
function aptInstall(packages) {
  const policy = '/usr/sbin/policy-rc.d';
  const ours = !existsSync(policy);
  if (ours) {
    writeFileSync(policy, '#!/bin/sh\nexit 101\n');
    chmodSync(policy, 0o755);
  }
  try {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    for (const args of [['update', '-qq'], ['install', '-y', '-qq', '--no-install-recommends', ...packages]]) {
      const r = spawnSync('apt-get', args, { stdio: ['ignore', 2, 2], env });
      if (r.status !== 0) throw new Error(`apt-get ${args.join(' ')} exited with ${r.status ?? r.signal}`);
    }
  } finally {
    if (ours) rmSync(policy, { force: true });
  }
}

/** Makes a venv in the cache and pip-installs the hash-pinned zig toolchain into it. */
function fetchZig() {
  const dir = zigCacheDir();
  const partial = `${dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(dirname(dir), { recursive: true });
  const steps = [
    ['python3', ['-m', 'venv', partial]],
    [join(partial, 'bin', 'pip'), ['install', '-q', '--disable-pip-version-check', '--require-hashes', '--only-binary', ':all:', '-r', ZIG_REQUIREMENTS]],
  ];
  for (const [cmd, args] of steps) {
    const r = spawnSync(cmd, args, { stdio: ['ignore', 2, 2] });
    if (r.status !== 0) {
      rmSync(partial, { recursive: true, force: true });
      throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status ?? r.signal}`);
    }
  }
  renameSync(partial, dir); // only a complete toolchain is ever found
}

/** Checks, installs or stops. Returns the exit code. */
export function preflight(purpose, { log = (line) => process.stderr.write(`${line}\n`), env = process.env } = {}) {
  const needs = NEEDS[purpose];
  if (!needs) throw new Error(`preflight: unknown purpose ${JSON.stringify(purpose)}: one of ${Object.keys(NEEDS).join(', ')}`);
  const wanted = needs.filter((id) => id !== 'zig' || buildsWithZig());
  const missing = wanted.filter((id) => !TOOLS[id].present());
  if (missing.length === 0) return 0;
  const plan = planFor(missing, probeHost(), { noInstall: env.SPEND_SENTINEL_NO_INSTALL === '1' });
  if (plan.stop.length > 0) {
    log(`spend-sentinel: \`${purpose}\` stopped before building; install these, then run it again:`);
    for (const line of plan.stop) log(`  ${line}`);
    return 1;
  }
  if (plan.apt.length > 0) {
    log(`spend-sentinel: installing ${plan.apt.join(' ')} with apt-get (root on Debian/Ubuntu; SPEND_SENTINEL_NO_INSTALL=1 to only be told)`);
    aptInstall(plan.apt);
  }
  if (plan.fetchZig) {
    log(`spend-sentinel: fetching ${ZIG_VERSIONS} from PyPI (hash-pinned, ~100 MB, once) into ${zigCacheDir()}`);
    fetchZig();
  }
  const still = wanted.filter((id) => !TOOLS[id].present());
  if (still.length > 0) {
    log(`spend-sentinel: still missing after installing: ${still.map((id) => TOOLS[id].label).join(', ')}`);
    return 1;
  }
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exitCode = preflight(process.argv[2]);
}
