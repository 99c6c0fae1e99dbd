// Fleet nodes as child processes (fixtures/fleet-node.mjs) for the multi-process fleet suites:
// each node's authority answers 'valid' until the test creates a cut file (every node sees it on
// its next inspect call, none before the moment T), and each node admits 1 unit at a time as fast
// as admitted, appending its counts to a file before admitting more, so a node killed with SIGKILL
// has reported every unit it admitted. Times are epoch milliseconds (performance.timeOrigin + now)
// in parent and children alike.
//
// `fleetScope(t)` gives per-test node processes, Redis servers, proxies and files, all stopped after
// the test whatever happened. The fleet's numbers default to helpers/fleet-numbers.mjs.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { stoppedBy } from './redis.mjs';
import { cleanups, deferred, pollUntil, untilPast, withTimeout } from './wait.mjs';
import { B, R, MAX_NODES, RESERVE, LEASE, MAX_SPLIT, REFRESH, HOLD_MS, LEASE_VALID_MS, MAX_WINDOW_MS, READOUT_MS } from './fleet-numbers.mjs';

const FIXTURE = fileURLToPath(new URL('../fixtures/fleet-node.mjs', import.meta.url));
export const GRANT_WAIT_MS = HOLD_MS + 10000;

export const epoch = () => performance.timeOrigin + performance.now();
export const fmt = (x) => (x ? `${x.mode}/${x.status}:${x.reason} grant=${x.grantUnits} lease=${x.leaseRemainingSeconds}` : 'no report');

/** Per-test processes, Redis, proxies and files; all stopped after the test whatever happened. */
export function fleetScope(t) {
  const defer = cleanups(t);
  const dir = mkdtempSync(join(tmpdir(), 'ss-fleet-'));
  defer(() => rmSync(dir, { recursive: true, force: true }));
  const cutFile = join(dir, 'cut');
  let count = 0;
  const name = `ss-procs:${process.pid}.${Math.random().toString(36).slice(2, 8)}`;
  return {
    dir,
    cutFile,
    name,
    defer,
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
    /** A node process on this scope's fleet; `over` replaces the default numbers (and adds `fleet` options). */
    node(redisUrl, over = {}) {
      count += 1;
      const n = startNode({
        redis: redisUrl, name, b: B, r: R, maxNodes: MAX_NODES, reserve: RESERVE, leaseSeconds: LEASE, maxSplitSeconds: MAX_SPLIT,
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
    /**
     * Resolves once the node has sent a report taken after `at` (epoch ms), or has exited. Its
     * counts up to `at` are then all written: it writes each batch before admitting more, and
     * reports from the same thread as it admits.
     */
    reportedPast(at, ms = 15000) {
      return pollUntil(() => !alive() || reports.at(-1)?.t > at, {
        ms,
        label: () => `${label} to report after ${at.toFixed(0)}; ${describeNode()}`,
      });
    },
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
    /** Graceful: close() in the child, which then exits 0; resolves with close()'s duration (ms, for a diagnostic only). */
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

export const allLeased = (nodes, ms = GRANT_WAIT_MS) =>
  Promise.all(nodes.map((n) => n.until((x) => x.mode === 'leased', ms, `${n.label} leased`)));

/**
 * Cuts the authority while every ledger is empty: admission paused, a valid refresh settled on
 * each node (ledger 0 reported after the pause), then T, then admission resumes. So after T each
 * node can admit its whole node budget, and the sum of those is what the ceiling bounds.
 */
export async function cutWithEmptyLedgers(s, nodes) {
  await Promise.all(nodes.map((n) => n.pauseAdmission()));
  const pausedAt = epoch();
  await Promise.all(nodes.map((n) => n.until((x) => x.t > pausedAt && x.ledger === 0 && x.status === 'ready', 15000, `${n.label} ledger 0 after pausing`)));
  const T = s.cut();
  for (const n of nodes) n.resumeAdmission();
  return T;
}

export const grantNear = (x, target) => x.mode === 'leased' && Math.abs(x.grantUnits - target) <= 0.1 * target;

/** Sum over nodes of the units admitted in [from, to); asserts ≤ b with a per-node breakdown. */
export function assertCeiling(nodes, from, to, what, b = B) {
  const per = nodes.map((n) => [n.label, n.unitsBetween(from, to)]);
  const total = per.reduce((s, [, u]) => s + u, 0);
  const detail = per.map(([l, u]) => `${l}=${u}`).join(' ');
  assert.ok(total <= b, `${what}: ${total} units admitted after the authority stopped (b = ${b}): ${detail}`);
  return { total, detail };
}

/**
 * Once no window can still be open (T + b / r, and 1 s for the processes' clocks and a refresh sent
 * just before T) and every live node has reported past that moment (so its counts are written): the
 * end of a ceiling scenario, whatever the machine's speed.
 */
export async function afterEveryWindow(nodes, T) {
  const end = T + MAX_WINDOW_MS + 1000;
  await untilPast(end, epoch);
  await Promise.all(nodes.map((n) => n.reportedPast(end)));
}

/**
 * Whether report `x` shows a renewal answered after `since` (epoch ms): growth held (a renewal
 * that saw the fleet's state lost), or a lease deadline only a renewal sent after `since` gives
 * (send time + LEASE_VALID_MS).
 */
export const renewedSince = (x, since) =>
  x.t > since && (x.growthHeld || (x.mode === 'leased' && x.t + x.leaseRemainingSeconds * 1000 > since + LEASE_VALID_MS));

/**
 * The lease deadline of `reports[i]` (a leased report), as bounds whatever the machine's speed:
 * the report read fleet() after the previous report's time and before its own, and its deadline
 * is that read's time + leaseRemainingSeconds (rounded up to the millisecond: READOUT_MS).
 */
export function deadlineOf(reports, i) {
  const x = reports[i];
  const lease = x.leaseRemainingSeconds * 1000;
  return { low: (i > 0 ? reports[i - 1].t : -Infinity) + lease - READOUT_MS, high: x.t + lease };
}

/**
 * The first report in (from, to) that is not leased although it was read before the deadline of
 * the last leased report before it (the node dropped its grant early); undefined if none.
 */
export function droppedBeforeDeadline(reports, from, to = Infinity) {
  let deadline = -Infinity;
  for (const [i, x] of reports.entries()) {
    if (x.mode === 'leased') deadline = deadlineOf(reports, i).low;
    else if (x.t > from && x.t < to && x.t < deadline) return { ...x, deadline };
  }
  return undefined;
}
