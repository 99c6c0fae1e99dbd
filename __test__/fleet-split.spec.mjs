// The fleet through a split brain (`budget.fleet.maxSplitSeconds`), with real processes and
// servers: node processes (helpers/fleet-nodes.mjs) on b = 240, r = 50/s, maxNodes 3, reserve 0.25
// (floor 20, pool 180: two nodes lease 90 each), leaseSeconds 5.
//
// The split: a primary P with one replica R whose link goes through a proxy. The link is
// partitioned (`partition`: nothing crosses it, not even a close, so P keeps listing R online and
// hears no acknowledgement), R is promoted (REPLICAOF NO ONE) and node B is routed to it, while
// node A stays on P. On R, B sees another server (a loss, held); once its hold is over, B's report
// ends A's lease in R's copy, a valid refresh settles the charge, and B grows to the whole pool.
// That growth is safe only if A's lease has lapsed by then, on a deadline A may have moved by
// renewing on P during the split: so the authority is cut (T) at the first growth after the split,
// with every ledger empty, and the units admitted after T by both nodes together are counted.
// (Cut before the split, the check would prove nothing: after T no charge settles, so no grant
// can grow; the risk is a lease ended, settled and lent again while its holder still spends it.)
//
// - With the fence the docs prescribe (`min-replicas-to-write 1`, `min-replicas-max-lag`
//   maxSplitSeconds − 2 on P), P refuses writes (NOREPLICAS, scripts included) once R's lag
//   passes the setting, while still listing R: A's renewals fail, A runs on its floor after its
//   deadline, and the total stays ≤ b.
// - Without the fence, A renews on P for as long as the split lasts (past maxSplitSeconds +
//   leaseSeconds): A keeps its grant while B spends the pool, and the total passes b (the negative
//   control: the same check fails on that run).
//
// Then the hold after a loss, with maxSplitSeconds 2: maxSplitSeconds + leaseSeconds × 1.03 + 2 s
// = 9.15 s on the node's clock from when it saw the loss, and until a valid refresh sent after.
//
// Every wait is for an event (a report, a refusal) or for a moment to pass (untilPast); none bounds
// how long something took. Times are epoch milliseconds in parent and children alike.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startReplicated, parseInfo } from './helpers/redis-topologies.mjs';
import { RedisReplyError } from './helpers/redis.mjs';
import { pollUntil, quietPeriod, untilPast } from './helpers/wait.mjs';
import { B, POOL, MAX_SPLIT, HOLD_MS, CLOCKS_MS } from './helpers/fleet-numbers.mjs';
import { afterEveryWindow, allLeased, cutWithEmptyLedgers, deadlineOf, epoch, fleetScope, fmt, grantNear } from './helpers/fleet-nodes.mjs';

/** The hold (ms) of a fleet with maxSplitSeconds `split`: split + leaseSeconds × 1.03 + 2 s. */
const holdMs = (split) => HOLD_MS + (split - MAX_SPLIT) * 1000;
const SPLIT = 4; // the split tests' maxSplitSeconds: a hold of 11.15 s
const LAG = SPLIT - 2; // min-replicas-max-lag, as docs/fleet.md prescribes
const LOSS_SPLIT = 2; // the loss tests' maxSplitSeconds: a hold of 9.15 s
// Generous guards against a hang, never bounds: a grant after a hold, a growth after a split.
const guard = (split) => holdMs(split) + 20000;
const fleetKey = (name) => `{spend-sentinel:${name}}`;
const grewPast = (grant) => (x) => x.mode === 'leased' && x.grantUnits > grant * 1.1;

/** Two nodes A and B on `split`, leased at an equal share. */
async function twoLeased(s, urls, split) {
  const nodes = urls.map((url) => s.node(url, { maxSplitSeconds: split }));
  await allLeased(nodes, guard(split));
  await Promise.all(nodes.map((n) => n.until((x) => grantNear(x, POOL / 2), 20000, `${n.label} near pool/2 = ${POOL / 2}`)));
  return nodes;
}

/**
 * When node `n` first showed growth held in a report at index `from` or later (a loss it saw after
 * `since`): it applied the answer after the read of report i − 1, so after reports[i − 2].t (and
 * after `since`, on another process's clock), and before reports[i].t. Its hold ends a hold after.
 */
function sawLoss(n, from, since) {
  const i = n.reports.findIndex((x, k) => k >= from && x.growthHeld);
  assert.ok(i >= 2, `${n.label} reported a loss before its first reports`);
  return { after: Math.max(n.reports[i - 2].t, since - CLOCKS_MS), by: n.reports[i].t };
}

// ---- the split ---------------------------------------------------------------------------------

const PROBE = "return redis.call('SET', KEYS[1], ARGV[1])";

/**
 * Writes to `server` with a script every 50 ms until one is refused; resolves with the refusal's
 * text, when it came (epoch ms), the last accepted write before it, and the replicas the server
 * listed (connected_slaves) and counted as good (min_slaves_good_slaves) at the refusal.
 */
async function firstRefusal(server) {
  let lastAcceptedAt = null;
  return pollUntil(
    async () => {
      const at = epoch();
      const [reply, info] = await server.commands([['EVAL', PROBE, '1', 'split-probe', String(at)], ['INFO', 'replication']]);
      if (!(reply instanceof RedisReplyError)) {
        lastAcceptedAt = at;
        return null;
      }
      const fields = parseInfo(info);
      return { at, error: reply.message, lastAcceptedAt, listed: Number(fields.connected_slaves), good: Number(fields.min_slaves_good_slaves) };
    },
    { ms: 30000, everyMs: 50, label: `the old primary to refuse a write (min-replicas-max-lag ${LAG})` },
  );
}

/**
 * The split, up to T and the count: answers the units after T, the nodes' reports, the split's
 * start, B's growth, and (fenced) P's first refusal.
 */
async function splitScenario(t, { fence }) {
  const s = fleetScope(t);
  const topology = await startReplicated({ replicas: 1 });
  s.defer(() => topology.stop());
  const primary = topology.primary;
  const replica = topology.replicas[0];
  if (fence) await primary.command('CONFIG', 'SET', 'min-replicas-to-write', '1', 'min-replicas-max-lag', String(LAG));
  const [toA, toB] = [await s.proxy(primary.port), await s.proxy(primary.port)];
  const [a, b] = await twoLeased(s, [toA.url(primary.url), toB.url(primary.url)], SPLIT);

  const fromB = b.reports.length;
  topology.links[0].setMode('partition');
  const partitionedAt = epoch();
  await replica.command('REPLICAOF', 'NO', 'ONE');
  const promotedAt = epoch();
  toB.retarget(replica.port); // B's connections are closed: it reconnects to the promoted copy
  const refusal = fence ? firstRefusal(primary) : null;
  refusal?.catch(() => {}); // awaited below; a hang fails there

  // B's first growth after the split (A's lease ended in R's copy and its charge settled), a hold
  // at least after B saw the loss on R
  await b.until((x) => x.t > promotedAt && x.growthHeld, 15000, 'B to see the promoted copy as a loss');
  const seen = sawLoss(b, fromB, promotedAt);
  await b.until((x) => x.t > promotedAt && grewPast(POOL / 2)(x), guard(SPLIT), 'B to grow on the promoted copy');
  const grewAt = b.reports.find((x) => x.t > promotedAt && grewPast(POOL / 2)(x)).t;
  assert.ok(grewAt > seen.after + holdMs(SPLIT), `B grew ${(grewAt - seen.after).toFixed(0)} ms after it saw the loss, within the hold of ${holdMs(SPLIT)} ms`);
  const T = await cutWithEmptyLedgers(s, [a, b]);
  await afterEveryWindow([a, b], T);
  const per = [a, b].map((n) => n.unitsBetween(T));
  const stillPrimary = await primary.commands([['EVAL', PROBE, '1', 'split-probe', 'end']]);
  return { a, b, T, per, total: per[0] + per[1], promotedAt, partitionedAt, grewAt, refusal: await refusal, stillAccepting: !(stillPrimary[0] instanceof RedisReplyError) };
}

/** The last lease deadline A's reports show (a lower bound, deadlineOf) and the report it came from. */
function lastDeadline(reports) {
  const i = reports.findLastIndex((x) => x.mode === 'leased');
  return { low: deadlineOf(reports, i).low, report: reports[i] };
}

describe('the fleet through a split brain and after a loss', { concurrency: true }, () => {
  test(`a split under the documented fence (min-replicas-max-lag ${LAG}, maxSplitSeconds ${SPLIT}): the old primary refuses writes while listing its replica, A's lease lapses before B grows, units after T ≤ b`, async (t) => {
    const { a, b, T, per, total, promotedAt, partitionedAt, grewAt, refusal } = await splitScenario(t, { fence: true });
    const detail = `A=${per[0]} B=${per[1]}`;
    assert.ok(total <= B, `units after T: ${total} > b = ${B} (${detail})`);
    assert.ok(total >= B / 2, `only ${total} units after T: the scenario did not exercise the ceiling (${detail})`);
    const deadline = lastDeadline(a.reports);
    assert.ok(deadline.low < grewAt + CLOCKS_MS, `A's lease deadline ${(deadline.low - grewAt).toFixed(0)} ms after B grew on the promoted copy (A last leased: ${fmt(deadline.report)})`);

    // The fence held: P refused a scripted write with NOREPLICAS while it still listed R (the
    // replica's lag passed the setting; nothing told P of the partition or the promotion), and
    // A's renewals there were refused from then on.
    assert.match(refusal.error, /NOREPLICAS/, `the old primary's refusal: ${refusal.error}`);
    assert.equal(refusal.listed, 1, 'the old primary still listed its replica when it refused (a partition, not a disconnect)');
    assert.equal(refusal.good, 0, 'no replica counted as good');
    const refused = await a.until((x) => x.t > refusal.at + CLOCKS_MS && x.redisError !== null, 15000, 'A to report its renewals refused');
    t.diagnostic(
      `units after T: ${total} of b = ${B} (${detail}); the old primary's first refusal ${(refusal.at - partitionedAt).toFixed(0)} ms after the partition ` +
        `(last accepted write ${refusal.lastAcceptedAt === null ? 'none' : `${(refusal.lastAcceptedAt - promotedAt).toFixed(0)} ms`} after the promotion), ` +
        `A's renewals refused (redisError ${refused.redisError}), A's lease deadline ${(deadline.low - promotedAt).toFixed(0)} ms and B's growth ` +
        `${(grewAt - promotedAt).toFixed(0)} ms after the promotion, T ${(T - promotedAt).toFixed(0)} ms after it; B's grant then ${b.latest.grantUnits}`,
    );
  });

  test(`negative control: the same split without the fence, A renewing on the old primary throughout (past maxSplitSeconds + leaseSeconds): units after T > b`, async (t) => {
    const { a, T, per, total, promotedAt, grewAt, stillAccepting } = await splitScenario(t, { fence: false });
    assert.ok(stillAccepting, 'the old primary took writes to the end');
    const atGrowth = a.reports.find((x) => x.t > grewAt + CLOCKS_MS);
    assert.equal(atGrowth?.mode, 'leased', `A was not leased when B grew: the split did not overlap (${fmt(atGrowth)})`);
    assert.ok(total > B, `units after T: ${total} ≤ b = ${B} without the fence (A=${per[0]} B=${per[1]}): the control shows nothing`);
    t.diagnostic(`units after T: ${total} of b = ${B} (A=${per[0]} B=${per[1]}); B grew ${(grewAt - promotedAt).toFixed(0)} ms after the promotion, T ${(T - promotedAt).toFixed(0)} ms after it`);
  });

  // ---- the hold after a loss -------------------------------------------------------------------

  /**
   * A and B lease; the authority is cut (so no charge settles and A cannot grow from B's lease),
   * B is killed, and `loss` strikes: A is the one node left to see it. Answers A, its grant
   * before, and when it saw the loss (sawLoss).
   */
  async function survivorOfLoss(t, loss) {
    const s = fleetScope(t);
    const redis = await s.redis();
    const [a, b] = await twoLeased(s, [redis.url, redis.url], LOSS_SPLIT);
    s.cut();
    await b.kill9();
    const before = a.latest.grantUnits;
    const from = a.reports.length;
    const lostAt = epoch();
    await loss(redis, s.name);
    await a.until((x) => x.t > lostAt && x.growthHeld, 15000, 'A to see the loss (growth held)');
    const seen = sawLoss(a, from, lostAt);
    return { s, a, before, seenAfter: seen.after, seenBy: seen.by };
  }

  test(`the key deleted (maxSplitSeconds ${LOSS_SPLIT}): no grant grows for maxSplitSeconds + leaseSeconds × 1.03 + 2 s after the node saw the loss`, async (t) => {
    const { s, a, before, seenAfter } = await survivorOfLoss(t, (redis, name) => redis.command('DEL', fleetKey(name)));
    s.restore(); // valid refreshes again at once: the hold alone stands between A and the pool
    const grown = await a.until(grewPast(before), guard(LOSS_SPLIT), `A to grow past ${before} once its hold ended`);
    const first = a.reports.find((x) => x.t > seenAfter && grewPast(before)(x));
    assert.ok(first.t > seenAfter + holdMs(LOSS_SPLIT), `A grew ${(first.t - seenAfter).toFixed(0)} ms after it saw the loss, within the hold of ${holdMs(LOSS_SPLIT)} ms (${fmt(first)})`);
    t.diagnostic(`A grew from ${before} to ${grown.grantUnits} ${(first.t - seenAfter).toFixed(0)} ms after it saw the loss (hold ${holdMs(LOSS_SPLIT)} ms)`);
  });

  test(`Redis restarted empty (maxSplitSeconds ${LOSS_SPLIT}): past the hold, no grant grows until a valid refresh sent after it`, async (t) => {
    const { s, a, before, seenAfter, seenBy } = await survivorOfLoss(t, async (redis) => {
      await redis.kill9();
      await redis.restart();
    });
    // A's hold began before it reported growth held: it is over once that report is a hold old.
    await untilPast(seenBy + holdMs(LOSS_SPLIT) + CLOCKS_MS, epoch);
    await quietPeriod(1000); // absence: with no valid refresh, the end of the hold grows nothing
    const U = s.restore();
    const early = a.reports.find((x) => x.t > seenAfter && x.t < U - CLOCKS_MS && x.grantUnits > before + 1e-6);
    assert.equal(early, undefined, `A grew past its hold with no valid refresh sent after it: ${fmt(early)} (was ${before})`);
    await a.until(grewPast(before), 20000, `A to grow past ${before} after the authority came back`);
    const first = a.reports.find((x) => x.t > seenAfter && x.grantUnits > before + 1e-6);
    assert.ok(first.t > U - CLOCKS_MS, `A grew ${(U - first.t).toFixed(0)} ms before the authority came back (${fmt(first)})`);
    t.diagnostic(`A grew from ${before} to ${first.grantUnits} ${(first.t - U).toFixed(0)} ms after the authority came back, ${(first.t - seenAfter).toFixed(0)} ms after it saw the loss`);
  });
});
