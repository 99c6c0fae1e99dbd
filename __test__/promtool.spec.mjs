// Prometheus's own tools on our output, when `promtool` is on PATH (Debian: `apt-get install
// prometheus`; .ci/run installs it with SPEND_SENTINEL_PROMTOOL=1): `promtool check metrics` lints
// the exposition, and `promtool test rules` runs a case for each alert of docs/metrics.md, on its
// YAML as written (so the documented alerts cannot drift from what is tested).
import { describe, test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import YAML from 'yaml';
import { fastOptions, held, scriptedAuthority, sentinelPool } from './helpers/wait.mjs';

const require = createRequire(import.meta.url);
const { Sentinel, CircuitBreaker } = require('spend-sentinel');

const hasPromtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' }).status === 0;
const skip = hasPromtool ? false : 'promtool is not on PATH';

const pool = sentinelPool(Sentinel);
afterEach(() => pool.closeAll());

function promtool(args, input) {
  const run = spawnSync('promtool', args, { input, encoding: 'utf8', timeout: 30_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** The YAML block under the "Alerts" heading of docs/metrics.md. */
function documentedRules() {
  const page = readFileSync(new URL('../docs/metrics.md', import.meta.url), 'utf8');
  const heading = page.indexOf('\n## Alerts that fire on sustained problems');
  assert.ok(heading >= 0, 'docs/metrics.md has the Alerts section');
  const block = /```yaml\n([\s\S]*?)```/.exec(page.slice(heading));
  assert.ok(block, 'a yaml block in the Alerts section');
  return block[1];
}

describe('promtool', { skip }, () => {
  test('check metrics: the exposition (a breaker and reservations included) lints clean', async () => {
    const sentinel = pool.make(fastOptions(scriptedAuthority((call) => held(call))));
    const breaker = new CircuitBreaker({ name: 'promtool-check' });
    await breaker.fire(async () => 'ok');
    sentinel.admit(1);
    sentinel.charge(2.5); // overage: no evidence is needed to record usage
    sentinel.hold('promtool:check');
    const { status, output } = promtool(['check', 'metrics'], sentinel.metrics());
    assert.equal(status, 0, output);
    assert.equal(output.trim(), '', 'no lint findings');
  });

  test('test rules: each documented alert fires on its problem and stays quiet on a blip', () => {
    const rules = documentedRules();
    const names = YAML.parse(rules).groups.flatMap((g) => g.rules.map((r) => r.alert));
    const dir = mkdtempSync(join(tmpdir(), 'spend-sentinel-promtool-'));
    try {
      writeFileSync(join(dir, 'rules.yml'), rules);
      const instance = { instance: 'node-1', job: 'billing' };
      const labels = (extra = {}) => `{${Object.entries({ ...instance, ...extra }).map(([k, v]) => `${k}="${v}"`).join(',')}}`;
      const cases = {
        SpendSentinelEvidenceAging: [
          {
            // Evidence ages 10 s a minute against w = 60 s: above 48 s from minute 5, for a minute.
            input_series: [
              { series: `spend_sentinel_evidence_age_seconds${labels()}`, values: '0+10x10' },
              { series: `spend_sentinel_stale_window_seconds${labels()}`, values: '60x10' },
            ],
            alert_rule_test: [
              { eval_time: '5m', alertname: 'SpendSentinelEvidenceAging', exp_alerts: [] },
              { eval_time: '7m', alertname: 'SpendSentinelEvidenceAging', exp_alerts: [{ exp_labels: instance }] },
            ],
          },
          {
            // One slow refresh: above 80% for one evaluation only.
            input_series: [
              { series: `spend_sentinel_evidence_age_seconds${labels()}`, values: '5 5 55 5 5 5' },
              { series: `spend_sentinel_stale_window_seconds${labels()}`, values: '60x5' },
            ],
            alert_rule_test: [{ eval_time: '4m', alertname: 'SpendSentinelEvidenceAging', exp_alerts: [] }],
          },
        ],
        SpendSentinelFlapping: [
          {
            // The series is there at 0 from the first scrape, so the first drop counts: 4 drops.
            input_series: [
              { series: `spend_sentinel_transitions_total${labels({ from: 'ready', to: 'not_ready', reason: 'evidence_too_old' })}`, values: '0 1 1 2 2' },
              { series: `spend_sentinel_transitions_total${labels({ from: 'degraded', to: 'not_ready', reason: 'evidence_too_old' })}`, values: '0 0 1 1 2' },
            ],
            alert_rule_test: [
              { eval_time: '3m', alertname: 'SpendSentinelFlapping', exp_alerts: [] },
              { eval_time: '4m', alertname: 'SpendSentinelFlapping', exp_alerts: [{ exp_labels: { instance: instance.instance } }] },
            ],
          },
        ],
        SpendSentinelDegradedSpend: [
          {
            // 20 units a minute on degraded evidence against a budget of 100: 200 per 10 minutes.
            input_series: [
              { series: `spend_sentinel_admitted_units_total${labels({ status: 'degraded' })}`, values: '0+20x20' },
              { series: `spend_sentinel_node_budget_units${labels()}`, values: '100x20' },
            ],
            alert_rule_test: [
              { eval_time: '4m', alertname: 'SpendSentinelDegradedSpend', exp_alerts: [] },
              { eval_time: '12m', alertname: 'SpendSentinelDegradedSpend', exp_alerts: [{ exp_labels: instance }] },
            ],
          },
          {
            // 2 units a minute: 20 per 10 minutes, under half the budget.
            input_series: [
              { series: `spend_sentinel_admitted_units_total${labels({ status: 'degraded' })}`, values: '0+2x20' },
              { series: `spend_sentinel_node_budget_units${labels()}`, values: '100x20' },
            ],
            alert_rule_test: [{ eval_time: '15m', alertname: 'SpendSentinelDegradedSpend', exp_alerts: [] }],
          },
        ],
        SpendSentinelRefusingUnits: [
          {
            // 10 of 100 units a minute refused (evidence too old): 10%.
            input_series: [
              { series: `spend_sentinel_refused_units_total${labels({ reason: 'evidence_too_old' })}`, values: '0+10x20' },
              { series: `spend_sentinel_refused_units_total${labels({ reason: 'shutting_down' })}`, values: '0x20' },
              { series: `spend_sentinel_admitted_units_total${labels({ status: 'ready' })}`, values: '0+90x20' },
              { series: `spend_sentinel_admitted_units_total${labels({ status: 'degraded' })}`, values: '0x20' },
            ],
            alert_rule_test: [{ eval_time: '10m', alertname: 'SpendSentinelRefusingUnits', exp_alerts: [{ exp_labels: { instance: instance.instance } }] }],
          },
          {
            // The same refusals while shutting down (a rollout): quiet.
            input_series: [
              { series: `spend_sentinel_refused_units_total${labels({ reason: 'evidence_too_old' })}`, values: '0x20' },
              { series: `spend_sentinel_refused_units_total${labels({ reason: 'shutting_down' })}`, values: '0+10x20' },
              { series: `spend_sentinel_admitted_units_total${labels({ status: 'ready' })}`, values: '0+90x20' },
            ],
            alert_rule_test: [{ eval_time: '10m', alertname: 'SpendSentinelRefusingUnits', exp_alerts: [] }],
          },
        ],
      };
      cases.SpendSentinelHeldLong = [
        {
          // One hold open from minute 0, another name released at once: the first fires after 15 minutes.
          input_series: [
            { series: `spend_sentinel_holds${labels({ name: 'model-backend' })}`, values: '1x25' },
            { series: `spend_sentinel_holds${labels({ name: 'cache' })}`, values: '1 0x24' },
          ],
          alert_rule_test: [
            { eval_time: '14m', alertname: 'SpendSentinelHeldLong', exp_alerts: [] },
            { eval_time: '16m', alertname: 'SpendSentinelHeldLong', exp_alerts: [{ exp_labels: { instance: instance.instance, name: 'model-backend' } }] },
          ],
        },
        {
          // Holds that come and go (a cache warmed at each deploy): quiet.
          input_series: [{ series: `spend_sentinel_holds${labels({ name: 'cache' })}`, values: '1 1 0 0 1 1 1 0 0 0 1 1 0 0 1 1 1 0 0 0 1 1 0 0 0' }],
          alert_rule_test: [{ eval_time: '24m', alertname: 'SpendSentinelHeldLong', exp_alerts: [] }],
        },
      ];
      assert.deepEqual(names.sort(), Object.keys(cases).sort(), 'a test case for each documented alert');
      const tests = Object.values(cases).flat().map((c) => ({ interval: '1m', ...c }));
      writeFileSync(join(dir, 'tests.yml'), YAML.stringify({ rule_files: ['rules.yml'], evaluation_interval: '1m', tests }));
      const check = promtool(['check', 'rules', join(dir, 'rules.yml')]);
      assert.equal(check.status, 0, check.output);
      const run = promtool(['test', 'rules', join(dir, 'tests.yml')]);
      assert.equal(run.status, 0, run.output);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
