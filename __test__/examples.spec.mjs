// The examples are part of the product: the services run end to end against a fake authority
// (HTTPS with a private CA, as SPEND_SENTINEL_AUTHORITY_CA_PEM allows), configured only by
// SPEND_SENTINEL_* variables (Sentinel.fromEnv), the streaming one settles the tokens it really
// sent, and the Kubernetes manifest keeps the relations docs/kubernetes.md explains.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtinModules, createRequire } from 'node:module';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { startFakeAuthority, reply } from './helpers/fake-authority.mjs';
import { withTimeout, deferred, pollUntil } from './helpers/wait.mjs';
import { pollEndpoint, request } from './helpers/frameworks.mjs';

const { Sentinel } = createRequire(import.meta.url)('spend-sentinel');
const file = (path) => fileURLToPath(new URL(path, import.meta.url));
const CREDENTIAL = 'sk_live_example_9f8e7d6c5b4a';
const CAPABLE = reply.json(200, { capabilities: ['meter.requests'] });

/** The test process's environment without SPEND_SENTINEL_* variables: a service reads only ours. */
const baseEnv = () => Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SPEND_SENTINEL_')));

/** Starts an example service; resolves once it prints its port. Output is kept for assertions. */
async function startService(script, authority, env = {}) {
  const child = spawn(process.execPath, [file(`../examples/${script}`)], {
    env: {
      ...baseEnv(),
      SPEND_SENTINEL_AUTHORITY_URL: authority.httpsUrl,
      // As a Secret made from a file gives it: with a trailing newline, which is dropped.
      SPEND_SENTINEL_AUTHORITY_CREDENTIAL: `${CREDENTIAL}\n`,
      SPEND_SENTINEL_AUTHORITY_REQUIRED_CAPABILITY: 'meter.requests',
      SPEND_SENTINEL_AUTHORITY_CA_PEM: readFileSync(file('./fixtures/ca.pem'), 'utf8'),
      PORT: '0',
      // b 200 over 2 replicas at r = 50/s: a 2 s window (the seed's 5 s one at r = 20), so the
      // default cadence refreshes every 0.6–1 s and the revocation is heard sooner.
      SPEND_SENTINEL_BUDGET_UNVERIFIED_UNITS: '200',
      SPEND_SENTINEL_BUDGET_MAX_UNITS_PER_SECOND: '50',
      SPEND_SENTINEL_BUDGET_NODES: '2',
      DRAIN_DELAY_MS: '200',
      SHUTDOWN_TIMEOUT_MS: '2000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  const listening = deferred();
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  child.stdout.setEncoding('utf8').on('data', (d) => {
    output.stdout += d;
    const port = /listening on (\d+)/.exec(output.stdout)?.[1];
    if (port) listening.resolve(Number(port));
  });
  child.stderr.setEncoding('utf8').on('data', (d) => (output.stderr += d));
  exited.then(({ code }) => listening.reject(new Error(`${script} exited (${code}) before listening: ${output.stderr}`)));
  const port = await withTimeout(listening.promise, 10_000, `${script} to listen`);
  return { child, output, exited, url: `http://127.0.0.1:${port}` };
}


const usage = (svc, units, headers = { 'x-api-key': 'demo-key' }) =>
  request(`${svc.url}/v1/usage`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ units }),
  });

/** The summed samples of one family in a Prometheus text: `metric(text, 'x_total')` (every label set). */
const metric = (text, name) =>
  text
    .split('\n')
    .filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);

/** The settles so far, from /metrics: units reserved (admitted) minus refunded plus overage. */
async function settledSoFar(svc) {
  const { text } = await request(`${svc.url}/metrics`);
  return {
    settled: metric(text, 'spend_sentinel_admitted_units_total') - metric(text, 'spend_sentinel_refunded_units_total') + metric(text, 'spend_sentinel_overage_units_total'),
    reserved: metric(text, 'spend_sentinel_reserved_units'),
    exposure: metric(text, 'spend_sentinel_exposure_units'),
    overage: metric(text, 'spend_sentinel_overage_units_total'),
  };
}

/** Waits until no reservation is open (every stream settled); resolves the settles so far. */
const whenAllSettled = (svc) =>
  pollUntil(async () => {
    const now = await settledSoFar(svc);
    return now.reserved === 0 ? now : null;
  }, { ms: 10_000, label: 'spend_sentinel_reserved_units 0' });

/**
 * Asks the streaming example for an answer to a prompt of `promptTokens` words, reading its
 * server-sent events as a client of a model would; `abortAfterFirstChunk` hangs up once the first
 * chunk arrived. Resolves `{ status, tokens, finishReason }`: the words of the text events, and the
 * `finish_reason` of the last event (null when the client hung up first); a refusal resolves
 * `{ status, json }`.
 */
async function streamAnswer(svc, promptTokens, { abortAfterFirstChunk = false } = {}) {
  const hangUp = new AbortController();
  const res = await fetch(`${svc.url}/v1/complete`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'demo-key' },
    body: JSON.stringify({ prompt: Array.from({ length: promptTokens }, (_, i) => `word${i}`).join(' ') }),
    signal: hangUp.signal,
  });
  if (res.status !== 200) return { status: res.status, json: await res.json() };
  assert.match(res.headers.get('content-type'), /^text\/event-stream/);
  let text = '';
  const decoder = new TextDecoder();
  try {
    for await (const bytes of res.body) {
      text += decoder.decode(bytes, { stream: true });
      if (abortAfterFirstChunk) hangUp.abort();
    }
  } catch (err) {
    if (!abortAfterFirstChunk) throw err;
  }
  const events = text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => JSON.parse(e.slice('data: '.length)));
  const words = events.flatMap((e) => (e.text === undefined ? [] : e.text.split(' ').filter(Boolean)));
  const last = events.at(-1);
  if (!abortAfterFirstChunk) assert.ok(events.slice(0, -1).every((e) => !('finish_reason' in e)), 'only the last event ends the answer');
  return { status: 200, tokens: words.length, finishReason: last?.finish_reason ?? null };
}

// The services are independent processes with their own fake authority: they run at once.
describe('the example services', { concurrency: true }, () => {
  for (const script of ['express-service.mjs', 'fastify-service.mjs']) {
    describe(`examples/${script}`, () => {
      test('starts, probes, admits, refuses after a denial, and exits 0 on SIGTERM without printing the credential', async () => {
        const authority = await startFakeAuthority();
        after(() => authority.close());
        authority.respondWith(CAPABLE);
        const svc = await startService(script, authority);
        after(() => svc.child.kill('SIGKILL'));

        await pollEndpoint(`${svc.url}/startup`, (a) => a.status === 200, { ms: 10_000, label: '/startup 200' });
        const ready = await pollEndpoint(`${svc.url}/ready`, (a) => a.status === 200, { ms: 10_000, label: '/ready 200' });
        assert.deepEqual(Object.keys(ready.json), ['status', 'evidence_age_seconds', 'reason']);
        assert.equal((await request(`${svc.url}/live`)).json.status, 'alive');
        assert.equal(authority.requests.at(-1).headers.authorization, `Bearer ${CREDENTIAL}`);

        assert.equal((await usage(svc, 5, {})).status, 401, 'the service’s own routes need an API key');
        const admitted = await usage(svc, 5);
        assert.equal(admitted.status, 200);
        assert.equal(admitted.json.recorded, 5);

        authority.respondWith(reply.json(401, { error: 'revoked' }));
        const denied = await pollEndpoint(`${svc.url}/ready`, (a) => a.json?.reason === 'invalid_credential', { ms: 10_000, label: 'invalid_credential' });
        assert.equal(denied.status, 503);
        const refused = await usage(svc, 1);
        assert.equal(refused.status, 503);
        assert.deepEqual(refused.json, { error: 'not_admitted', reason: 'invalid_credential' });
        assert.ok(Number(refused.headers.get('retry-after')) >= 1);
        assert.equal((await request(`${svc.url}/live`)).status, 200, 'liveness never depends on the authority');

        svc.child.kill('SIGTERM');
        assert.deepEqual(await withTimeout(svc.exited, 10_000, `${script} to exit`), { code: 0, signal: null });
        assert.ok(!`${svc.output.stdout}${svc.output.stderr}`.includes(CREDENTIAL), 'credential in the output');
      });
    });
  }

  // Node budget 100 tokens (b 200 over 2 replicas, r = 20/s: a 5 s window); the model answers
  // 20–80 tokens in chunks of at most 8. The guard reserves the prompt and 8; the route records
  // each chunk once sent and extends the hold back to one chunk ahead, so a stream holds prompt + 8.
  test('examples/streaming-tokens.mjs: streams an answer, records what it sent, cuts a stream at the budget with finish_reason budget, refuses a prompt past it', async () => {
    const authority = await startFakeAuthority();
    after(() => authority.close());
    authority.respondWith(CAPABLE);
    const svc = await startService('streaming-tokens.mjs', authority, { SPEND_SENTINEL_BUDGET_MAX_UNITS_PER_SECOND: '20' });
    after(() => svc.child.kill('SIGKILL'));
    await pollEndpoint(`${svc.url}/ready`, (a) => a.status === 200, { ms: 10_000, label: '/ready 200' });

    // 3 + 8 reserved, and at most 80 tokens recorded: it fits whatever the authority answers.
    const before = await settledSoFar(svc);
    const answer = await streamAnswer(svc, 3);
    assert.equal(answer.finishReason, 'stop');
    assert.ok(answer.tokens >= 20 && answer.tokens <= 80, `an answer of ${answer.tokens} tokens`);
    let after1 = await whenAllSettled(svc);
    assert.equal(after1.settled - before.settled, 3 + answer.tokens, 'settled: the prompt and the tokens sent, each once');
    assert.equal(after1.overage, 0);

    // A client that hangs up after its first chunk (on a busy machine the whole answer may be in
    // it): the guard settles what was sent, and the route stops producing without an error.
    const left = await streamAnswer(svc, 3, { abortAfterFirstChunk: true });
    const after2 = await whenAllSettled(svc);
    assert.ok(after2.settled - after1.settled >= 3 + left.tokens, `settled ${after2.settled - after1.settled} for ${left.tokens} tokens received`);
    after1 = after2;

    // A refresh sent after those settles answers valid and clears their usage; then the authority
    // goes silent, so nothing the next stream records is cleared.
    await authority.nextRequest(10_000);
    const answered = authority.requests.length;
    authority.respondWith(reply.hang());
    await pollUntil(async () => (await settledSoFar(svc)).exposure === 0, { ms: 10_000, label: 'spend_sentinel_exposure_units 0' });
    // 85 + 8 held; each chunk sent is recorded and the hold topped back up to 93, so the extends
    // fit while the tokens sent stay ≤ 7: the chunk that passes 7 is the last (8 to 15 tokens).
    const cut = await streamAnswer(svc, 85);
    assert.equal(cut.finishReason, 'budget', 'a stream the budget cut short says so, never as a normal end');
    assert.ok(cut.tokens >= 8 && cut.tokens <= 15, `${cut.tokens} tokens before the cut`);
    const after3 = await whenAllSettled(svc);
    assert.equal(after3.settled - after1.settled, 85 + cut.tokens, 'settled: the prompt and the tokens sent before the cut');
    assert.equal(after3.overage, 0);
    // The recorded tokens asked for a refresh on demand; it goes unanswered, so nothing is cleared.
    // The settle added only the prompt to them (its whole usage less recordedUnits) and refunded
    // the rest of the hold: nothing held, nothing counted twice.
    await authority.waitForRequests(answered + 1);
    const silent = await settledSoFar(svc);
    assert.equal(silent.exposure, 85 + cut.tokens, 'exposure: the prompt and the tokens sent, once each');
    authority.respondWith(CAPABLE);

    const refused = await streamAnswer(svc, 120); // 128 tokens: more than the whole node budget
    assert.equal(refused.status, 413, 'it can never fit: retrying cannot help');
    assert.deepEqual(refused.json, { error: 'not_admitted', reason: 'exceeds_node_budget' });

    svc.child.kill('SIGTERM');
    assert.deepEqual(await withTimeout(svc.exited, 10_000, 'streaming-tokens.mjs to exit'), { code: 0, signal: null });
    assert.equal(svc.output.stderr, '', 'no error was logged (a settle that failed, a record or an extend after the client left)');
  });
});

/** Stand-ins for what a cluster's Secrets give (`valueFrom`): a variable not listed here fails. */
const SECRET_STAND_INS = { SPEND_SENTINEL_AUTHORITY_CREDENTIAL: 'sk_test_stand_in', SPEND_SENTINEL_BUDGET_FLEET_REDIS: 'redis://127.0.0.1:9' };

/** A container's env as variables, each `valueFrom` given its stand-in. */
const variablesOf = (entries) =>
  Object.fromEntries(
    entries.map((e) => {
      if ('value' in e) return [e.name, e.value];
      assert.ok(e.name in SECRET_STAND_INS, `${e.name} comes from a Secret: give it a stand-in`);
      return [e.name, SECRET_STAND_INS[e.name]];
    }),
  );

/** What `Sentinel.fromEnv(vars)` makes, asking an authority (and a Redis) where nothing listens. */
async function fromEnvReadOuts(vars) {
  const sentinel = Sentinel.fromEnv(vars, { authority: { url: 'https://127.0.0.1:9/v1/account' } });
  try {
    return { nodeBudgetUnits: sentinel.nodeBudgetUnits, staleWindowSeconds: sentinel.staleWindowSeconds };
  } finally {
    await sentinel.close();
  }
}

const manifest = parseYaml(readFileSync(file('../examples/k8s/deployment.yaml'), 'utf8'));

describe('examples/k8s/deployment.yaml', () => {
  const pod = manifest.spec.template.spec;
  const [container] = pod.containers;
  const env = variablesOf(container.env);
  const exposure = (probe) => probe.periodSeconds * probe.failureThreshold;

  test('probes point at the three routes on the container port', () => {
    assert.equal(container.startupProbe.httpGet.path, '/startup');
    assert.equal(container.readinessProbe.httpGet.path, '/ready');
    assert.equal(container.livenessProbe.httpGet.path, '/live');
    assert.equal(env.PORT, String(container.ports[0].containerPort));
  });

  test('readiness: period 5 s, threshold 2 (a broken pod serves at most ~10 s); liveness is slower', () => {
    assert.equal(container.readinessProbe.periodSeconds, 5);
    assert.equal(container.readinessProbe.failureThreshold, 2);
    assert.ok(exposure(container.livenessProbe) > exposure(container.readinessProbe));
    assert.ok(exposure(container.startupProbe) >= 30, 'startup gives the first refresh generous time');
  });

  test('a rollout keeps the static share: nodes (SPEND_SENTINEL_BUDGET_NODES) ≥ replicas + maxSurge', () => {
    // Kubernetes' defaults: RollingUpdate with maxSurge 25%, a percentage rounded up.
    const strategy = manifest.spec.strategy ?? { type: 'RollingUpdate' };
    const surge = strategy.type === 'Recreate' ? 0 : (strategy.rollingUpdate?.maxSurge ?? '25%');
    const maxSurge = typeof surge === 'string' ? Math.ceil((manifest.spec.replicas * Number.parseFloat(surge)) / 100) : surge;
    assert.ok(Number.isInteger(maxSurge) && maxSurge >= 0, `maxSurge ${surge}`);
    const nodes = Number(env.SPEND_SENTINEL_BUDGET_NODES);
    assert.ok(
      nodes >= manifest.spec.replicas + maxSurge,
      `nodes ${nodes} < replicas ${manifest.spec.replicas} + maxSurge ${maxSurge}: a rollout would pass b`,
    );
  });

  test('terminationGracePeriodSeconds exceeds drain delay + shutdown timeout', () => {
    const needed = (Number(env.DRAIN_DELAY_MS) + Number(env.SHUTDOWN_TIMEOUT_MS)) / 1000;
    assert.ok(pod.terminationGracePeriodSeconds > needed, `${pod.terminationGracePeriodSeconds} s ≤ ${needed} s`);
  });

  test('Sentinel.fromEnv accepts every variable it sets: the 5 s seed window, nodes = spec.replicas', async () => {
    assert.equal(Number(env.SPEND_SENTINEL_BUDGET_NODES), manifest.spec.replicas);
    assert.deepEqual(await fromEnvReadOuts(env), { nodeBudgetUnits: 100, staleWindowSeconds: 5 });
  });

  test('docs/fleet.md\'s autoscaled Deployment sets the variables of its fleet example, which Sentinel.fromEnv accepts', async () => {
    const page = readFileSync(file('../docs/fleet.md'), 'utf8');
    const block = [...page.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]).find((y) => y.includes('HorizontalPodAutoscaler'));
    const deployment = parseAllDocuments(block).map((d) => d.toJS()).find((d) => d.spec?.template);
    const fleetEnv = variablesOf(deployment.spec.template.spec.containers[0].env);
    assert.ok(Object.keys(fleetEnv).every((name) => name.startsWith('SPEND_SENTINEL_')), `only the sentinel's variables: ${Object.keys(fleetEnv)}`);
    const authority = Object.fromEntries(Object.entries(env).filter(([name]) => name.startsWith('SPEND_SENTINEL_AUTHORITY_')));
    // b 20000, r 50, maxStaleSeconds 10, maxNodes 25: a fresh fleet runs on its floor, 200 units (4 s).
    assert.deepEqual(await fromEnvReadOuts({ ...authority, ...fleetEnv }), { nodeBudgetUnits: 200, staleWindowSeconds: 4 });
  });
});

describe('examples/Dockerfile', () => {
  const repo = file('../');
  const dockerfile = readFileSync(file('../examples/Dockerfile'), 'utf8');
  const pkg = JSON.parse(readFileSync(file('../package.json'), 'utf8'));
  // Instructions, continuation lines joined, comments dropped: [{ op, args }].
  const instructions = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((line) => line.trim() && !line.trim().startsWith('#'))
    .map((line) => {
      const [, op, args] = /^\s*([A-Z]+)\s+(.*)$/.exec(line);
      return { op, args: args.trim() };
    });
  const all = (op) => instructions.filter((i) => i.op === op);
  const words = (args) => (args.startsWith('[') ? JSON.parse(args) : args.split(/\s+/));
  const env = Object.fromEntries(all('ENV').flatMap((i) => i.args.split(/\s+/).map((kv) => kv.split('='))));
  const workdir = all('WORKDIR').at(-1).args;

  /** The files the image holds, as paths under WORKDIR → the repository file each came from. */
  const image = new Map();
  for (const { args } of all('COPY')) {
    const parts = words(args).filter((w) => !w.startsWith('--'));
    const dest = parts.pop();
    for (const src of parts) {
      const from = join(repo, src);
      assert.ok(existsSync(from), `COPY ${src}: no such file in the repository (the build context is its root)`);
      const files = statSync(from).isDirectory()
        ? readdirSync(from, { recursive: true }).map((rel) => [join(src, rel), join(dest, rel)])
        : [[src, dest.endsWith('/') || parts.length > 1 ? join(dest, basename(src)) : dest]];
      for (const [repoPath, imagePath] of files) image.set(normalize(imagePath), repoPath);
    }
  }
  const npmCi = all('RUN').map((i) => i.args).find((a) => /\bnpm ci\b/.test(a));
  const installed = new Set([
    ...Object.keys(pkg.dependencies ?? {}),
    ...(npmCi && /--include=dev/.test(npmCi) ? Object.keys(pkg.devDependencies ?? {}) : []),
  ]);

  /** Follows a script's imports and requires through the image: every one must be there. */
  function assertRunnable(script, seen = new Set()) {
    if (seen.has(script)) return;
    seen.add(script);
    assert.ok(image.has(script), `${script}: the image has no such file (copied: ${[...image.keys()].filter((p) => !p.includes('/') || p.startsWith('examples/')).join(', ')})`);
    // binding.js is napi-rs's loader: it requires the one .node of this platform (checked below)
    // and names every other platform's package, which no image needs.
    if (script === 'binding.js') return;
    const source = readFileSync(join(repo, image.get(script)), 'utf8');
    for (const [, spec] of source.matchAll(/(?:\bfrom\s+|\brequire\(|\bimport\()\s*['"]([^'"]+)['"]/g)) {
      if (spec.startsWith('node:') || builtinModules.includes(spec)) continue;
      if (spec.startsWith('.')) {
        const target = normalize(join(dirname(script), spec));
        assertRunnable(/\.[cm]?js$/.test(target) ? target : `${target}.js`, seen);
      } else if (spec === pkg.name || spec.startsWith(`${pkg.name}/`)) {
        // the package by its own name: its exports map, from the copied package.json
        assert.ok(image.has('package.json'), `${script} imports ${spec}: package.json is not copied`);
        const entry = pkg.exports[spec === pkg.name ? '.' : `.${spec.slice(pkg.name.length)}`];
        assert.ok(entry, `${spec}: not in package.json exports`);
        assertRunnable(normalize(entry.default), seen);
      } else {
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
        assert.ok(installed.has(name), `${script} imports ${name}, which the image's \`${npmCi}\` does not install`);
      }
    }
  }

  test('glibc base image and a HEALTHCHECK through the CLI on /live', () => {
    assert.match(dockerfile, /^FROM node:\d+-bookworm/m);
    assert.doesNotMatch(dockerfile, /alpine/);
    const [healthcheck] = all('HEALTHCHECK');
    const cmd = JSON.parse(healthcheck.args.slice(healthcheck.args.indexOf('CMD') + 3).trim());
    assert.deepEqual(cmd.slice(0, 4), ['node', 'js/cli.js', 'probe', `http://localhost:${env.PORT}/live`]);
    assert.equal(image.get('js/cli.js'), 'js/cli.js');
    assert.equal(pkg.bin['spend-sentinel'], 'js/cli.js', 'the CLI the HEALTHCHECK runs is the package bin');
    assertRunnable('js/cli.js');
  });

  test('every COPY source exists, and the CMD runs a script of the repository with all it imports', () => {
    assert.equal(workdir, '/app');
    const cmd = JSON.parse(all('CMD').at(-1).args);
    assert.equal(cmd[0], 'node');
    assert.ok(existsSync(join(repo, image.get(cmd[1]) ?? cmd[1])), `CMD runs ${cmd[1]}, which is not in the repository`);
    assertRunnable(cmd[1]);
    assert.ok(image.has(`${pkg.napi.binaryName}.linux-x64-gnu.node`), 'the built addon (npm run build) is copied next to binding.js');
    assert.ok(image.has('binding.js'));
  });

  test('its metering.env is the one of docs/kubernetes.md and the Deployment\'s, and Sentinel.fromEnv accepts it', async () => {
    const listed = (text) => Object.fromEntries([...text.matchAll(/^(?:#\s*)?(SPEND_SENTINEL_[A-Z0-9_]+)=(\S+)$/gm)].map((m) => [m[1], m[2]]));
    const page = listed(readFileSync(file('../docs/kubernetes.md'), 'utf8'));
    assert.deepEqual(listed(dockerfile), page);
    const deployment = Object.fromEntries(manifest.spec.template.spec.containers[0].env.filter((e) => 'value' in e && e.name.startsWith('SPEND_SENTINEL_')).map((e) => [e.name, e.value]));
    assert.deepEqual(page, deployment);
    // The credential comes from the shell (docker run -e), as from a Secret in the Deployment.
    assert.match(dockerfile, /-e SPEND_SENTINEL_AUTHORITY_CREDENTIAL\b/);
    const withCredential = { ...page, SPEND_SENTINEL_AUTHORITY_CREDENTIAL: SECRET_STAND_INS.SPEND_SENTINEL_AUTHORITY_CREDENTIAL };
    assert.deepEqual(await fromEnvReadOuts(withCredential), { nodeBudgetUnits: 100, staleWindowSeconds: 5 });
  });

  test('docker stop: docs/kubernetes.md and the Dockerfile give a stop timeout longer than drain + shutdown timeout', () => {
    const needed = (Number(env.DRAIN_DELAY_MS) + Number(env.SHUTDOWN_TIMEOUT_MS)) / 1000;
    assert.ok(needed >= 35, `DRAIN_DELAY_MS + SHUTDOWN_TIMEOUT_MS in the image's ENV: ${needed} s`);
    const page = readFileSync(file('../docs/kubernetes.md'), 'utf8');
    for (const [name, text] of [['examples/Dockerfile', dockerfile], ['docs/kubernetes.md', page]]) {
      const run = [...text.matchAll(/--stop-timeout[ =](\d+)/g)].map((m) => Number(m[1]));
      const compose = [...text.matchAll(/stop_grace_period: (\d+)s/g)].map((m) => Number(m[1]));
      assert.ok(run.length > 0, `${name} says how to set docker run --stop-timeout`);
      assert.ok(compose.length > 0, `${name} says how to set Compose's stop_grace_period`);
      for (const seconds of [...run, ...compose]) assert.ok(seconds > needed, `${name}: ${seconds} s ≤ drain + shutdown ${needed} s`);
    }
  });
});
