// What the demo saw, per node, in story time (seconds since the story started): every readiness
// observation (samples and transitions), the transitions themselves, and the unverified units
// sampled every 100 ms for the chart.
import { performance } from 'node:perf_hooks';

/** Story time: `t()` is seconds since `start()`; `t(stamp)` converts a performance.now() stamp. */
export function storyClock() {
  let origin = performance.now();
  return {
    start() {
      origin = performance.now();
    },
    t: (stamp = performance.now()) => (stamp - origin) / 1000,
    stamp: (seconds) => origin + seconds * 1000,
  };
}

export function createRecorder(names) {
  const nodes = new Map(names.map((name) => [name, { states: [], transitions: [], units: [] }]));
  const of = (name) => nodes.get(name);
  return {
    /** A readiness seen at `t` (a sample or a transition). */
    state(name, t, status, reason) {
      of(name).states.push({ t, status, reason });
    },
    transition(name, t, event) {
      of(name).transitions.push({ t, ...event });
      this.state(name, t, event.to, event.reason);
    },
    units(name, t, value) {
      of(name).units.push([t, value]);
    },
    transitions: (name) => of(name).transitions,
    unitSeries: (name) => of(name).units,
    /** Status bands: consecutive observations with the same status and reason, up to `end`. */
    segments(name, end) {
      const states = [...of(name).states].sort((a, b) => a.t - b.t);
      const segments = [];
      for (const s of states) {
        const last = segments.at(-1);
        if (last && last.status === s.status && last.reason === s.reason) continue;
        if (last) last.to = s.t;
        segments.push({ from: Math.max(0, s.t), to: end, status: s.status, reason: s.reason });
      }
      return segments.filter((s) => s.to > s.from);
    },
  };
}
