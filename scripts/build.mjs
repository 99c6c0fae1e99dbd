#!/usr/bin/env node
// npm run build: the release build of the addon, the one the tests load and release:local ships.
//
// On Linux x64 (glibc) it is linked by zig against glibc 2.17 (`cargo zigbuild`, through napi's
// --cross-compile), so one binary loads on every glibc Linux that runs Node 20 (Debian 11,
// Ubuntu 20.04, RHEL 8 and older), not only on the build machine's glibc. Elsewhere it is a native
// build for the machine it runs on. Extra arguments go to `napi build`.
import { spawnSync } from 'node:child_process';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildsWithZig, preflight, zigToolchainBin } from './preflight.mjs';

/** The glibc-versioned target cargo-zigbuild links for; MIN_GLIBC in js/native-error.js says the same. */
export const SHIPPED_TARGET = 'x86_64-unknown-linux-gnu.2.17';

const root = fileURLToPath(new URL('../', import.meta.url));

function main() {
  const code = preflight('build');
  if (code !== 0) return code;
  const args = ['build', '--platform', '--release', '--no-const-enum', ...process.argv.slice(2)];
  const env = { ...process.env };
  if (buildsWithZig()) {
    args.push('--cross-compile', '--target', SHIPPED_TARGET);
    const bin = zigToolchainBin();
    if (bin) env.PATH = `${bin}${delimiter}${env.PATH}`;
  }
  const napi = join(root, 'node_modules', '.bin', 'napi');
  const r = spawnSync(napi, args, { cwd: root, env, stdio: 'inherit' });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = main();
