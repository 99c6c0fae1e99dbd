// Every whole program of README.md and docs/*.md runs as pasted. A block marked
//   <!-- runs-as-pasted: app.cjs (…) -->
// (see readme-snippets.spec.mjs for the markers) is written byte for byte under that name to
// scratch/doc-program-*/ inside this repository, so `spend-sentinel` resolves to this package by
// its own name and `express` or `fastify` to the repository's node_modules, as after `npm install`
// (a ```ts block is compiled to JavaScript first, as its reader would). It runs in a child process
// with the environment its plan below gives (a stand-in billing API on localhost for the programs
// that read their options from SPEND_SENTINEL_* variables) and PORT; the test waits for GET /ready
// to answer 200, makes the plan's requests, sends SIGTERM and expects exit 0 with nothing on
// stderr. A marked program without a plan, or a plan without a program, fails.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { documentationSnippets } from './helpers/readme-snippets.mjs';
import { startFakeAuthority, reply } from './helpers/fake-authority.mjs';
import { request } from './helpers/frameworks.mjs';
import { closedPort, pollUntil, withTimeout } from './helpers/wait.mjs';

const ts = createRequire(import.meta.url)('typescript');
const root = fileURLToPath(new URL('../', import.meta.url));

const BILLING_KEY = 'sk_test_doc_programs';
const SERVICE_KEY = 'service-key';

/** The options docs/frameworks.md gives in production, with the stand-in's URL. */
const fromEnvVariables = (billingUrl) => ({
  SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS: '200',
  SPEND_SENTINEL_BUDGET_MAX_UNITS_PER_SECOND: '20',
  SPEND_SENTINEL_BUDGET_NODES: '2',
  SPEND_SENTINEL_AUTHORITY_URL: billingUrl,
  SPEND_SENTINEL_AUTHORITY_ALLOW_INSECURE_HTTP: 'true', // the stand-in speaks plain http on localhost
  SPEND_SENTINEL_AUTHORITY_CREDENTIAL_ENV: 'BILLING_API_KEY',
  SPEND_SENTINEL_AUTHORITY_REQUIRED_CAPABILITY: 'meter.requests',
  BILLING_API_KEY: BILLING_KEY,
  API_KEY: SERVICE_KEY,
});

const json = (body, headers = {}) => ({ method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const signedIn = { authorization: `Bearer ${SERVICE_KEY}` };

/** The metered route of the framework examples, called as a client would. */
const USAGE_CALLS = [
  ['no key', '/v1/usage', json({ units: 2 }), 401, { error: 'unauthorized' }],
  ['2 units', '/v1/usage', json({ units: 2 }, signedIn), 200, { recorded: 2 }],
  ['units as a string', '/v1/usage', json({ units: '5' }, signedIn), 400, { error: 'invalid_units' }],
];

/** Per program (`file:name`): whether it asks a stand-in billing API, and the calls it answers. */
const PLANS = {
  'README.md:app.js': { billing: false, calls: [['the metered route', '/v1/generate', { method: 'POST' }, 200, { ok: true, used: 1 }]] },
  'docs/frameworks.md:app.cjs': { billing: true, calls: USAGE_CALLS },
  'docs/frameworks.md:app.mts': { billing: true, calls: USAGE_CALLS },
};

const programs = documentationSnippets().filter((s) => s.marker === 'run');

test('the whole programs of the docs: the README quick start and the Express and Fastify services, each with a plan', () => {
  const marked = programs.map((p) => `${p.file}:${p.name}`);
  assert.deepEqual(marked.sort(), Object.keys(PLANS).sort(), 'a plan for every <!-- runs-as-pasted: … --> block, and a block for every plan');
});

describe('each runs as pasted: ready, answers its routes, exits 0 on SIGTERM', { concurrency: true }, () => {
  for (const program of programs) {
    const plan = PLANS[`${program.file}:${program.name}`];
    if (!plan) continue;
    test(`${program.file}:${program.line} (${program.name})`, async () => {
      const env = { ...childEnv(), PORT: String(await closedPort()) };
      let billing;
      if (plan.billing) {
        billing = await startFakeAuthority();
        after(() => billing.close());
        billing.respondWith(reply.json(200, { capabilities: ['meter.requests'] }));
        Object.assign(env, fromEnvVariables(billing.url));
      }
      const run = start(program, env);
      const url = (path) => `http://127.0.0.1:${env.PORT}${path}`;
      // Until it listens, a request is refused: try again (no answer yet), as a load balancer would.
      const answerOrNull = () => request(url('/ready')).catch(() => null);
      let last = null;
      const ready = await pollUntil(async () => ((last = await answerOrNull())?.status === 200 ? last : null), {
        ms: 15_000,
        label: () => `/ready 200; last ${last && `${last.status} ${last.text}`}; output ${JSON.stringify(run.output)}`,
      });
      assert.equal(ready.json.reason, 'verified');
      if (billing) {
        assert.equal(billing.requests[0]?.headers.authorization, `Bearer ${BILLING_KEY}`, 'the program asked the billing API with the key its environment names');
      }
      for (const [what, path, init, status, body] of plan.calls) {
        const answer = await request(url(path), init);
        assert.equal(answer.status, status, `${what}: ${answer.text}`);
        assert.deepEqual(answer.json, body, what);
      }
      run.child.kill('SIGTERM'); // drains 5 s, then closes and exits 0
      assert.deepEqual(await withTimeout(run.exited, 30_000, () => `exit after SIGTERM; output ${JSON.stringify(run.output)}`), { code: 0, signal: null });
      assert.equal(run.output.stderr, '');
    });
  }
});

/** Writes the program as pasted (a ```ts one compiled, as its reader's build would) and runs it. */
function start(program, env) {
  mkdirSync(join(root, 'scratch'), { recursive: true });
  const dir = mkdtempSync(join(root, 'scratch', 'doc-program-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const { name, code } = runnable(program);
  const file = join(dir, name);
  writeFileSync(file, code);
  const child = spawn(process.execPath, [file], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  after(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
  const output = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (d) => (output.stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (output.stderr += d));
  const exited = new Promise((resolve) => child.once('exit', (exitCode, signal) => resolve({ code: exitCode, signal })));
  return { child, output, exited };
}

/** `app.js` runs as CommonJS (what `node app.js` does without "type": "module"); `app.mts` compiles to app.mjs. */
function runnable({ name, lang, code }) {
  if (lang === 'ts') {
    const options = { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 };
    return { name: name.replace(/\.mts$/, '.mjs'), code: ts.transpileModule(code, { compilerOptions: options }).outputText };
  }
  return { name: name.replace(/\.js$/, '.cjs'), code: `${code}\n` };
}

/** The test's environment without what would point the child elsewhere or configure its sentinel. */
function childEnv() {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (key.startsWith('SPEND_SENTINEL_') || key === 'NODE_OPTIONS' || key === 'NODE_TEST_CONTEXT') delete env[key];
  }
  return env;
}
