// The README's first program runs as pasted. The code block right after the marker line
//   <!-- runs-as-pasted: app.js … -->
// is extracted byte for byte, written to scratch/readme-*/app.cjs inside this repository (so that
// `require('spend-sentinel')` resolves to this package by its own name, and `express` to the
// repository's node_modules, as they would after `npm install spend-sentinel express`), run with
// PORT=0 in a child process, and called over HTTP: the probes, an admitted metered request, the
// stand-in authority revoking the key (readiness and admission then refuse), and SIGTERM (exit 0).
// Also: the first screen keeps its two commands, and the demo's time counts the first build.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deferred, withTimeout } from './helpers/wait.mjs';
import { pollEndpoint, request } from './helpers/frameworks.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const README = readFileSync(join(root, 'README.md'), 'utf8');
const MARKER = /^<!-- runs-as-pasted: (\S+)[^\n]*-->\n```(?:js|javascript)\n([\s\S]*?)\n```$/m;

/** The program after the marker: `{ name, code }`, or null when the README has no marked block. */
function runnableSnippet(markdown) {
  const m = MARKER.exec(markdown);
  return m ? { name: m[1], code: `${m[2]}\n` } : null;
}

test('the first code block of the README is the marked, runnable one', () => {
  const snippet = runnableSnippet(README);
  assert.ok(snippet, 'README.md has a code block after <!-- runs-as-pasted: … -->');
  const firstJs = /```js\n([\s\S]*?)\n```/.exec(README)[1];
  assert.equal(`${firstJs}\n`, snippet.code, 'the runnable program is the first JavaScript a reader meets');
  for (const name of ['rateLimiter', 'authenticate', 'recordUsage']) {
    assert.doesNotMatch(snippet.code, new RegExp(`\\b${name}\\b`), `${name} is not defined in a program run as pasted`);
  }
});

test('the README’s first program, run as pasted: probes, admission, a revoked key, SIGTERM → exit 0', async () => {
  const snippet = runnableSnippet(README);
  assert.ok(snippet, 'README.md has a code block after <!-- runs-as-pasted: … -->');
  mkdirSync(join(root, 'scratch'), { recursive: true });
  const dir = mkdtempSync(join(root, 'scratch', 'readme-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, snippet.name.replace(/\.[cm]?js$/, '.cjs'));
  writeFileSync(file, snippet.code);

  const child = spawn(process.execPath, [file], { cwd: dir, env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  after(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
  const output = { stdout: '', stderr: '' };
  const listening = deferred();
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  child.stdout.setEncoding('utf8').on('data', (d) => {
    output.stdout += d;
    const port = /listening on http:\/\/localhost:(\d+)/.exec(output.stdout)?.[1];
    if (port) listening.resolve(Number(port));
  });
  child.stderr.setEncoding('utf8').on('data', (d) => (output.stderr += d));
  exited.then(({ code, signal }) => listening.reject(new Error(`the program exited (${code ?? signal}) before listening: ${output.stderr}`)));
  const port = await withTimeout(listening.promise, 15_000, () => `"listening on http://localhost:<port>"; output: ${JSON.stringify(output)}`);
  const url = (path) => `http://127.0.0.1:${port}${path}`;
  const post = (path) => request(url(path), { method: 'POST' });

  const ready = await pollEndpoint(url('/ready'), (a) => a.status === 200, { ms: 10_000, label: '/ready 200' });
  assert.deepEqual(ready.json.status, 'ready');
  assert.equal(ready.json.reason, 'verified');
  assert.equal((await request(url('/live'))).status, 200);
  assert.equal((await request(url('/startup'))).status, 200);

  const first = await post('/v1/generate');
  assert.equal(first.status, 200, first.text);
  assert.deepEqual(first.json, { ok: true, used: 1 });
  assert.deepEqual((await post('/v1/generate')).json, { ok: true, used: 2 });

  assert.equal((await post('/demo/revoke')).status, 200);
  // The next refresh (every 1.5–2.5 s for the 5 s window) hears the revocation.
  const revoked = await pollEndpoint(url('/ready'), (a) => a.json?.reason === 'invalid_credential', { ms: 10_000, label: 'invalid_credential' });
  assert.equal(revoked.status, 503);
  const refused = await post('/v1/generate');
  assert.equal(refused.status, 503);
  assert.deepEqual(refused.json, { error: 'not_admitted', reason: 'invalid_credential' });
  assert.equal(refused.headers.get('retry-after'), '3');

  child.kill('SIGTERM'); // drains 5 s (the default), then closes and exits 0
  assert.deepEqual(await withTimeout(exited, 20_000, 'the program to exit after SIGTERM'), { code: 0, signal: null });
  assert.equal(output.stderr, '');
});

test('first screen: one command runs the demo, one the tests, and the demo’s time counts the first build', () => {
  const firstScreen = README.slice(0, README.indexOf('\n## '));
  const commands = /```sh\n([\s\S]*?)\n```/.exec(firstScreen)?.[1].split('\n') ?? [];
  const demo = commands.filter((line) => /^npm ci && npm run demo\b/.test(line));
  const tests = commands.filter((line) => /^npm ci && npm test\b/.test(line));
  assert.equal(demo.length, 1, `one demo command in ${JSON.stringify(commands)}`);
  assert.equal(tests.length, 1, `one test command in ${JSON.stringify(commands)}`);
  // `npm run demo` compiles the addon first: in a fresh clone that, not the story, takes longest.
  assert.match(demo[0], /build/, 'the demo line says it builds first');
  assert.match(demo[0], /\d+\s*[–-]\s*\d+\s*min\b.*fresh clone|fresh clone.*\d+\s*[–-]\s*\d+\s*min\b/, 'and how long the first build takes');
  assert.match(demo[0], /~40 s/, 'and how long the story itself takes');
});
