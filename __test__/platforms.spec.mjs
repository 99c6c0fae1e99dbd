// What a fresh machine meets: `npm test`, `npm run build` and `npm run demo` check their tools
// first (scripts/preflight.mjs) and either install them (root on Debian/Ubuntu, announced), fetch
// zig, or stop before building with one line per missing tool; and docs/platforms.md says the same.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NEEDS, TOOLS, planFor } from '../scripts/preflight.mjs';
import { runCommand } from './helpers/wait.mjs';

const require = createRequire(import.meta.url);
const { nativeLoadError } = require('../js/native-error.js');
const root = fileURLToPath(new URL('../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const platformsPage = readFileSync(join(root, 'docs', 'platforms.md'), 'utf8');

const debianRoot = { platform: 'linux', root: true, apt: true, debianLike: true, venv: true };
const debianUser = { ...debianRoot, root: false };
const mac = { platform: 'darwin', root: false, apt: false, debianLike: false, venv: true };

describe('the plan for missing tools', () => {
  test('root on Debian/Ubuntu: apt-get installs them, nothing stops', () => {
    const plan = planFor(['redis-server', 'openssl', 'cc'], debianRoot);
    assert.deepEqual(plan, { apt: ['redis-server', 'openssl', 'gcc', 'libc6-dev'], fetchZig: false, stop: [] });
  });

  test('not root: one stop line per tool, with the Debian/Ubuntu and the macOS way, and nothing installed', () => {
    for (const host of [debianUser, mac]) {
      const plan = planFor(['rust', 'redis-server', 'openssl', 'cc'], host);
      assert.deepEqual([plan.apt, plan.fetchZig], [[], false]);
      assert.equal(plan.stop.length, 4);
      for (const [i, id] of ['rust', 'redis-server', 'openssl', 'cc'].entries()) {
        assert.ok(plan.stop[i].includes(TOOLS[id].label), plan.stop[i]);
        assert.ok(plan.stop[i].includes(`Debian/Ubuntu: ${TOOLS[id].debian}`) && plan.stop[i].includes(`macOS: ${TOOLS[id].macos}`), plan.stop[i]);
      }
    }
  });

  test('a tool that cannot be had stops everything, even what root could install, with a line for each', () => {
    const plan = planFor(['rust', 'redis-server'], debianRoot);
    assert.deepEqual([plan.apt, plan.fetchZig], [[], false]);
    assert.deepEqual(plan.stop.map((line) => line.split(' — ')[0]), ['missing ' + TOOLS.rust.label, 'missing ' + TOOLS['redis-server'].label]);
  });

  test('zig is fetched without root when python3 has venv; root gets venv from apt first; else it stops', () => {
    assert.deepEqual(planFor(['zig'], debianUser), { apt: [], fetchZig: true, stop: [] });
    assert.deepEqual(planFor(['zig'], { ...debianRoot, venv: false }), { apt: ['python3-venv'], fetchZig: true, stop: [] });
    assert.equal(planFor(['zig'], { ...debianUser, venv: false }).stop.length, 1);
  });

  test('SPEND_SENTINEL_NO_INSTALL=1: only told, even as root', () => {
    const plan = planFor(['zig', 'redis-server'], debianRoot, { noInstall: true });
    assert.deepEqual([plan.apt, plan.fetchZig, plan.stop.length], [[], false, 2]);
  });
});

/** A PATH with only these commands (symlinked from where they are now). */
function pathWith(commands) {
  const dir = mkdtempSync(join(tmpdir(), 'spend-sentinel-path-'));
  for (const name of commands) {
    const found = name === 'node' ? process.execPath : execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
    symlinkSync(found, join(dir, name));
  }
  return dir;
}

function bareEnv(path) {
  const cache = mkdtempSync(join(tmpdir(), 'spend-sentinel-cache-'));
  return { env: { ...process.env, PATH: path, XDG_CACHE_HOME: cache, SPEND_SENTINEL_NO_INSTALL: '1' }, cache };
}

describe('on a machine without the tools', () => {
  test('`npm test`\'s preflight stops with one line per missing tool, naming both ways to get it', async () => {
    const path = pathWith(['node']);
    const { env, cache } = bareEnv(path);
    try {
      const r = await runCommand(process.execPath, [join(root, 'scripts', 'preflight.mjs'), 'test'], { cwd: root, env, timeoutMs: 30_000 });
      assert.equal(r.code, 1, r.stderr);
      const lines = r.stderr.trim().split('\n');
      assert.match(lines[0], /`test` stopped before building/);
      const missing = NEEDS.test.filter((id) => id !== 'zig' || process.platform === 'linux');
      assert.equal(lines.length, 1 + missing.length, r.stderr);
      for (const id of missing) {
        const line = lines.find((l) => l.includes(TOOLS[id].label));
        assert.ok(line && /Debian\/Ubuntu: .+ · macOS: .+/.test(line), `a line for ${id}: ${r.stderr}`);
      }
    } finally {
      rmSync(path, { recursive: true, force: true });
      rmSync(cache, { recursive: true, force: true });
    }
  });

  test('the fleet demo stops before building when redis-server is missing', async () => {
    const path = pathWith(['node', 'cargo', 'rustc']);
    const { env, cache } = bareEnv(path);
    env.XDG_CACHE_HOME = process.env.XDG_CACHE_HOME ?? join(process.env.HOME, '.cache'); // zig, as fetched by the build
    try {
      const r = await runCommand(process.execPath, [join(root, 'scripts', 'demo.mjs'), '--fleet'], { cwd: root, env, timeoutMs: 30_000 });
      assert.equal(r.code, 1, r.stderr);
      assert.deepEqual(r.stderr.trim().split('\n').slice(1), [`  missing ${TOOLS['redis-server'].label} — Debian/Ubuntu: ${TOOLS['redis-server'].debian} · macOS: ${TOOLS['redis-server'].macos}`]);
      assert.doesNotMatch(r.stdout + r.stderr, /Compiling|napi/, 'nothing was built');
    } finally {
      rmSync(path, { recursive: true, force: true });
      rmSync(cache, { recursive: true, force: true });
    }
  });

  test('the commands check before they build: npm test, npm run build, npm run demo', () => {
    assert.match(pkg.scripts.test, /^node scripts\/preflight\.mjs test && npm run build && /);
    assert.equal(pkg.scripts.build, 'node scripts/build.mjs');
    assert.equal(pkg.scripts.demo, 'node scripts/demo.mjs');
  });
});

describe('docs/platforms.md', () => {
  test('its table gives each tool the same install line the preflight prints', () => {
    for (const [id, tool] of Object.entries(TOOLS)) {
      if (id === 'rust') continue; // its line holds a pipe: the page gives rustup in the text above the table
      assert.ok(platformsPage.includes(`\`${tool.debian}\``) && platformsPage.includes(`\`${tool.macos}\``), `${id}: ${tool.debian} / ${tool.macos}`);
    }
    assert.ok(platformsPage.includes(TOOLS.rust.debian.split(' (')[0]), 'the rustup line');
  });

  test('the load error it shows is the one the package throws on that platform', () => {
    const shown = /<!-- load-error: darwin-arm64[^>]*-->\n```text\n(.*)\n```/.exec(platformsPage)?.[1];
    assert.ok(shown, 'docs/platforms.md shows the darwin-arm64 load error');
    const host = { platform: 'darwin', arch: 'arm64', libc: null, glibc: null };
    assert.equal(shown, nativeLoadError(new Error('Cannot find native binding.'), { host, version: pkg.version }).message);
  });
});
