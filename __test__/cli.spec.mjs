// `spend-sentinel probe <url> [--timeout-ms N]` (js/cli.js, js/probe-client.js): the Docker
// HEALTHCHECK helper. Exit 0 on a 2xx answer, 1 on anything else, usage errors included.
// `--help`, `-h` and `help` are not errors: usage on stdout, exit 0; `--version` prints the
// package's version. Errors are one line that echoes what was typed, then a hint (never the usage).
// Each test runs the real CLI in a child process against a plain node:http server started here.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { closedPort, runNode } from './helpers/wait.mjs';

const ROOT = new URL('../', import.meta.url);
const CLI = fileURLToPath(new URL('js/cli.js', ROOT));
const USAGE_LINE = /^usage: spend-sentinel probe <url> \[--timeout-ms N\]/m;
/** A CLI error: one line naming the error, then one line pointing at the usage. */
const ONE_LINE_AND_HINT = /^spend-sentinel: [^\n]+\nrun "spend-sentinel --help" for usage\n$/;

/** Runs the CLI with `args`; the bound only ends a hang (a slow machine makes a test slower, never red). */
const cli = (args, timeoutMs = 60_000) => runNode([CLI, ...args], { timeoutMs });

/**
 * Starts a node:http server with `handler` on `listen` options (default 127.0.0.1, ephemeral port);
 * records every request; closed (connections included) by the test's cleanup.
 */
async function serve(t, handler, listen = { host: '127.0.0.1', port: 0 }) {
  const seen = [];
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method, url: req.url, headers: req.headers, localAddress: req.socket.localAddress });
    handler(req, res);
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen, resolve);
  });
  t.after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { server, port: server.address().port, seen };
}

const answer = (status, body) => (req, res) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(body);
};

function assertExit(run, code, what) {
  assert.equal(run.timedOut, false, `${what}: the CLI did not exit (stdout ${JSON.stringify(run.stdout)}, stderr ${JSON.stringify(run.stderr)})`);
  assert.equal(run.code, code, `${what}: exit code (stdout ${JSON.stringify(run.stdout)}, stderr ${JSON.stringify(run.stderr)})`);
}

describe('package wiring', () => {
  test('package.json declares bin spend-sentinel → js/cli.js, which has a node shebang and is executable', () => {
    const pkg = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8'));
    assert.deepEqual(pkg.bin, { 'spend-sentinel': 'js/cli.js' });
    const text = readFileSync(CLI, 'utf8');
    assert.ok(text.startsWith('#!/usr/bin/env node\n'), `first line: ${JSON.stringify(text.split('\n')[0])}`);
    const mode = statSync(CLI).mode;
    assert.equal(mode & 0o111, 0o111, `js/cli.js mode ${(mode & 0o777).toString(8)}: not executable by everyone`);
  });
});

describe('probe: healthy answers exit 0', () => {
  test('http://localhost/ reaches a server listening on [::1] only (/etc/hosts maps localhost to 127.0.0.1 only)', async (t) => {
    const { port, seen } = await serve(t, answer(200, '{"status":"ready"}'), { host: '::1', port: 0, ipv6Only: true });
    const run = await cli(['probe', `http://localhost:${port}/ready`]);
    assertExit(run, 0, 'IPv6-only listener via localhost');
    assert.equal(run.stdout, '200 {"status":"ready"}\n');
    assert.equal(seen.length, 1);
    assert.equal(seen[0].localAddress, '::1');
  });

  test('http://localhost/ reaches a server listening on 127.0.0.1 only', async (t) => {
    const { port, seen } = await serve(t, answer(200, '{"status":"ready"}'));
    const run = await cli(['probe', `http://localhost:${port}/ready`]);
    assertExit(run, 0, 'IPv4-only listener via localhost');
    assert.equal(run.stdout, '200 {"status":"ready"}\n');
    assert.equal(seen.length, 1);
    assert.equal(seen[0].localAddress, '127.0.0.1');
  });

  test('http://[::1]:port/ with a 2xx answer; the request is a GET asking for JSON', async (t) => {
    const { port, seen } = await serve(t, answer(204, ''), { host: '::1', port: 0, ipv6Only: true });
    const run = await cli(['probe', `http://[::1]:${port}/live?deep=1`, '--timeout-ms', '2000']);
    assertExit(run, 0, '204 from [::1]');
    assert.match(run.stdout, /^204\b/);
    assert.equal(seen.length, 1);
    assert.equal(seen[0].method, 'GET');
    assert.equal(seen[0].url, '/live?deep=1');
    assert.equal(seen[0].headers.accept, 'application/json');
  });

  test('a large body is cut to 4 KiB in the output', async (t) => {
    const { port } = await serve(t, answer(200, 'y'.repeat(100_000)));
    const run = await cli(['probe', `http://127.0.0.1:${port}/`]);
    assertExit(run, 0, 'large body');
    assert.equal(run.stdout, `200 ${'y'.repeat(4096)}\n`);
  });
});

describe('probe: unhealthy answers and failures exit 1', () => {
  test('503: exit 1, status and body printed', async (t) => {
    const body = '{"status":"not_ready","evidence_age_seconds":null,"reason":"no_evidence"}';
    const { port } = await serve(t, answer(503, body));
    const run = await cli(['probe', `http://127.0.0.1:${port}/ready`]);
    assertExit(run, 1, '503');
    assert.equal(run.stdout, `503 ${body}\n`);
  });

  test('404: exit 1', async (t) => {
    const { port } = await serve(t, answer(404, 'not found'));
    const run = await cli(['probe', `http://localhost:${port}/nope`]);
    assertExit(run, 1, '404');
    assert.equal(run.stdout, '404 not found\n');
  });

  test('connection refused: exit 1 with a message on stderr', async () => {
    const port = await closedPort();
    const run = await cli(['probe', `http://127.0.0.1:${port}/`]);
    assertExit(run, 1, 'refused');
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /^spend-sentinel probe: .*ECONNREFUSED/m);
  });

  test('connection refused on both loopback addresses of localhost: exit 1, each attempt described', async () => {
    const port = await closedPort();
    const run = await cli(['probe', `http://localhost:${port}/`]);
    assertExit(run, 1, 'refused via localhost');
    assert.match(run.stderr, /ECONNREFUSED/, 'an empty AggregateError message would leave stderr without the cause');
  });

  test('a server that never answers: --timeout-ms 300 → exit 1 by itself, not before the 300 ms', async (t) => {
    // The server keeps the connection open for ever: only --timeout-ms can end the probe before
    // the runner's bound, which only ends a hang.
    const { port, seen } = await serve(t, () => {}); // accepts, reads the request, never answers
    const run = await cli(['probe', `http://127.0.0.1:${port}/`, '--timeout-ms', '300']);
    assert.equal(run.timedOut, false, `the CLI did not exit by itself within 60 s: --timeout-ms 300 did not end the wait on a server that never answers (stderr ${JSON.stringify(run.stderr)})`);
    assertExit(run, 1, 'hanging server');
    assert.ok(run.elapsedMs >= 300, `exited after ${run.elapsedMs.toFixed(0)} ms, before the 300 ms timeout`);
    assert.match(run.stderr, /no answer within 300 ms/, 'ended by the timeout, not by another error');
    assert.equal(seen.length, 1, 'the request reached the server');
  });

  test('headers sent, body never finished: --timeout-ms 300 bounds the whole exchange', async (t) => {
    // The body never ends and the connection stays open: only --timeout-ms can end the probe.
    const { port } = await serve(t, (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"status":'); // and never ends
    });
    const run = await cli(['probe', `http://127.0.0.1:${port}/`, '--timeout-ms=300']);
    assert.equal(run.timedOut, false, `the CLI did not exit by itself within 60 s: --timeout-ms 300 did not bound a body that never ends (stderr ${JSON.stringify(run.stderr)})`);
    assertExit(run, 1, 'unfinished body');
    assert.ok(run.elapsedMs >= 300, `exited after ${run.elapsedMs.toFixed(0)} ms, before the 300 ms timeout`);
    assert.equal(run.stdout, '', 'a partial 200 must not be reported as healthy');
    assert.match(run.stderr, /no answer within 300 ms/, 'ended by the timeout, and explained on stderr');
  });
});

describe('usage errors exit 1 with one line and a hint on stderr and make no request', () => {
  const cases = [
    ['no command', () => []],
    ['unknown command', (url) => ['check', url]],
    ['missing url', () => ['probe']],
    ['two urls', (url) => ['probe', url, url]],
    ['a non-URL', () => ['probe', 'not a url']],
    ['a relative path', () => ['probe', '/ready']],
    ['an ftp:// URL', () => ['probe', 'ftp://127.0.0.1/ready']],
    ['--timeout-ms 0', (url) => ['probe', url, '--timeout-ms', '0']],
    ['--timeout-ms abc', (url) => ['probe', url, '--timeout-ms', 'abc']],
    ['--timeout-ms=-5', (url) => ['probe', url, '--timeout-ms=-5']],
    ['--timeout-ms without a value', (url) => ['probe', url, '--timeout-ms']],
    ['an unknown flag', (url) => ['probe', url, '--verbose']],
    ['a flag of another command', (url) => ['probe', url, '--budget', '1']],
  ];
  for (const [name, makeArgs] of cases) {
    test(name, async (t) => {
      const { port, seen } = await serve(t, answer(200, 'ok'));
      const args = makeArgs(`http://127.0.0.1:${port}/ready`);
      const run = await cli(args);
      assertExit(run, 1, `${name} (${JSON.stringify(args)})`);
      assert.match(run.stderr, ONE_LINE_AND_HINT, `stderr: ${run.stderr}`);
      assert.doesNotMatch(run.stderr, USAGE_LINE, 'the usage is not reprinted');
      assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace for a usage error');
      assert.equal(run.stdout, '');
      assert.equal(seen.length, 0, 'no request was made');
    });
  }
});

describe('asking for help is not an error: usage on stdout, exit 0', () => {
  for (const args of [['--help'], ['-h'], ['help'], ['window', '--help'], ['probe', '-h']]) {
    test(args.join(' '), async () => {
      const run = await cli(args);
      assertExit(run, 0, args.join(' '));
      assert.match(run.stdout, USAGE_LINE);
      assert.match(run.stdout, /^\s+spend-sentinel window --budget B --rate R/m, 'every command is described');
      assert.equal(run.stderr, '');
    });
  }
});

describe('--version prints the package version', () => {
  test('--version: the version of package.json on stdout, exit 0', async () => {
    const { version } = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8'));
    const run = await cli(['--version']);
    assertExit(run, 0, '--version');
    assert.equal(run.stdout, `${version}\n`);
    assert.equal(run.stderr, '');
    const help = await cli(['--help']);
    assert.match(help.stdout, /^\s+spend-sentinel --version\b/m, 'the usage lists it');
  });
});

test("docs/frameworks.md's error example is what the CLI prints on stderr", async () => {
  const page = readFileSync(new URL('docs/frameworks.md', ROOT), 'utf8');
  const [, args, shown] = /^```sh\n\$ npx spend-sentinel ([^\n]*)\n([\s\S]*?)\n```$/m.exec(page) ?? [];
  assert.ok(args, 'a "$ npx spend-sentinel …" block with its output');
  const run = await cli(args.split(' '));
  assertExit(run, 1, args);
  assert.equal(run.stderr, `${shown}\n`);
});

describe('errors echo what was typed, not the number it became', () => {
  const window = ['window', '--rate', '20'];
  const cases = [
    ['--budget abc', [...window, '--budget', 'abc'], /--budget: must be a finite number greater than 0 \(got "abc"\)/],
    ['--budget " " (blank)', [...window, '--budget', ' '], /--budget: .* \(got " "\)/],
    ['--budget 1e400 (overflows to Infinity)', [...window, '--budget', '1e400'], /--budget: .* \(got "1e400"\)/],
    ['--nodes 1.5', [...window, '--budget', '200', '--nodes', '1.5'], /--nodes: must be a whole number ≥ 1 \(got "1.5"\)/],
    ['--nodes x', [...window, '--budget', '200', '--nodes', 'x'], /^spend-sentinel: window: --nodes: must be a whole number ≥ 1 \(got "x"\)$/m],
    ['--live-nodes 1.5', [...window, '--budget', '200', '--max-nodes', '4', '--live-nodes', '1.5'], /^spend-sentinel: window: --live-nodes: .* \(got "1.5"\)/m],
    ['--max-stale 6 above a 5 s ceiling', [...window, '--budget', '200', '--nodes', '2', '--max-stale', '6'], /--max-stale: must be at most .* = 5 s \(got "6"\)/],
    ['probe --timeout-ms abc', ['probe', 'http://127.0.0.1:1/', '--timeout-ms', 'abc'], /--timeout-ms: .* \(got "abc"\)/],
  ];
  for (const [name, args, message] of cases) {
    test(name, async () => {
      const run = await cli(args);
      assertExit(run, 1, name);
      assert.match(run.stderr, message);
      assert.doesNotMatch(run.stderr, /\(got (NaN|Infinity)\)/);
      assert.match(run.stderr, ONE_LINE_AND_HINT);
      assert.equal(run.stdout, '');
    });
  }
});
