// The fleet budget across processes: N node processes (helpers/fleet-nodes.mjs) on one fleet name
// and one real redis-server.
//
// Numbers: b = 240, r = 50/s, maxNodes 3, reserve 0.25 → floor 20 (window 0.4 s), pool 180;
// leaseSeconds 5 (fresh fleet hold 7.15 s; lease usable 3.85 s; renewal ≈ every 1.67 s). No node's
// window can exceed b / r = 4.8 s, so once the authority is cut at T, nothing can be admitted after
// T + 4.8 s: letting that moment pass (untilPast) and every node report past it, then reading the
// counts, is the end of an absence check, not a race.
// Times are epoch milliseconds (performance.timeOrigin + now) in parent and children alike.
//
// Nothing here bounds how long something took: the wait for an event has a generous bound that
// only ends a hang. Lease deadlines are read from each node's own reports (deadlineOf), so "kept
// its grant until its deadline" holds however late a renewal or a report was. Upper bounds on time
// are the code's rules, tested on fake time in Rust: a Redis call gives up after 1 s and close()
// is done 1 s after asking Redis (src/fleet/close_tests.rs).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pollUntil, untilPast } from './helpers/wait.mjs';
import { B, FLOOR, POOL, HOLD_MS, LEASE_VALID_MS, CLOCKS_MS } from './helpers/fleet-numbers.mjs';
import {
  afterEveryWindow,
  allLeased,
  assertCeiling,
  cutWithEmptyLedgers,
  deadlineOf,
  droppedBeforeDeadline,
  epoch,
  fleetScope as scope,
  fmt,
  grantNear,
} from './helpers/fleet-nodes.mjs';

// Generous: a joining node gets its share within two renewals of the others (about 4 s), a rule
// of the code; this bound only ends a hang.
const CONVERGE_MS = 30000;
// Redis's pause in (d): short, but a busy machine may stretch it past a lease's deadline, which
// the check allows (no node drops its grant before its own deadline).
const PAUSE_MS = 1500;

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
    await Promise.all(nodes.map((n) => n.until((x) => x.t > T && x.status !== 'ready', 15000, `${n.label} to leave ready after the cut`)));
    await nodes[0].kill9();
    const joiner = s.node(redis.url);
    nodes.push(joiner);
    await joiner.until((x) => x.mode !== 'connecting', 10000, 'the joiner to reach Redis');
    const closeMs = await nodes[1].close(); // resolves in the child, which then exits 0
    await afterEveryWindow(nodes, T);
    const { total, detail } = assertCeiling(nodes, T, Infinity, '(a)');
    assert.ok(total >= B / 2, `only ${total} units after T: the scenario did not exercise the ceiling (${detail})`);
    t.diagnostic(`(a) units after T: ${total} (${detail}); close() took ${closeMs} ms`);
  });

  test('(b) fair share: a third node gets pool/3 and the others give it up; after a close the two converge to pool/2', async (t) => {
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

  test('(c) Redis restarted empty: no grant grows for leaseSeconds × 1.03 + 2 s and until a valid refresh; exposure ≤ b', async (t) => {
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
    // Each survivor's hold began when Redis first answered it after the restart (growth held from
    // then on): restore the authority once every hold has run out, so that growth must wait for
    // the valid refresh too.
    const survivors = [nodes[0], nodes[1], joiner];
    const holds = await Promise.all(survivors.map((n) => n.until((x) => x.t > restartedAt && x.growthHeld, 15000, `${n.label} to see growth held after the restart`)));
    await untilPast(Math.max(...holds.map((x) => x.t)) + HOLD_MS, epoch);
    const U = s.restore();
    await allLeased(survivors, 30000);

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
    await untilPast(pausedAt + PAUSE_MS, epoch);
    redis.resume();
    const resumedAt = epoch();
    // However long the pause really lasted, no node drops its grant before its own deadline.
    await Promise.all(nodes.map((n) => n.reportedPast(resumedAt)));
    for (const n of nodes) {
      const dropped = droppedBeforeDeadline(n.reports, pausedAt, resumedAt);
      assert.equal(dropped, undefined, `${n.label} dropped its grant during the pause before its lease deadline: ${fmt(dropped)} (deadline ${dropped && (dropped.deadline - dropped.t).toFixed(0)} ms later)`);
    }
    // every node renews after the pause
    await Promise.all(
      nodes.map((n) => n.until((x) => x.mode === 'leased' && x.t + x.leaseRemainingSeconds * 1000 > resumedAt + LEASE_VALID_MS - 200, 15000, `${n.label} renewed after the pause`)),
    );

    const P = epoch();
    proxy.setMode('blackhole');
    await cutOff.until((x) => x.t > P && x.mode === 'floor', LEASE_VALID_MS + 15000, 'the partitioned node on its floor');
    // Its last renewal was answered before P (the blackhole drops every later answer): its
    // deadline is at most P + LEASE_VALID_MS, and it keeps its grant until then.
    const lastLeasedAt = cutOff.reports.findLastIndex((x) => x.mode === 'leased');
    const lastLeased = cutOff.reports[lastLeasedAt];
    const deadline = deadlineOf(cutOff.reports, lastLeasedAt);
    assert.ok(deadline.low <= P + LEASE_VALID_MS + CLOCKS_MS, `partitioned node's deadline ${(deadline.low - P).toFixed(0)} ms after the partition`);
    const early = droppedBeforeDeadline(cutOff.reports, P);
    assert.equal(early, undefined, `the partitioned node dropped its grant before its deadline: ${fmt(early)}`);
    const leasedLate = cutOff.reports.find((x) => x.t > P && x.mode === 'leased' && !(x.leaseRemainingSeconds > 0));
    assert.equal(leasedLate, undefined, `leased with no time left on the lease: ${fmt(leasedLate)}`);
    approx(cutOff.latest.nodeBudgetUnits, FLOOR, 'partitioned node budget');

    // the two others take over the pool, but only after the partitioned node's lease ran out
    const others = nodes.slice(0, 2);
    await pollUntil(() => others.every((n) => n.latest && grantNear(n.latest, POOL / 2)), {
      ms: 15000,
      label: () => `the others near ${POOL / 2}: ${others.map((n) => n.describe()).join('; ')}`,
    });
    const grewAt = Math.min(...others.map((n) => n.reports.find((x) => x.t > P && x.grantUnits > (POOL / 3) * 1.1).t));
    assert.ok(grewAt > deadline.low - CLOCKS_MS, `another node grew ${(deadline.low - grewAt).toFixed(0)} ms before the partitioned node's deadline (last leased: ${fmt(lastLeased)})`);

    const T = await cutWithEmptyLedgers(s, nodes);
    await afterEveryWindow(nodes, T);
    const { detail } = assertCeiling(nodes, T, Infinity, '(d) with a partitioned node');
    t.diagnostic(`(d) units after T: ${detail}`);
  });
});

function approx(actual, expected, what, eps = 1e-6) {
  assert.ok(Math.abs(actual - expected) <= eps * Math.max(1, Math.abs(expected)), `${what}: ${actual}, expected ${expected}`);
}
