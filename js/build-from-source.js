'use strict';
// `npx spend-sentinel build-from-source`: for platforms without a prebuilt binary (everything but
// Linux x64 with glibc ≥ 2.17). The package ships its Rust sources and Cargo.lock; this compiles
// them with the machine's own Rust (`cargo build --release --locked`) and puts the library where
// js/native.js looks when the prebuilt binary is missing or does not load.

const { spawnSync } = require('node:child_process');
const { copyFileSync, existsSync, mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { MIN_RUST } = require('./native-error');

const PACKAGE_ROOT = join(__dirname, '..');
/** Where js/native.js loads a from-source build from. */
const FROM_SOURCE_BINARY = join(PACKAGE_ROOT, 'spend-sentinel.from-source.node');

/** The file name cargo gives a cdylib named spend_sentinel on this platform. */
function cdylibName(platform = process.platform) {
  if (platform === 'win32') return 'spend_sentinel.dll';
  return platform === 'darwin' ? 'libspend_sentinel.dylib' : 'libspend_sentinel.so';
}

/**
 * Builds and installs the addon. The build directory is CARGO_TARGET_DIR when set (kept, so a
 * rebuild is incremental), otherwise a temporary one removed afterwards. Returns the exit code;
 * progress and errors go to `log`.
 */
function buildFromSource({ env = process.env, log = (line) => process.stderr.write(`${line}\n`) } = {}) {
  const cargo = env.CARGO || 'cargo';
  if (spawnSync(cargo, ['--version'], { stdio: 'ignore', env }).status !== 0) {
    log(`spend-sentinel build-from-source: cargo was not found: install Rust ≥ ${MIN_RUST} (https://rustup.rs), then run it again`);
    return 1;
  }
  const ownTargetDir = !env.CARGO_TARGET_DIR;
  const targetDir = env.CARGO_TARGET_DIR || mkdtempSync(join(tmpdir(), 'spend-sentinel-build-'));
  try {
    log(`spend-sentinel build-from-source: cargo build --release (Rust ≥ ${MIN_RUST}; a few minutes)…`);
    const manifest = join(PACKAGE_ROOT, 'Cargo.toml');
    const r = spawnSync(cargo, ['build', '--release', '--locked', '--lib', '--manifest-path', manifest], {
      env: { ...env, CARGO_TARGET_DIR: targetDir },
      stdio: ['ignore', 2, 2],
    });
    if (r.status !== 0) {
      log(`spend-sentinel build-from-source: cargo build failed (exit ${r.status ?? r.signal}); its output is above`);
      return 1;
    }
    const built = join(targetDir, 'release', cdylibName());
    if (!existsSync(built)) {
      log(`spend-sentinel build-from-source: cargo finished but ${built} is missing`);
      return 1;
    }
    copyFileSync(built, FROM_SOURCE_BINARY);
    log(`spend-sentinel build-from-source: installed ${FROM_SOURCE_BINARY}`);
    return 0;
  } finally {
    if (ownTargetDir) rmSync(targetDir, { recursive: true, force: true });
  }
}

module.exports = { buildFromSource, FROM_SOURCE_BINARY, cdylibName };
