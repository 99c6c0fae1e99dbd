// The binary the tests load (and release:local ships: pack-install.spec.mjs compares the bytes)
// runs on every glibc Linux that runs Node 20: it needs no glibc symbol version above MIN_GLIBC,
// the floor the load error and the docs state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { glibcVersionsNeeded, versionAtMost } from './helpers/elf.mjs';
import { SHIPPED_TARGET } from '../scripts/build.mjs';

const require = createRequire(import.meta.url);
const { MIN_GLIBC } = require('../js/native-error.js');
const root = fileURLToPath(new URL('../', import.meta.url));
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));
const binary = `${root}${pkg.napi.binaryName}.linux-x64-gnu.node`;
const onTarget = process.platform === 'linux' && process.arch === 'x64';

test(`the built binary needs no glibc above ${MIN_GLIBC}`, { skip: !onTarget && 'the Linux x64 binary is built on Linux x64 only' }, () => {
  const needed = glibcVersionsNeeded(binary);
  assert.ok(needed.length > 0, `readelf found the glibc versions ${binary} needs`);
  const above = needed.filter((v) => !versionAtMost(v, MIN_GLIBC));
  assert.deepEqual(above, [], `${binary} needs glibc ${above.join(', ')}: it would not load below glibc ${above.at(-1)}`);
});

test('the check tells: Node.js itself, built for glibc 2.28, needs more than 2.17', { skip: !onTarget && 'Linux x64 only' }, () => {
  const needed = glibcVersionsNeeded(process.execPath);
  assert.ok(needed.some((v) => !versionAtMost(v, MIN_GLIBC)), `node needs ${needed.join(', ')}`);
});

test('the build links for the glibc the load error and the docs name', () => {
  assert.equal(SHIPPED_TARGET, `x86_64-unknown-linux-gnu.${MIN_GLIBC}`);
  assert.equal(pkg.scripts.build, 'node scripts/build.mjs', 'npm run build (which npm test and release:local run) is that build');
  for (const page of ['README.md', 'docs/platforms.md']) {
    assert.ok(readFileSync(`${root}${page}`, 'utf8').includes(`glibc ≥ ${MIN_GLIBC}`), `${page} says glibc ≥ ${MIN_GLIBC}`);
  }
});
