// The story the demo plays: six phases, each setting what the fake authority does.
// Every start is a multiple of 0.5 s, so a phase begins exactly on a sample tick.
//
// Why these lengths (seed window w = 5 s, refreshes every 1.5–2.5 s, each bounded by 2 s):
// - silent must outlast w with room to spare: the last answered refresh was sent up to 2.5 s
//   before the silence, so the cutoff comes 2.5–5 s into it; the fast story keeps 6.5 s.
// - back, revoked and restored each take effect at the node's next refresh, at most 2.5 s in
//   (the authority resets the connections it held when it comes back, so no refresh is left
//   waiting on its 2 s timeout); the fast story gives each 3–3.5 s.
// - healthy lasts at least one refresh interval, so the silence follows a refresh in the story.
// - restored: its valid answer (at most 2.5 s in) empties node-a's ledger (its plain requests
//   stopped) and leaves it ready, so streams starts on an empty ledger and a ready node.
// - streams (silent again) needs no cutoff to show: at 3 r the answers fill the budget ~1.5 s
//   in, before the evidence can be w old (2.5 s at the soonest); 4.5 s show that and what follows.

const AUTHORITY_SAYS = {
  healthy: ['answering', 'the authority answers every refresh: both nodes are ready'],
  silent: ['silent', 'the authority stops answering (accepts, never replies): refreshes time out after 2 s → degraded; at evidence age 5 s → not_ready'],
  back: ['answering', 'the authority is back (it resets the connections it held): ready again at each node’s next refresh'],
  revoked: ['revoked', 'the credential is revoked (401): not_ready, invalid_credential, at each node’s next refresh'],
  restored: ['answering', 'the credential is restored: ready again at each node’s next refresh; node-a’s plain requests stop (it streams next), so that answer empties its ledger'],
  streams: ['silent', 'the authority is silent again; node-a now serves streamed answers of random length, each through a reservation (reserve the prompt and first chunk; record each chunk once sent and extend one chunk ahead; settle with the provider’s count); node-b keeps its plain requests'],
};

const LENGTHS = {
  default: { healthy: 6, silent: 12, back: 6, revoked: 6, restored: 6, streams: 4.5 }, // 40.5 s
  fast: { healthy: 2.5, silent: 6.5, back: 3.5, revoked: 3, restored: 3, streams: 4.5 }, // 23 s
};

/** `[{ name, start, end, authority, note }]` in story order, times in seconds. */
export function storyPlan({ fast = false } = {}) {
  let start = 0;
  return Object.entries(LENGTHS[fast ? 'fast' : 'default']).map(([name, seconds]) => {
    const [authority, note] = AUTHORITY_SAYS[name];
    const phase = { name, start, end: start + seconds, authority, note };
    start = phase.end;
    return phase;
  });
}

export const storyLength = (plan) => plan.at(-1).end;

// ---- The fleet story (`--fleet`) ----------------------------------------------------------------
//
// One fleet of up to 5 node processes on the demo's own redis-server: b = 300, r = 20/s per node,
// maxNodes 6, reserve 0.25, leaseSeconds 5, no maxStaleSeconds (a node wants all it can get).
// → floor = b × reserve / maxNodes = 12.5 units, pool = b × (1 − reserve) = 225 units.
//
// Each phase lasts at least its length (FLEET_LENGTHS: pacing for a reader) and until what it
// shows has happened (its `until`: the demo polls the node states it collects and ends the phase
// with a sample that shows it). A phase whose event has not come 30 s after its start fails the
// demo, naming the phase and what it waited for. So a slow machine makes the story longer, never
// squeezes one phase's effect into the next.
//
// What each phase waits for, and why it comes:
// - hold: a fresh fleet grows no grant for leaseSeconds × 1.03 + 2 = 7.15 s after the first node
//   reached Redis, and then not before a valid refresh has settled it and the next renewal (every
//   leaseSeconds / 3 ≈ 1.7 s, ±10 %) asked: grants of pool / 2 come 7–9 s in. Waits for both.
// - scale-up: a joining node reaches its fair share within two renewals of the others (≤ 3.7 s),
//   after ~0.5 s to start its process. Waits until all 5 grants are within 5 % of pool / 5.
// - cut: at the cut a node's evidence is at most about w / 2 old (w = 57.5 / 20 = 2.875 s, refreshes
//   every 0.3–0.5 w) and its ledger holds only the units admitted since, so the victim goes on
//   admitting (20 a second) for more than a second. Waits until it has admitted 10 after the cut:
//   they count when it is killed.
// - kill: the SIGKILL, then the node's exit (its stdout drained: every unit it reported counted).
// - evicted: Redis runs with maxmemory-policy volatile-lru and no maxmemory. The fleet's key is the
//   only key with a TTL on that server (the scripts give the state one, of at least an hour, when
//   they create it; the demo checks it), so when the demo lowers maxmemory below the memory in
//   use, Redis must evict that key and can evict nothing else; maxmemory goes back to 0 as soon as
//   evicted_keys has grown. Within one renewal (≤ 1.8 s) every live node has seen the state lost:
//   waits for each one's growth held.
// - redis-paused: a lease's local life is leaseSeconds × 0.97 − 1 s ≈ 3.85 s after the renewal
//   that got it, so every lease lapses 2–4 s into the pause. Waits until every live node has gone
//   from leased to its floor.
// - redis-back: its length only: the renewals answered again, no grant growing.
// - restore: the first valid refresh clears each ledger and settles the charges (the killed
//   node's lease included, once expired); once the hold is over (growth allowed), the next
//   renewals share the pool among the 4 live nodes. Waits until every live node is ready, its
//   growth allowed, and leases pool / 4 (within 5 %).
export const FLEET = Object.freeze({
  b: 300,
  r: 20,
  maxNodes: 6,
  reserve: 0.25,
  leaseSeconds: 5,
  // One standalone Redis: no replica to promote, so no split brain to ride out (its holds and
  // sweeps are leaseSeconds × 1.03 + 2 s, not 12 s longer).
  maxSplitSeconds: 0,
  names: Object.freeze(['node-1', 'node-2', 'node-3', 'node-4', 'node-5']),
  first: 2, // nodes started by the hold phase; the rest join at scale-up
  victim: 'node-4',
  cutUnits: 10, // the victim's units after the cut that the cut phase waits for
  shareTolerance: 0.05, // scale-up and restore wait for grants this close to the fair share
});
export const fleetFloor = ({ b, reserve, maxNodes } = FLEET) => (b * reserve) / maxNodes;
export const fleetPool = ({ b, reserve } = FLEET) => b * (1 - reserve);

const f = FLEET;
const nb = (s) => s.replaceAll(' ', '\u00a0'); // kept on one line when a note wraps
const tolerance = nb(`± ${f.shareTolerance * 100} %`);
// name: [what the authority does, what happens (the phase's note), what the phase waits for]
const FLEET_PHASES = {
  hold: [
    'answering',
    `${f.names.slice(0, f.first).join(' and ')} start on a fresh fleet: growth is held for leaseSeconds × 1.03 + 2 = ${f.leaseSeconds * 1.03 + 2} s and until a valid refresh settles it, so both run on their floors (${fleetFloor()} units each); then each leases ${nb(`pool / ${f.first} = ${fleetPool() / f.first}`)}`,
    `${f.names.slice(0, f.first).join(' and ')} leased, grant ${nb(`pool / ${f.first} = ${fleetPool() / f.first}`)}`,
  ],
  'scale-up': [
    'answering',
    `${f.names.slice(f.first).join(', ')} join on their floors; within two renewals every grant is ${nb(`pool / ${f.names.length} = ${fleetPool() / f.names.length}`)} units`,
    `all ${f.names.length} nodes leased, grant ${nb(`pool / ${f.names.length} = ${fleetPool() / f.names.length}`)} (${tolerance})`,
  ],
  cut: [
    'silent',
    `the authority stops answering: each node admits until its floor + grant (${fleetFloor() + fleetPool() / f.names.length} units) is spent or its evidence is w old`,
    `${f.victim} has admitted ${f.cutUnits} units after the cut`,
  ],
  kill: [
    'silent',
    `${f.victim} is killed with SIGKILL: its lease is not released, and stays charged (its grant may all be spent) after it expires`,
    `${f.victim} has exited`,
  ],
  evicted: [
    'silent',
    "Redis (volatile-lru) gets a maxmemory below the memory in use: the fleet's key, the only key with a TTL, is evicted (its whole state), then maxmemory is 0 again. Each live node sees the loss at its next renewal and keeps at most what it holds; no grant grows (growth held) until leaseSeconds × 1.03 + 2 s have passed and a valid refresh settles the fleet",
    'every live node reports growth held (it saw the loss)',
  ],
  'redis-paused': [
    'silent',
    'Redis is paused (SIGSTOP): no renewal is answered, each lease lapses at its local deadline and its node runs on its floor',
    "every live node's lease has lapsed (leased → floor)",
  ],
  'redis-back': [
    'silent',
    'Redis resumes (SIGCONT): renewals are answered again; leases that expired stay charged, so no grant grows before a valid refresh',
    null, // its length only
  ],
  restore: [
    'answering',
    `the authority answers again: valid refreshes clear the ledgers and settle the charges; the ${f.names.length - 1} live nodes share the pool (${fleetPool() / (f.names.length - 1)} each)`,
    `every live node ready, growth allowed, leased, grant ${nb(`pool / ${f.names.length - 1} = ${fleetPool() / (f.names.length - 1)}`)} (${tolerance})`,
  ],
};

// Minimum lengths, seconds: each phase also waits for its event (above).
const FLEET_LENGTHS = {
  default: { hold: 10, 'scale-up': 6, cut: 2, kill: 2, evicted: 3, 'redis-paused': 3, 'redis-back': 3, restore: 6 }, // ≥ 35 s
  fast: { hold: 8, 'scale-up': 4, cut: 1.5, kill: 1.5, evicted: 2, 'redis-paused': 2, 'redis-back': 1.5, restore: 3 }, // ≥ 23.5 s
};

/** The fleet story: `[{ name, min, authority, note, until }]` in story order; `min` in seconds, `until` a text or null. */
export function fleetPlan({ fast = false } = {}) {
  return Object.entries(FLEET_LENGTHS[fast ? 'fast' : 'default']).map(([name, min]) => {
    const [authority, note, until] = FLEET_PHASES[name];
    return { name, min, authority, note, until };
  });
}

/** The story's shortest length: the sum of the minimum lengths, seconds. */
export const fleetMinLength = (plan) => plan.reduce((sum, p) => sum + p.min, 0);
