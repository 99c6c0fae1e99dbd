// The fleet budget across processes: N node processes (fixtures/fleet-node.mjs) on one fleet name
// and one real redis-server. Each node's authority answers 'valid' until the parent creates a cut
// file (every node sees it on its next inspect call, none before the moment T), and each node
// admits 1 unit at a time as fast as admitted, appending its counts to a file before admitting
// more, so a node killed with SIGKILL has reported every unit it admitted.
//
// Numbers: b = 240, r = 50/s, maxNodes 3, reserve 0.25 → floor 20 (window 0.4 s), pool 180;
// leaseSeconds 5 (fresh fleet hold 7 s; lease usable 3.995 s; renewal ≈ every 1.67 s). No node's
// window can exceed b / r = 4.8 s, so once the authority is cut at T, nothing can be admitted after
// T + 4.8 s: waiting that long (then reading the counts) is the end of an absence check, not a race.
// Times are epoch milliseconds (performance.timeOrigin + now) in parent and children alike.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { stoppedBy } from './helpers/redis.mjs';
import { cleanups, deferred, pollUntil, quietPeriod, withTimeout } from './helpers/wait.mjs';
import { B, R, MAX_NODES, RESERVE, LEASE, FLOOR, POOL, REFRESH, HOLD_MS, LEASE_VALID_MS, RENEW_MAX_MS } from './helpers/fleet-numbers.mjs';

const FIXTURE = fileURLToPath(new URL('./fixtures/fleet-node.mjs', import.meta.url));
const MAX_WINDOW_MS = (B / R) * 1000; // 4800: no node budget exceeds b
const GRANT_WAIT_MS = HOLD_MS + 10000;
const CONVERGE_MS = 3 * RENEW_MAX_MS + 1500; // two renewals of the others, one of the node itself, slack

const epoch = () => performance.timeOrigin + performance.now();
const fmt = (x) => (x ? `${x.mode}/${x.status}:${x.reason} grant=${x.grantUnits} lease=${x.leaseRemainingSeconds}` : 'no report');

/** Per-test processes, Redis, proxies and files; all stopped after the test whatever happened. */
function scope(t) {
  const defer = cleanups(t);
  const dir = mkdtempSync(join(tmpdir(), 'ss-fleet-'));
  defer(() => rmSync(dir, { recursive: true, force: true }));
  const cutFile = join(dir, 'cut');
  let count = 0;
  const name = `ss-procs:${process.pid}.${Math.random().toString(36).slice(2, 8)}`;
  return {
    dir,
    cutFile,
    ...stoppedBy(defer),
    /** Creates the cut file; returns T (epoch ms, taken just before). */
    cut() {
      const at = epoch();
      writeFileSync(cutFile, 'cut');
      return at;
    },
    /** Deletes the cut file; returns the moment (epoch ms, taken just after). */
    restore() {
      unlinkSync(cutFile);
      return epoch();
    },
    node(redisUrl, over = {}) {
      count += 1;
      const n = startNode({
        redis: redisUrl, name, b: B, r: R, maxNodes: MAX_NODES, reserve: RESERVE, leaseSeconds: LEASE,
        refresh: REFRESH, cutFile, countFile: join(dir, `counts-${count}`), ...over,
      }, `node${count}`);
      defer(() => n.kill9());
      return n;
    },
  };
}

function startNode(cfg, label) {
  const child = spawn(process.execPath, [FIXTURE, JSON.stringify(cfg)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const reports = [];
  const events = [];
  const closed = deferred();
  const exited = deferred();
  const pausedAck = deferred();
  let stderr = '';
  let buffered = '';
  child.stdin.on('error', () => {});
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr = (stderr + d).slice(0, 4000)));
  child.stdout.setEncoding('utf8').on('data', (d) => {
    const lines = (buffered + d).split('\n');
    buffered = lines.pop();
    for (const line of lines) {
      if (line.startsWith('s ')) reports.push(JSON.parse(line.slice(2)));
      else if (line.startsWith('e ')) events.push(JSON.parse(line.slice(2)));
      else if (line.startsWith('closed ')) closed.resolve(Number(line.slice(7)));
      else if (line === 'paused') pausedAck.resolve();
    }
  });
  child.once('exit', (code, signal) => exited.resolve({ code, signal }));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const errorLine = () => {
    const lines = stderr.split('\n');
    return (lines.find((l) => /^\w*Error\b.*:/.test(l.trim())) ?? lines.find((l) => /error/i.test(l)) ?? stderr).trim().slice(0, 160);
  };
  const describeNode = () => `${label}: ${fmt(reports.at(-1))}${alive() ? '' : ' (exited)'}${stderr ? `; stderr: ${errorLine()}` : ''}`;
  return {
    label,
    reports,
    events,
    exited: exited.promise,
    get latest() {
      return reports.at(-1);
    },
    describe: describeNode,
    /** Polls until `predicate(latest report)` holds; resolves with that report. */
    until(predicate, ms, what) {
      return pollUntil(() => {
        if (reports.length && predicate(reports.at(-1))) return reports.at(-1);
        if (!alive()) throw new Error(`${label} exited while waiting for ${what}; ${describeNode()}`);
        return null;
      }, {
        ms,
        label: () => `${what}; ${describeNode()}`,
      });
    },
    /** Stops admitting; resolves once the child confirmed. */
    async pauseAdmission() {
      child.stdin.write('pause\n');
      await withTimeout(pausedAck.promise, 5000, () => `${label} to pause admission; ${describeNode()}`);
    },
    resumeAdmission() {
      child.stdin.write('resume\n');
    },
    /** SIGKILL; resolves once the process is gone. */
    async kill9() {
      if (alive()) child.kill('SIGKILL');
      await withTimeout(exited.promise, 5000, `${label} to exit`);
    },
    /** Graceful: close() in the child, which then exits 0; resolves with close()'s duration (ms). */
    async close() {
      child.stdin.write('close\n');
      const ms = await withTimeout(closed.promise, 5000, () => `${label} to close; ${describeNode()}`);
      const how = await withTimeout(exited.promise, 5000, `${label} to exit after close`);
      assert.equal(how.code, 0, `${label} exit after close: ${JSON.stringify(how)}`);
      return ms;
    },
    /** Units admitted at or after `from` (epoch ms) and before `to`, from the durable count file. */
    unitsBetween(from, to = Infinity) {
      let text = '';
      try {
        text = readFileSync(cfg.countFile, 'utf8');
      } catch {
        return 0; // never admitted anything
      }
      let sum = 0;
      for (const line of text.split('\n')) {
        if (!line) continue;
        const [n, at] = line.split(' ').map(Number);
        if (at >= from && at < to) sum += n;
      }
      return sum;
    },
  };
}

const allLeased = (nodes, ms = GRANT_WAIT_MS) =>
  Promise.all(nodes.map((n) => n.until((x) => x.mode === 'leased', ms, `${n.label} leased`)));

/**
 * Cuts the authority while every ledger is empty: admission paused, a valid refresh settled on
 * each node (ledger 0 reported after the pause), then T, then admission resumes. So after T each
 * node can admit its whole node budget, and the sum of those is what the ceiling bounds.
 */
async function cutWithEmptyLedgers(s, nodes) {
  await Promise.all(nodes.map((n) => n.pauseAdmission()));
  const pausedAt = epoch();
  await Promise.all(nodes.map((n) => n.until((x) => x.t > pausedAt && x.ledger === 0 && x.status === 'ready', 5000, `${n.label} ledger 0 after pausing`)));
  const T = s.cut();
  for (const n of nodes) n.resumeAdmission();
  return T;
}

const grantNear = (x, target) => x.mode === 'leased' && Math.abs(x.grantUnits - target) <= 0.1 * target;

/** Sum over nodes of the units admitted in [from, to); asserts ≤ b with a per-node breakdown. */
function assertCeiling(nodes, from, to, what) {
  const per = nodes.map((n) => [n.label, n.unitsBetween(from, to)]);
  const total = per.reduce((s, [, u]) => s + u, 0);
  const detail = per.map(([l, u]) => `${l}=${u}`).join(' ');
  assert.ok(total <= B, `${what}: ${total} units admitted after the authority stopped (b = ${B}): ${detail}`);
  return { total, detail };
}

// Two scenarios at a time, not four: all four at once (a dozen node processes admitting and
// refreshing every 20-40 ms) starved demo-fleet.spec's story, which runs beside this suite in a full
// run, when the machine was already busy.
describe('fleet across processes', { concurrency: 2 }, () => {
  test('(a) ceiling: authority cut at T, then kill -9, a join and a graceful leave: units after T ≤ b', async (t) => {
    const s = scope(t);
    const redis = await s.redis();
    const nodes = [s.node(redis.url), s.node(redis.url), s.node(redis.url)];
    await allLeased(nodes);
    const T = await cutWithEmptyLedgers(s, nodes);
    // every node saw the cut (its refreshes are now indeterminate) before the fleet changes
    await Promise.all(nodes.map((n) => n.until((x) => x.t > T && x.status !== 'ready', 5000, `${n.label} to leave ready after the cut`)));
    await nodes[0].kill9();
    const joiner = s.node(redis.url);
    nodes.push(joiner);
    await joiner.until((x) => x.mode !== 'connecting', 10000, 'the joiner to reach Redis');
    const closeMs = await nodes[1].close();
    assert.ok(closeMs <= 1300, `close() took ${closeMs} ms`);
    await quietPeriod(T + MAX_WINDOW_MS + 1000 - epoch()); // no window outlives this
    const { total, detail } = assertCeiling(nodes, T, Infinity, '(a)');
    assert.ok(total >= B / 2, `only ${total} units after T: the scenario did not exercise the ceiling (${detail})`);
    t.diagnostic(`(a) units after T: ${total} (${detail})`);
  });

  test('(b) fair share: a third node reaches pool/3 within two renewals; after a close the two converge to pool/2', async (t) => {
    const s = scope(t);
    const redis = await s.redis();
    const nodes = [s.node(redis.url), s.node(redis.url)];
    await allLeased(nodes);
    await Promise.all(nodes.map((n) => n.until((x) => grantNear(x, POOL / 2), CONVERGE_MS, `${n.label} near pool/2 = ${POOL / 2}`)));
    const joiner = s.node(redis.url);
    nodes.push(joiner);
    await joiner.until((x) => x.mode !== 'connecting', 10000, 'the joiner to reach Redis');
    const joinedAt = epoch();
    await pollUntil(() => nodes.every((n) => n.latest && grantNear(n.latest, POOL / 3)), {
      ms: CONVERGE_MS,
      label: () => `all three grants within ±10% of ${POOL / 3}: ${nodes.map((n) => n.describe()).join('; ')}`,
    });
    t.diagnostic(`(b) three-way share after ${(epoch() - joinedAt).toFixed(0)} ms`);
    await nodes[0].close();
    const closedAt = epoch();
    const rest = nodes.slice(1);
    await pollUntil(() => rest.every((n) => n.latest && grantNear(n.latest, POOL / 2)), {
      ms: CONVERGE_MS,
      label: () => `both grants within ±10% of ${POOL / 2}: ${rest.map((n) => n.describe()).join('; ')}`,
    });
    t.diagnostic(`(b) two-way share ${(epoch() - closedAt).toFixed(0)} ms after the close`);
    for (const n of rest) assert.equal(n.latest.liveNodes, 2, `${n.label} liveNodes`);
  });

  test('(c) Redis restarted empty: no grant grows for leaseSeconds + 2 s and until a valid refresh; exposure ≤ b', async (t) => {
    // "Nodes keep at most what they held": a node alive across the restart may renew its grant at
    // most at its old size (the sum stays within what Redis had reserved before the loss); a node
    // that starts after the restart gets nothing until the hold is over and a valid refresh sent
    // after it has settled the fleet (the charges of crashed nodes were lost with the state).
    const s = scope(t);
    const redis = await s.redis();
    const nodes = [s.node(redis.url), s.node(redis.url), s.node(redis.url)];
    await allLeased(nodes);
    const T = await cutWithEmptyLedgers(s, nodes);
    await nodes[2].kill9(); // its grant is lost with Redis's state, uncharged
    const killedAt = epoch();
    await redis.kill9();
    await redis.restart();
    const restartedAt = epoch();
    const joiner = s.node(redis.url);
    await joiner.until((x) => x.mode === 'floor', 10000, `${joiner.label} answered by the empty Redis`);
    // restore the authority after the 7 s hold, so that growth must wait for the valid refresh too
    await quietPeriod(killedAt + HOLD_MS + 500 - epoch());
    const U = s.restore();
    const survivors = [nodes[0], nodes[1], joiner];
    await allLeased(survivors, 15000);

    assertCeiling([...nodes, joiner], T, U, '(c) between the cut and the restore');
    for (const n of nodes.slice(0, 2)) {
      const before = n.reports.filter((x) => x.t <= killedAt && x.t > killedAt - 2000);
      const grantBefore = Math.max(0, ...before.map((x) => x.grantUnits));
      const grew = n.reports.find((x) => x.t > restartedAt && x.t < U && x.grantUnits > grantBefore + 1e-6);
      assert.equal(grew, undefined, `${n.label}: grant grew after the restart before the hold ended: ${fmt(grew)} (was ${grantBefore})`);
    }
    const early = joiner.reports.find((x) => x.grantUnits > 0 && (x.t < U || x.t < killedAt + HOLD_MS));
    assert.equal(early, undefined, `${joiner.label}: a grant before the hold ended and a valid refresh settled: ${fmt(early)}`);
  });

  test('(d) Redis paused then resumed, one node partitioned (blackhole): floor after its deadline; exposure ≤ b', async (t) => {
    const s = scope(t);
    const redis = await s.redis();
    const proxy = await s.proxy(redis.port);
    const nodes = [s.node(redis.url), s.node(redis.url), s.node(proxy.url(redis.url))];
    const [, , cutOff] = nodes;
    await allLeased(nodes);

    const pausedAt = epoch();
    redis.pause();
    await quietPeriod(1500); // shorter than any lease's remaining time (≥ 3.995 − 1.833 s)
    redis.resume();
    const resumedAt = epoch();
    for (const n of nodes) {
      const dropped = n.reports.find((x) => x.t > pausedAt && x.t < resumedAt && x.mode !== 'leased');
      assert.equal(dropped, undefined, `${n.label} lost its grant during a 1.5 s pause: ${fmt(dropped)}`);
    }
    // every node renews after the pause
    await Promise.all(
      nodes.map((n) => n.until((x) => x.mode === 'leased' && x.t + x.leaseRemainingSeconds * 1000 > resumedAt + LEASE_VALID_MS - 200, 8000, `${n.label} renewed after the pause`)),
    );

    const P = epoch();
    proxy.setMode('blackhole');
    await cutOff.until((x) => x.mode === 'floor', LEASE_VALID_MS + 3000, 'the partitioned node on its floor');
    const lastLeased = cutOff.reports.filter((x) => x.mode === 'leased').at(-1);
    const deadline = lastLeased.t + lastLeased.leaseRemainingSeconds * 1000;
    const floorAt = cutOff.reports.find((x) => x.t > P && x.mode === 'floor').t;
    assert.ok(deadline <= P + LEASE_VALID_MS + 100, `partitioned node's deadline ${(deadline - P).toFixed(0)} ms after the partition`);
    assert.ok(floorAt <= deadline + 500, `floor ${(floorAt - deadline).toFixed(0)} ms after its deadline`);
    const early = cutOff.reports.find((x) => x.t > P && x.t < P + LEASE_VALID_MS - RENEW_MAX_MS - 200 && x.mode !== 'leased');
    assert.equal(early, undefined, `the partitioned node dropped its grant before its deadline: ${fmt(early)}`);
    approx(cutOff.latest.nodeBudgetUnits, FLOOR, 'partitioned node budget');

    // the two others take over the pool, but only after the partitioned node's lease ran out
    const others = nodes.slice(0, 2);
    await pollUntil(() => others.every((n) => n.latest && grantNear(n.latest, POOL / 2)), {
      ms: 15000,
      label: () => `the others near ${POOL / 2}: ${others.map((n) => n.describe()).join('; ')}`,
    });
    const grewAt = Math.min(...others.map((n) => n.reports.find((x) => x.t > P && x.grantUnits > (POOL / 3) * 1.1).t));
    assert.ok(grewAt > lastLeased.t, 'another node grew while the partitioned node still held its grant');

    const T = await cutWithEmptyLedgers(s, nodes);
    await quietPeriod(T + MAX_WINDOW_MS + 1000 - epoch());
    const { detail } = assertCeiling(nodes, T, Infinity, '(d) with a partitioned node');
    t.diagnostic(`(d) units after T: ${detail}`);
  });
});

function approx(actual, expected, what, eps = 1e-6) {
  assert.ok(Math.abs(actual - expected) <= eps * Math.max(1, Math.abs(expected)), `${what}: ${actual}, expected ${expected}`);
}
