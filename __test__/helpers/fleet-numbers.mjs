// The fleet the fleet suites share: b = 240, r = 50/s, maxNodes 3, reserve 0.25 → floor 20
// (window 0.4 s), pool 180; leaseSeconds 5, maxSplitSeconds 0 (one standalone Redis: no split
// brain to ride out, so a fresh fleet holds growth for 0 + 5 × 1.03 + 2 = 7.15 s; a lease is
// usable 5 × 0.97 − 1 = 3.85 s; renewals every ≈ 1.67 s). Refresh options are explicit (20–40 ms pauses, 250 ms timeout)
// so they fit the floor's window.
export const B = 240;
export const R = 50;
export const MAX_NODES = 3;
export const RESERVE = 0.25;
export const LEASE = 5;
export const MAX_SPLIT = 0;
export const FLOOR = (B * RESERVE) / MAX_NODES; // 20
export const POOL = B * (1 - RESERVE); // 180
export const REFRESH = Object.freeze({ minIntervalMs: 20, maxIntervalMs: 40, timeoutMs: 250 });
export const HOLD_MS = (MAX_SPLIT + LEASE * 1.03 + 2) * 1000; // a fresh or emptied fleet grows nothing before this
export const LEASE_VALID_MS = (LEASE * 0.97 - 1) * 1000; // 3850
/** fleet().leaseRemainingSeconds is the time left rounded up to the millisecond: a deadline read from it is up to this late. */
export const READOUT_MS = 1;
export const RENEW_MAX_MS = (LEASE / 3) * 1.1 * 1000; // 1833
export const MAX_WINDOW_MS = (B / R) * 1000; // 4800: no node budget exceeds b, so no window exceeds b / r
// How far two processes' epoch clocks (performance.timeOrigin + now()) may disagree: each process
// reads its origin once, at start. A margin between clocks, not for a slow machine.
export const CLOCKS_MS = 100;
