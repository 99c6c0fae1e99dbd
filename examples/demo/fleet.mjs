// The fleet story:  npm run demo -- --fleet   (or: node examples/demo.mjs --fleet [--fast] [--out PATH] [--plan])
//
// This process runs the fake authority (./authority.mjs), its own redis-server (started with the
// test suites' helper, __test__/helpers/redis.mjs) and the load (./load.mjs: 20 POST /v1/usage a
// second into each node, over real HTTP, through admission()). Each node is a child process
// (./fleet-node.mjs: the demo's Express service with a sentinel on budget.fleet), so that the
// SIGKILL of the story is a real crash. Nodes report on stdout: every admitted unit (before they
// answer the request, so the count survives the kill), their state every 100 ms, their fleet
// mode and growth-held changes. Each phase (./plan.mjs) runs its action, then lasts at least its
// minimum length and until its event has come, judged on those reports every 50 ms (a phase
// still waiting 30 s after its start fails the demo, naming what it waited for); a sample then
// shows the event, and the next phase starts. Every 0.5 s one line shows each node's mode, grant
// and status. Redis runs with maxmemory-policy volatile-lru and no maxmemory: the fleet's key is
// the only key with a TTL, so the 'evicted' phase lowers maxmemory below the memory in use, which
// evicts exactly that key, and sets it back to 0 once evicted_keys has grown. At the end the
// units admitted after the authority was cut, over all nodes, are checked against b, and
// fleet-timeline.svg draws each node's grant and the fleet's units against b, with the phases as
// they ran.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { findRedisServer, startRedis } from '../../__test__/helpers/redis.mjs';
import { parseInfo } from '../../__test__/helpers/redis-topologies.mjs';
import { startAuthority } from './authority.mjs';
import { startLoad } from './load.mjs';
import { storyClock } from './record.mjs';
import { FLEET, fleetFloor, fleetPlan, fleetPool } from './plan.mjs';
import { evictionLines, fleetEndLine, fleetHeaderLines, fleetPhaseLine, fleetPlanLines, fleetSampleLine, fleetSummaryLines, heldLine, modeLine } from './report.mjs';
import { renderFleetTimeline } from './fleet-svg.mjs';

const CHILD = fileURLToPath(new URL('./fleet-node.mjs', import.meta.url));
const REDIS_ENV = 'SPEND_SENTINEL_DEMO_REDIS'; // budget.fleet.redisEnv: the URL stays out of argv and output
const SAMPLE_MS = 500;
const CHART_MS = 100;
const POLL_MS = 50; // how often a phase checks whether its event has come
const PHASE_TIMEOUT_MS = 30_000; // a phase whose event has not come by then (from its start) fails the demo
const EVICTION_POLICY = 'volatile-lru'; // evicts only keys with a TTL: the fleet's key is the only one
const EVICTION_MARGIN = 64 * 1024; // maxmemory = used_memory − this: still below the use if a client's buffers go
const EVICTION_POLL_MS = 20;
const EVICTION_TIMEOUT_MS = 10_000;
const LISTEN_TIMEOUT_MS = 10_000; // a node process that does not take requests by then fails the demo
const CLOSE_TIMEOUT_MS = 5_000; // close() resolves within 1 s of asking Redis; then SIGKILL

const FLEET_BUDGET = Object.freeze({
  unverifiedUnits: FLEET.b,
  maxUnitsPerSecond: FLEET.r,
  fleet: { redisEnv: REDIS_ENV, name: 'spend-sentinel-demo', maxNodes: FLEET.maxNodes, reserve: FLEET.reserve, leaseSeconds: FLEET.leaseSeconds, maxSplitSeconds: FLEET.maxSplitSeconds },
});

let printed = null; // the last line printed
const print = (lines) => {
  const text = [lines].flat().join('\n');
  console.log(text);
  printed = text.split('\n').at(-1);
};

/** Plays the fleet story; resolves with the exit code (0, or 1 when the ceiling broke or a step failed). */
export async function runFleetDemo({ fast = false, out, plan: planOnly = false } = {}) {
  const plan = fleetPlan({ fast });
  if (planOnly) {
    print(fleetPlanLines(plan));
    return 0;
  }
  if (!findRedisServer()) {
    console.error('the fleet demo needs redis-server on PATH (it starts its own, on a free port).');
    console.error('Debian/Ubuntu: apt-get install redis-server   (macOS: brew install redis)');
    return 1;
  }
  const svgPath = resolve(out ?? 'fleet-timeline.svg');
  const floor = fleetFloor();
  const pool = fleetPool();

  // Everything started is stopped in reverse order: at the end, on an error, and on Ctrl-C.
  const cleanups = [];
  let cleaning = null;
  const cleanup = () =>
    (cleaning ??= (async () => {
      while (cleanups.length) {
        try {
          await cleanups.pop()();
        } catch {
          // the rest still has to stop
        }
      }
    })());
  const nodes = new Map(); // name → node (see spawnNode)
  const killAll = () => {
    for (const node of nodes.values()) if (alive(node)) node.child.kill('SIGKILL');
  };
  process.on('exit', killAll); // the last resort: no node outlives the demo (Redis has its own hook)
  const onSignal = (signal) => {
    print(`\n${signal}: stopping the nodes, the authority and Redis`);
    cleanup().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const clock = storyClock();
  let failure = null; // the first thing that went wrong: ends the story
  const fail = (message) => (failure ??= message);
  let cutAt = null; // story seconds: from then on admitted units count as exposure…
  let restoredEpoch = Infinity; // …unless admitted on evidence sent after the authority came back
  const series = { unverified: [], exposure: [] };
  const phases = []; // as they ran: { name, start, end } in story seconds

  try {
    // No maxmemory yet, and a policy that evicts only keys with a TTL: the 'evicted' phase lowers
    // maxmemory below the memory in use, and the fleet's key, the only one with a TTL, goes.
    const redis = await startRedis({ args: ['--maxmemory', '0', '--maxmemory-policy', EVICTION_POLICY] });
    cleanups.push(() => redis.stop());
    const authority = await startAuthority();
    cleanups.push(() => authority.close());
    cleanups.push(() => Promise.all([...nodes.values()].map(stopNode)));

    print(fleetHeaderLines({ fleet: FLEET, floor, pool, plan }));

    const spawnNode = (name) => {
      const child = spawn(process.execPath, [CHILD, JSON.stringify({ name, authorityUrl: authority.urlFor(name), budget: FLEET_BUDGET })], {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...process.env, [REDIS_ENV]: redis.url },
      });
      // held: growth held as last reported (null before), heldAt: when it last became held;
      // lapsedAt: when its mode last went leased → floor (story seconds)
      const node = { name, child, url: null, latest: null, admitted: 0, afterCut: 0, grants: [], load: null, killedAt: null, closing: false, heldSeen: false, held: null, heldAt: null, lapsedAt: null, stderr: '' };
      nodes.set(name, node);
      node.exited = new Promise((done) => child.once('close', (code, signal) => done({ code, signal })));
      node.exited.then(({ code, signal }) => {
        if (!node.closing && node.killedAt === null) fail(`${name} exited on its own (code ${code}, signal ${signal}): ${node.stderr.trim().split('\n').slice(-3).join(' | ')}`);
      });
      child.stdin.on('error', () => {}); // a killed node's stdin
      child.stderr.setEncoding('utf8').on('data', (d) => (node.stderr = (node.stderr + d).slice(-4000)));
      const listening = new Promise((done) => {
        createInterface({ input: child.stdout }).on('line', (line) => {
          if (line.startsWith('a ')) {
            node.admitted += 1;
            // Exposure: a unit admitted after the cut on evidence sent before the authority came
            // back (no refresh sent after the cut was answered before that). "After the cut" is
            // judged on arrival, so a unit admitted just before it, still in the pipe, counts too.
            if (cutAt !== null && Number(line.slice(2)) < restoredEpoch) node.afterCut += 1;
          } else if (line.startsWith('s ')) {
            node.latest = JSON.parse(line.slice(2));
            node.grants.push([clock.t(), node.latest.grantUnits]);
          } else if (line.startsWith('m ')) {
            const { from, to, grant } = JSON.parse(line.slice(2));
            if (from === 'leased' && to === 'floor') node.lapsedAt = clock.t();
            if (from !== null) print(modeLine(clock.t(), name, from, to, grant));
          } else if (line.startsWith('h ')) {
            const { held } = JSON.parse(line.slice(2));
            node.held = held;
            if (held) node.heldAt = clock.t();
            // the first report (a fresh fleet is held) is the hold phase's own story
            if (node.heldSeen) print(heldLine(clock.t(), name, held));
            node.heldSeen = true;
          } else if (line.startsWith('listening ')) {
            done(JSON.parse(line.slice(10)));
          }
        });
      });
      const timer = setTimeout(() => fail(`${name} did not take requests within ${LISTEN_TIMEOUT_MS} ms: ${node.stderr.trim().slice(-200)}`), LISTEN_TIMEOUT_MS);
      listening.then(({ url }) => {
        clearTimeout(timer);
        node.url = url;
        if (node.killedAt === null && !node.closing) node.load = startLoad(url, FLEET.r);
      });
      node.exited.then(() => clearTimeout(timer));
    };

    const killNode = async (name) => {
      const node = nodes.get(name);
      node.killedAt = clock.t();
      node.child.kill('SIGKILL');
      await node.exited; // its stdout is drained: every unit it reported is counted
      await node.load?.stop(); // requests in flight to it fail (connection reset)
      print(`           ${name} (pid ${node.child.pid}) killed with SIGKILL at ${node.killedAt.toFixed(2)}s; it admitted ${node.afterCut} units after the cut`);
    };

    const fleetKey = `{spend-sentinel:${FLEET_BUDGET.fleet.name}}`;
    let pausedAt = null; // story seconds: Redis was paused (SIGSTOP)
    let evictedAt = null; // story seconds: maxmemory was lowered

    // Lowers maxmemory below the memory in use; Redis evicts at once (CONFIG SET runs an eviction,
    // and so does every command after it) and, with volatile-lru, only keys with a TTL: the
    // fleet's key. Waits until evicted_keys has grown (not for the key to be gone: a node may
    // have written the state anew by then), and sets maxmemory back to 0 at once, so that no
    // write stays refused.
    const evictFleetKey = async () => {
      const info = async (...sections) => parseInfo(await redis.command('INFO', ...sections));
      const { db0 = '' } = await info('keyspace');
      const pttl = await redis.command('PTTL', fleetKey);
      if (!/(^|,)expires=1(,|$)/.test(db0) || !(pttl > 0)) {
        throw new Error(`evicted: the fleet's key must be the only key with a TTL (db0: ${db0 || 'no keys'}; PTTL ${fleetKey}: ${pttl})`);
      }
      const before = Number((await info('stats')).evicted_keys);
      const started = performance.now();
      let limit = null;
      let used = null;
      evictedAt = clock.t();
      try {
        for (;;) {
          const now = await info('stats', 'memory');
          if (Number(now.evicted_keys) > before) return { used, evicted: Number(now.evicted_keys) - before, ms: Math.round(performance.now() - started) };
          if (performance.now() - started > EVICTION_TIMEOUT_MS) {
            throw new Error(`evicted: evicted_keys still ${now.evicted_keys} ${EVICTION_TIMEOUT_MS} ms after maxmemory was lowered to ${limit} (used_memory ${now.used_memory}, policy ${EVICTION_POLICY})`);
          }
          // (again) below what is in use now: a client's buffers freed since may have left it above
          if (limit === null || Number(now.used_memory) <= limit) {
            used = Number(now.used_memory);
            limit = Math.max(1, used - EVICTION_MARGIN);
            await redis.command('CONFIG', 'SET', 'maxmemory', String(limit));
            continue; // the CONFIG SET evicted, or the next command does
          }
          await sleep(EVICTION_POLL_MS);
        }
      } finally {
        await redis.command('CONFIG', 'SET', 'maxmemory', '0'); // no more evictions: the nodes write the state anew
      }
    };

    const ACTIONS = {
      hold: () => FLEET.names.slice(0, FLEET.first).forEach(spawnNode),
      'scale-up': () => FLEET.names.slice(FLEET.first).forEach(spawnNode),
      cut: () => {
        cutAt = clock.t(); // before the authority goes silent: nothing admitted after it is missed
        authority.setMode('silent');
      },
      kill: () => killNode(FLEET.victim),
      evicted: async () => {
        const { used, evicted, ms } = await evictFleetKey();
        print(evictionLines({ policy: EVICTION_POLICY, usedKb: Math.round(used / 1024), evicted, ms }));
      },
      'redis-paused': () => {
        pausedAt = clock.t(); // before the SIGSTOP: every lapse after it counts
        redis.pause();
      },
      'redis-back': () => redis.resume(),
      restore: () => {
        restoredEpoch = performance.timeOrigin + performance.now(); // before it answers again
        authority.setMode('answering');
      },
    };

    const running = () => [...nodes.values()].filter((n) => n.killedAt === null);
    const live = () => running().filter((n) => n.latest);
    const exposure = () => [...nodes.values()].reduce((sum, n) => sum + n.afterCut, 0);
    // leased, its grant within `tolerance` (a fraction) of pool / n
    const leasedWith = (n, tolerance) => (node) =>
      node?.latest?.mode === 'leased' && Math.abs(node.latest.grantUnits - pool / n) <= tolerance * (pool / n) + 1e-9;
    // What each phase waits for (its text: plan.mjs), judged on the reports the samples show.
    const UNTIL = {
      hold: () => FLEET.names.slice(0, FLEET.first).every((name) => leasedWith(FLEET.first, 0)(nodes.get(name))),
      'scale-up': () => FLEET.names.every((name) => leasedWith(FLEET.names.length, FLEET.shareTolerance)(nodes.get(name))),
      cut: () => nodes.get(FLEET.victim).afterCut >= FLEET.cutUnits,
      kill: () => true, // the action waited for the exit
      evicted: () => running().every((n) => n.held === true && n.heldAt >= evictedAt),
      'redis-paused': () => running().every((n) => n.latest?.mode === 'floor' && n.lapsedAt !== null && n.lapsedAt >= pausedAt),
      'redis-back': () => true,
      restore: () => running().every((n) => n.latest?.status === 'ready' && n.held === false && leasedWith(running().length, FLEET.shareTolerance)(n)),
    };

    const chart = setInterval(() => {
      const t = clock.t();
      series.unverified.push([t, live().reduce((sum, n) => sum + n.latest.unverified, 0)]);
      if (cutAt !== null) series.exposure.push([t, exposure()]);
    }, CHART_MS);
    cleanups.push(() => clearInterval(chart));

    const sample = ({ unlessShown = false } = {}) => {
      const cells = FLEET.names.map((name) => {
        const n = nodes.get(name);
        if (!n) return { mode: null };
        if (n.killedAt !== null) return { mode: 'killed' };
        if (!n.latest) return { mode: 'connecting', grant: 0, status: 'starting' };
        return { mode: n.latest.mode, grant: n.latest.grantUnits, status: n.latest.status };
      });
      const line = fleetSampleLine(clock.t(), cells, live().reduce((sum, n) => sum + n.latest.unverified, 0));
      if (!(unlessShown && line === printed)) print(line); // the same line just printed shows it already
    };
    const states = () =>
      [...nodes.values()]
        .map((n) => {
          if (n.killedAt !== null) return `${n.name} killed`;
          if (!n.latest) return `${n.name} starting`;
          return `${n.name} ${n.latest.mode} ${n.latest.grantUnits} ${n.latest.status}${n.held ? ' growth-held' : ''}`;
        })
        .join('; ');

    clock.start();
    const sampler = setInterval(() => sample(), SAMPLE_MS); // beside the phases' own samples
    cleanups.push(() => clearInterval(sampler));
    for (const phase of plan) {
      const start = clock.t();
      phases.push({ name: phase.name, start, end: null });
      print(fleetPhaseLine(start, phase));
      await ACTIONS[phase.name]();
      if (cutAt !== null && phase.name !== 'cut') print(`           exposure so far: ${exposure()} units after the cut (b = ${FLEET.b})`);
      // at least its length, and until its event (judged last, so the sample below shows it)
      while (!failure && !(clock.t() >= start + phase.min && UNTIL[phase.name]())) {
        if (clock.t() - start > PHASE_TIMEOUT_MS / 1000) {
          fail(`phase '${phase.name}' still waits, ${PHASE_TIMEOUT_MS / 1000} s after its start, for: ${phase.until ?? 'its length'}; nodes: ${states()}`);
          break;
        }
        await sleep(POLL_MS);
      }
      if (failure) break;
      sample({ unlessShown: true });
      phases.at(-1).end = clock.t();
    }
    clearInterval(sampler);
    if (failure) throw new Error(failure);

    // The end: load first (so nothing is refused by a closing node), then each node closes its
    // sentinel (the unused grant goes back to the pool) and exits.
    await Promise.all([...nodes.values()].map((n) => n.load?.stop()));
    await Promise.all([...nodes.values()].map(stopNode));
    print(fleetEndLine(clock.t()));
    await cleanup();

    const spent = exposure();
    // the phases as they ran: their lengths are minimums, each also waited for its event
    writeFileSync(svgPath, renderFleetTimeline({ total: phases.at(-1).end, plan: phases, b: FLEET.b, pool, floor, nodes: [...nodes.values()].map((n) => ({ name: n.name, grants: n.grants, killedAt: n.killedAt })), series }));
    print(fleetSummaryLines({
      nodes: [...nodes.values()].map((n) => ({
        name: n.name,
        admitted: n.admitted,
        afterCut: n.afterCut,
        counts: n.load?.counts ?? { refused: 0, reasons: {} },
        peakGrant: Math.max(0, ...n.grants.map(([, g]) => g)),
        end: n.killedAt !== null ? `killed (SIGKILL) at ${n.killedAt.toFixed(2)}s` : 'closed (grant released)',
      })),
      exposure: spent,
      b: FLEET.b,
      floor,
      pool,
      maxNodes: FLEET.maxNodes,
      svgPath,
    }));
    return spent <= FLEET.b ? 0 : 1;
  } catch (err) {
    console.error(`fleet demo failed: ${err.message}`);
    return 1;
  } finally {
    await cleanup();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

function alive(node) {
  return node.child.exitCode === null && node.child.signalCode === null;
}

/** Asks a node to close (its sentinel releases the grant), waits for it to exit; SIGKILL if it does not. */
async function stopNode(node) {
  await node.load?.stop();
  if (!alive(node)) return;
  node.closing = true;
  node.child.stdin.end('close\n');
  const timer = setTimeout(() => node.child.kill('SIGKILL'), CLOSE_TIMEOUT_MS);
  await node.exited;
  clearTimeout(timer);
}

function sleep(ms) {
  return new Promise((done) => setTimeout(done, ms));
}
