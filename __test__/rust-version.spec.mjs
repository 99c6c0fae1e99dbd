// The Rust this project says it needs is the Rust its locked dependency graph needs: Cargo.toml's
// rust-version is at least every locked crate's own rust-version, and README.md, every page of docs/
// and the load-failure message (js/native-error.js) state the same version.
//
// The crates are those of this machine's target (cargo metadata --filter-platform: normal, build and
// dev dependencies from Cargo.lock). On a fresh machine the cargo registry holds only what this
// target's build and tests fetched; without the filter, cargo metadata would want every target's
// crates (windows-sys and the like) too, which a fresh machine never downloaded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { runCommand } from './helpers/wait.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const require = createRequire(import.meta.url);

/** "1.88" / "1.88.0" → [1, 88, 0]. */
const parts = (v) => {
  assert.match(v, /^\d+\.\d+(\.\d+)?$/, `a Rust version: ${v}`);
  const [a, b, c = 0] = v.split('.').map(Number);
  return [a, b, c];
};
const compare = (x, y) => {
  const [a, b] = [parts(x), parts(y)];
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
};

test("Cargo.toml's rust-version is at least the highest rust-version of the locked crates, and README and docs/ say it", async () => {
  const host = /^host: (\S+)$/m.exec((await runCommand('rustc', ['-vV'], { cwd: root })).stdout)?.[1];
  assert.ok(host, 'rustc -vV names the host target');
  // --offline: what the build and `cargo test` fetched must be enough (it is on a fresh machine once
  // `npm test` has built both; a warm registry must not be what makes this pass).
  const args = ['metadata', '--format-version', '1', '--locked', '--offline', '--filter-platform', host];
  const r = await runCommand('cargo', args, { cwd: root, timeoutMs: 180_000 });
  assert.equal(r.code, 0, `cargo ${args.join(' ')}: exit ${r.code}\n${r.stderr}`);
  const metadata = JSON.parse(r.stdout);
  const ours = metadata.packages.find((p) => metadata.workspace_members.includes(p.id));
  assert.ok(ours?.rust_version, 'Cargo.toml [package] has a rust-version');

  const locked = metadata.packages.filter((p) => p.id !== ours.id && p.rust_version);
  assert.ok(locked.length > 100, `the dependency graph declares rust-versions (${locked.length} crates)`);
  const needed = locked.reduce((max, p) => (compare(p.rust_version, max.rust_version) > 0 ? p : max));
  const needing = locked.filter((p) => compare(p.rust_version, needed.rust_version) === 0).map((p) => `${p.name} ${p.version}`);
  assert.ok(
    compare(ours.rust_version, needed.rust_version) >= 0,
    `Cargo.toml says rust-version ${ours.rust_version}, but ${needing.join(', ')} need Rust ${needed.rust_version}`,
  );

  const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  const stated = pages.flatMap((page) =>
    [...readFileSync(join(root, page), 'utf8').matchAll(/Rust \(?(?:≥ ?)?(\d+\.\d+(?:\.\d+)?)\+?/g)].map((m) => ({ page, version: m[1] })),
  );
  assert.ok(stated.length > 0, 'README.md or a page of docs/ states a Rust version');
  const wrong = stated.filter((s) => s.version !== ours.rust_version).map((s) => `${s.page}: Rust ${s.version}`);
  assert.deepEqual(wrong, [], `every Rust version README.md and docs/ state is Cargo.toml's (${ours.rust_version})`);
  assert.equal(require('../js/native-error.js').MIN_RUST, ours.rust_version, 'the load-failure message names the same Rust');
});
