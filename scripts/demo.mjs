#!/usr/bin/env node
// npm run demo [-- --fleet] [--fast] [--out PATH] [--plan]: checks the tools the chosen story needs
// (the fleet story also needs redis-server), builds the addon, then runs examples/demo.mjs.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { preflight } from './preflight.mjs';

const args = process.argv.slice(2);
const root = fileURLToPath(new URL('../', import.meta.url));
const run = (cmd, argv) => spawnSync(cmd, argv, { cwd: root, stdio: 'inherit' }).status ?? 1;

process.exitCode =
  preflight(args.includes('--fleet') ? 'demo-fleet' : 'demo') ||
  run(process.execPath, ['scripts/build.mjs']) ||
  run(process.execPath, ['examples/demo.mjs', ...args]);
