// The OpenTelemetry bridge end to end, read by code no one here wrote:
//   - OTLP over HTTP (@opentelemetry/exporter-metrics-otlp-proto) to a small receiver that decodes
//     each request with the OpenTelemetry project's own protobuf messages (the PyPI package
//     opentelemetry-proto, installed into a venv in this test's temporary directory; without
//     python3 -m venv or PyPI the test skips, saying why);
//   - @opentelemetry/exporter-prometheus scraped over HTTP and linted by `promtool check metrics`
//     (when promtool is on PATH: Debian's prometheus package, which .ci/run installs).
import { describe, test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';
import { controlledAuthority, fastOptions, recordTransitions, sentinelPool, withTimeout } from './helpers/wait.mjs';
import { CATALOG } from './helpers/otel.mjs';

const require = createRequire(import.meta.url);
const { Sentinel, CircuitBreaker } = require('spend-sentinel');
const { observe } = require('spend-sentinel/opentelemetry');
const { MeterProvider, PeriodicExportingMetricReader } = require('@opentelemetry/sdk-metrics');
const { OTLPMetricExporter } = require('@opentelemetry/exporter-metrics-otlp-proto');
const { PrometheusExporter } = require('@opentelemetry/exporter-prometheus');

const OTLP_PROTO = 'opentelemetry-proto==1.45.2';
const pool = sentinelPool(Sentinel);
afterEach(() => pool.closeAll());

/**
 * A sentinel observed on `meter` (from before its first refresh: the histogram counts the
 * refreshes from `observe` on) that answered `valid` once (call 1 held: nothing moves), and a
 * named breaker called once.
 */
async function readySentinel(meter) {
  const ctl = controlledAuthority();
  const sentinel = pool.make(fastOptions(ctl.auth, { refresh: { timeoutMs: 800 } }));
  const stop = observe(sentinel, { meter, attributes: { sentinel: 'billing' } });
  const transitions = recordTransitions(sentinel);
  ctl.release(await ctl.auth.call(0), 'valid', 'hold');
  await transitions.waitFor({ to: 'ready' });
  const heldCall = await ctl.auth.call(1);
  assert.equal(sentinel.admit(2.5), true);
  const breaker = new CircuitBreaker({ name: 'otel-export' });
  await breaker.fire(async () => 'ok');
  return { sentinel, heldCall, stop };
}

/** A venv with opentelemetry-proto in `dir`, or the reason there is none. */
function protoPython(dir) {
  const venv = join(dir, 'venv');
  const steps = [
    ['python3', ['-m', 'venv', venv]],
    [join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', '--timeout', '30', OTLP_PROTO]],
  ];
  for (const [cmd, args] of steps) {
    const run = spawnSync(cmd, args, { encoding: 'utf8', timeout: 180_000 });
    if (run.status !== 0) return { skip: `${cmd} ${args.join(' ')} failed: ${(run.stderr || run.error?.message || '').trim().split('\n').at(-1)}` };
  }
  return { python: join(venv, 'bin', 'python') };
}

describe('OTLP over HTTP, decoded by opentelemetry-proto', () => {
  const dir = mkdtempSync(join(tmpdir(), 'spend-sentinel-otlp-'));
  const setup = protoPython(dir);
  let receiver;
  let lines;
  before(async () => {
    if (setup.skip) return;
    receiver = spawn(setup.python, [new URL('./helpers/otlp_receiver.py', import.meta.url).pathname], { stdio: ['ignore', 'pipe', 'inherit'] });
    lines = createInterface({ input: receiver.stdout })[Symbol.asyncIterator]();
  });
  after(() => {
    receiver?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  test('every family arrives with its name, unit, description, kind and attributes; the histogram with the exposition\'s bounds', { skip: setup.skip }, async () => {
    const { value: first } = await withTimeout(lines.next(), 10_000, 'the receiver\'s port');
    const port = Number(/^port (\d+)$/.exec(first)[1]);
    const reader = new PeriodicExportingMetricReader({
      exporter: new OTLPMetricExporter({ url: `http://127.0.0.1:${port}/v1/metrics` }),
      exportIntervalMillis: 2_147_483_647,
    });
    const provider = new MeterProvider({ readers: [reader] });
    const { sentinel, heldCall, stop } = await readySentinel(provider.getMeter('otlp-test'));
    const release = sentinel.hold('otlp-test'); // so that spend_sentinel.holds has a series
    try {
      await reader.forceFlush();
      const { value: line } = await withTimeout(lines.next(), 10_000, 'the decoded request');
      const metrics = JSON.parse(line).resourceMetrics.flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
      const byName = new Map(metrics.map((m) => [m.name, m]));
      const families = new Map(sentinel.metricFamilies().map((f) => [f.name, f]));
      for (const spec of CATALOG.filter((s) => s.scope !== 'fleet')) {
        const m = byName.get(spec.otelName);
        assert.ok(m, `${spec.otelName} arrived`);
        assert.equal(m.unit, spec.otelUnit, `${spec.otelName} unit`);
        assert.equal(m.description, families.get(spec.name).help, `${spec.otelName} description`);
        const kind = { ObservableCounter: 'sum', ObservableUpDownCounter: 'sum', ObservableGauge: 'gauge', Histogram: 'histogram' }[spec.instrument];
        assert.ok(m[kind], `${spec.otelName} is a ${kind}`);
        if (kind === 'sum') assert.equal(m.sum.isMonotonic ?? false, spec.instrument === 'ObservableCounter', `${spec.otelName} monotonic`);
      }
      const attrs = (point) => Object.fromEntries((point.attributes ?? []).map((a) => [a.key, Object.values(a.value)[0]]));
      const admitted = byName.get('spend_sentinel.admitted_units').sum.dataPoints.map((p) => [attrs(p), p.asDouble]);
      assert.deepEqual(admitted.find(([a]) => a.status === 'ready'), [{ sentinel: 'billing', status: 'ready' }, 2.5]);
      const [duration] = byName.get('spend_sentinel.refresh.duration').histogram.dataPoints;
      assert.deepEqual(attrs(duration), { sentinel: 'billing' });
      assert.deepEqual(duration.explicitBounds, CATALOG.find((s) => s.instrument === 'Histogram').buckets);
      assert.equal(Number(duration.count), 1, 'one refresh answered');
      const calls = byName.get('spend_sentinel.breaker.calls').sum.dataPoints.map(attrs).filter((a) => a.name === 'otel-export');
      assert.deepEqual(calls.map((a) => a.result).sort(), ['failure', 'rejected', 'success', 'timeout'], 'breaker calls, without the sentinel attribute');
      assert.ok(calls.every((a) => !('sentinel' in a)));
    } finally {
      release();
      stop();
      await provider.shutdown();
      heldCall.release('valid');
    }
  });
});

const hasPromtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' }).status === 0;

test('@opentelemetry/exporter-prometheus output lints clean with promtool check metrics', { skip: hasPromtool ? false : 'promtool is not on PATH' }, async () => {
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ readers: [exporter] });
  const { heldCall, stop } = await readySentinel(provider.getMeter('prometheus-test'));
  const server = createServer((req, res) => exporter.getMetricsRequestHandler(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const text = await (await fetch(`http://127.0.0.1:${server.address().port}/metrics`)).text();
    assert.match(text, /^spend_sentinel_admitted_units_total\{[^}]*status="ready"[^}]*\} 2\.5$/m, text);
    assert.match(text, /^spend_sentinel_refresh_duration_bucket\{[^}]*le="0\.005"[^}]*\} \d+$/m);
    assert.match(text, /^spend_sentinel_refresh_duration_count\{sentinel="billing"[^}]*\} 1$/m, 'one refresh');
    const lint = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 30_000 });
    assert.equal(lint.status, 0, `${lint.stdout}${lint.stderr}`);
    assert.equal(`${lint.stdout}${lint.stderr}`.trim(), '', 'no lint findings');
  } finally {
    server.close();
    stop();
    await provider.shutdown();
    heldCall.release('valid');
  }
});
