// The demo's printed lines. Regular on purpose: __test__/demo.spec.mjs parses them. Every line
// is at most 100 columns (longer texts wrap, continuation lines indented):
//   == <t>s  <phase>: <what the authority does>          a phase starts (t: 2 decimals)
//        t <node> status / reason …  age  units │ <node> …   the column header, once
//   <t>s <status> <reason> <age> <units>/<budget> │ <status> …   a sample every 0.5 s, one cell
//                                                       per node, in the header's order
//            ↳ <node>  <from> → <to> (<reason>)  at <t>s, evidence age <age>s   a transition
//            ↳ <node>  #<n> cut short at <t>s (<reason>): recorded <r>, billed <b>, overage <o>
const CELL = { status: 9, reason: 21, age: 5 }; // reason: refresh_indeterminate is the longest

const secs = (t, digits = 1) => `${t.toFixed(digits)}s`;
const age = (seconds) => (seconds === null ? '—' : secs(seconds));
const span = (p) => `${p.name} ${p.start}–${p.end} s`;

/** `items` joined by `sep`, wrapped between items (never inside one) at `width` columns. */
function wrapItems(items, { first = '', rest = '  ', sep = ' · ', width = WIDTH } = {}) {
  const lines = [];
  let line = first;
  for (const item of items) {
    const fresh = line === first || line === rest;
    if (!fresh && line.length + sep.length + item.length > width) {
      lines.push(`${line}${sep.trimEnd()}`);
      line = rest + item;
    } else line += (fresh ? '' : sep) + item;
  }
  lines.push(line);
  return lines;
}

export function planLines(plan) {
  const total = plan.at(-1).end;
  return [
    ...wrapItems(plan.map(span), { first: `story (${total.toFixed(1)} s): `, rest: '    ' }),
    ...plan.flatMap((p) => wrap(p.note, { first: `  ${p.name.padEnd(8)} `, rest: ' '.repeat(11) })),
  ];
}

export function headerLines({ budget, nodeBudget, windowSeconds, names, perSecond, plan }) {
  const share = `1/${budget.nodes}`;
  const w = windowSeconds;
  const cell = (name) => `${`${name} status / reason`.padEnd(CELL.status + 1 + CELL.reason)} ${'age'.padStart(CELL.age)}   units`;
  return [
    `spend-sentinel demo: a fake account authority and two Express services in one process`,
    `  ${names.join(', ')}: budget { unverifiedUnits: ${budget.unverifiedUnits}, maxUnitsPerSecond: ${budget.maxUnitsPerSecond}, nodes: ${budget.nodes} }`,
    `  node budget = b × share = ${budget.unverifiedUnits} × ${share} = ${nodeBudget} units`,
    `  stale window w = node budget / r = ${nodeBudget} / ${budget.maxUnitsPerSecond} = ${w} s`,
    `  refreshes every ${(0.3 * w).toFixed(1)}–${(0.5 * w).toFixed(1)} s, each bounded by ${Math.min(2, 0.4 * w)} s (the defaults for w = ${w} s)`,
    ...wrap(
      `load: ${perSecond} POST /v1/usage per second into each node through admission(): its whole ${nodeBudget} units in exactly w, so a node whose evidence stops being renewed is cut off at age ${w} s (or a few ms earlier, when its budget fills first)`,
      { first: '  ', rest: '  ' },
    ),
    ...planLines(plan),
    '',
    `${'t'.padStart(6)} ${names.map(cell).join(' │ ')}`,
  ];
}

export const phaseLine = (t, phase) => wrap(`${phase.name}: ${phase.note}`, { first: `== ${secs(t, 2)}  `, rest: ' '.repeat(11) });

export const endLine = (t) => `== ${secs(t, 2)}  end of the story: load stopped; sentinels, services and the authority closed`;

/** `samples`: [{ name, status, reason, evidenceAge, units, budget }], in the header's node order. */
export function sampleLine(t, total, samples) {
  const cell = (s) =>
    `${s.status.padEnd(CELL.status)} ${s.reason.padEnd(CELL.reason)} ${age(s.evidenceAge).padStart(CELL.age)} ${String(s.units).padStart(3)}/${s.budget}`;
  return `${secs(t).padStart(6)} ${samples.map(cell).join(' │ ')}`;
}

export const transitionLine = (t, name, e) =>
  `         ↳ ${name}  ${e.from} → ${e.to} (${e.reason})  at ${secs(t, 2)}, evidence age ${e.evidenceAgeSeconds === null ? '—' : secs(e.evidenceAgeSeconds, 2)}`;

/**
 * A streamed answer cut short (its extend refused): what it recorded as produced, what the
 * provider billed, and the overage: the billed units beyond what it recorded and still held.
 * (It holds nothing then, its last chunk recorded and the next refused, so held is left out: the
 * line stays within 100 columns.)
 */
export const cutLine = (name, c) =>
  `         ↳ ${name}  #${c.id} cut short at ${secs(c.t, 2)} (${c.reason}): recorded ${c.recorded}, billed ${c.actual}, overage ${c.actual - c.recorded - c.held}`;

const countsText = (counts) => Object.entries(counts).map(([key, count]) => `${key} ${count}`).join(', ') || 'none';

/**
 * The streams phase in figures: `streamed` is what startStreams().stop() returned; `counters` the
 * sentinel's own { refunded, overage, reserved } after it; `budget` the node budget.
 */
export function streamsLines({ name, budget, streamed, counters }) {
  const { tally, series, startExposure, endExposure } = streamed;
  const indent = ' '.repeat(10);
  const peakOf = (key) => series.reduce((max, s) => (s[key] > max[key] ? s : max));
  const [peak, held, recorded] = [peakOf('exposure'), peakOf('held'), peakOf('recorded')];
  const over = series.filter((s) => s.exposure > budget + s.overage).length;
  return [
    `  ${name}  ${tally.answers} answers streamed: completed ${tally.completed}, cut short ${tally.cut}, refused ${tally.refused}, open at the end ${tally.ended}`,
    `${indent}cut short: ${countsText(tally.cutReasons)}`,
    `${indent}refused at reserve: ${countsText(tally.refusedReasons)}`,
    `${indent}units admitted ${tally.admitted} (reserve + extend), refunded ${tally.refunded}, overage ${tally.overage}: recorded ${tally.recorded}`,
    `${indent}recorded as produced (record) ${tally.byRecord}, beyond it at the close (settle) ${tally.atSettle}`,
    `${indent}held by open reservations: peak ${held.held} at ${secs(held.t, 2)}; recorded: peak ${recorded.recorded} at ${secs(recorded.t, 2)}`,
    `${indent}exposure ${startExposure} at the start, ${endExposure} at the end (the authority silent: nothing cleared)`,
    over === 0
      ? `${indent}exposure ≤ node budget + overage so far at all ${series.length} readings; max ${peak.exposure}/${budget} at ${secs(peak.t, 2)}`
      : `${indent}exposure > node budget + overage so far at ${over} of ${series.length} readings: the ceiling was broken`,
    `${indent}the sentinel's counters: refunded ${counters.refunded}, overage ${counters.overage}, reserved ${counters.reserved}`,
  ];
}

/**
 * `nodes`: [{ name, counts, maxUnverified, budget, cutoff: { afterSilence, afterLastValid, lastValidAt } | null }];
 * `extra`: more lines before the SVG's path (the streams phase's).
 */
export function summaryLines(nodes, svgPath, extra = []) {
  const lines = ['summary'];
  for (const n of nodes) {
    const reasons = Object.entries(n.counts.reasons).map(([reason, count]) => `${reason} ${count}`);
    const failed = n.counts.failed ? `  failed ${n.counts.failed}` : '';
    lines.push(`  ${n.name}  admitted ${n.counts.admitted}  refused ${n.counts.refused}${failed}  max unverified ${n.maxUnverified}/${n.budget}`);
    if (reasons.length) lines.push(...wrapItems(reasons, { first: '          refused: ', rest: ' '.repeat(19), sep: ', ' }));
    lines.push(
      n.cutoff
        ? `          not_ready ${n.cutoff.afterSilence.toFixed(2)} s into the silence, ${n.cutoff.afterLastValid.toFixed(2)} s after ${n.name}'s last answered refresh (${secs(n.cutoff.lastValidAt, 2)})`
        : '          never went not_ready after the authority went silent',
    );
  }
  lines.push(...extra, `timeline: ${svgPath}`);
  return lines;
}

// ---- The fleet story (`--fleet`) ----------------------------------------------------------------
// Every line ≤ 100 columns (longer texts wrap, continuation lines indented):
//   == <t>s  <phase>: <what happens>                      a phase starts (t: 2 decimals)
//   <t> │ <mode> <grant> <status> │ … │ <Σ>                 a sample every 0.5 s, and one when a phase's
//                                                         event has come (its last); one cell per node:
//        mode C connecting, F floor, L leased, ✕ killed, · not started; grant in units;
//        status ready / degraded / not_ready; Σ = unverified units of the live nodes
//        ↳ <node>  <from> → <to>  at <t>s, grant <g>          a node's fleet mode changed
//   exposure after the cut: <X> units ≤ b = <b>             the final check (or "> b …: broken")
const WIDTH = 100;
const MODE_MARK = { connecting: 'C', floor: 'F', leased: 'L' };

/** Splits `text` into lines of at most `width` columns: `first` before the first, `rest` before the others. */
export function wrap(text, { first = '', rest = '  ', width = WIDTH } = {}) {
  const lines = [];
  let line = first;
  for (const word of text.split(' ')) {
    const prefix = lines.length ? rest : first;
    if (line.length > prefix.length && line.length + 1 + word.length > width) {
      lines.push(line);
      line = rest + word;
    } else line += (line.length > prefix.length ? ' ' : '') + word;
  }
  lines.push(line);
  return lines;
}

const grantText = (g) => (g === null || g === undefined ? '—' : Number.isInteger(g) ? String(g) : g.toFixed(1));

/** `plan`: [{ name, min, note, until }] (see plan.mjs fleetPlan): minimum lengths, and what each phase waits for. */
export function fleetPlanLines(plan) {
  const total = plan.reduce((sum, p) => sum + p.min, 0);
  const rest = ' '.repeat(15);
  return [
    ...wrapItems(plan.map((p) => `${p.name} ≥ ${p.min} s`), { first: `fleet story (at least ${total.toFixed(1)} s): `, rest: '    ', width: WIDTH - 2 }), // room for the ' ·'
    '  (each phase: at least its length, and until its event below; then a sample shows it)',
    ...plan.flatMap((p) => [
      ...wrap(p.note, { first: `  ${p.name.padEnd(12)} `, rest }),
      ...wrap(p.until ? `waits for: ${p.until}` : 'waits for: its length only', { first: rest, rest: `${rest}  ` }),
    ]),
  ];
}

export function fleetHeaderLines({ fleet, floor, pool, plan }) {
  const n = fleet.names.length;
  const perNode = floor + pool / n;
  return [
    `spend-sentinel fleet demo: a fake authority, a redis-server and ${n} Express services`,
    '  (each in its own process, so the kill is real), on one fleet budget:',
    `  budget { unverifiedUnits: ${fleet.b}, maxUnitsPerSecond: ${fleet.r},`,
    `           fleet: { maxNodes: ${fleet.maxNodes}, reserve: ${fleet.reserve}, leaseSeconds: ${fleet.leaseSeconds} } }   (no maxStaleSeconds)`,
    `  floor = b × reserve / maxNodes = ${floor} units; pool = b × (1 − reserve) = ${pool} units`,
    `  node budget = floor + grant, w = node budget / r: with ${n} nodes ${floor} + ${pool / n} = ${perNode} units, ${perNode / fleet.r} s`,
    `  load: ${fleet.r} POST /v1/usage a second into each node through admission()`,
    ...fleetPlanLines(plan),
    '',
    '  cell: mode (C connecting, F floor, L leased, ✕ killed, · not started), grant, status',
    `${'t (s)'.padStart(6)} ${fleet.names.map((name) => `${name.padEnd(17)}`).join(' ')}   Σ`,
  ];
}

export const fleetPhaseLine = (t, phase) => wrap(`${phase.name}: ${phase.note}`, { first: `== ${secs(t, 2)}  `, rest: ' '.repeat(11) });

/** `cells`: per node { mode, grant, status } (mode 'killed' or null for not started); `sigma`: units. */
export function fleetSampleLine(t, cells, sigma) {
  const cell = (c) => {
    if (c.mode === null) return `· ${'—'.padStart(5)} ${''.padEnd(9)}`;
    if (c.mode === 'killed') return `✕ ${'—'.padStart(5)} ${'killed'.padEnd(9)}`;
    return `${MODE_MARK[c.mode] ?? '?'} ${grantText(c.grant).padStart(5)} ${c.status.padEnd(9)}`;
  };
  return `${t.toFixed(1).padStart(6)} ${cells.map(cell).join(' ')} ${String(Math.round(sigma)).padStart(3)}`;
}

export const modeLine = (t, name, from, to, grant) => `         ↳ ${name}  ${from} → ${to}  at ${secs(t, 2)}, grant ${grantText(grant)}`;

export const heldLine = (t, name, held) =>
  held ? `         ↳ ${name}  growth held  at ${secs(t, 2)}: the fleet's state was lost` : `         ↳ ${name}  growth allowed  at ${secs(t, 2)}`;

/** The eviction, as the 'evicted' phase saw it: `usedKb` in use when maxmemory was lowered. */
export const evictionLines = ({ policy, usedKb, evicted, ms }) =>
  wrap(
    `the fleet's key was evicted (${policy}: the only key with a TTL) when maxmemory was lowered below the ${usedKb} kB in use (evicted_keys +${evicted} after ${ms} ms); maxmemory is 0 again`,
    { first: ' '.repeat(11), rest: ' '.repeat(11) },
  );

export const fleetEndLine = (t) => `== ${secs(t, 2)}  end of the story: load stopped; nodes closed (grants released); authority, Redis stopped`;

export const exposureLine = (exposure, b) =>
  exposure <= b ? `exposure after the cut: ${exposure} units ≤ b = ${b}` : `exposure after the cut: ${exposure} units > b = ${b}: the ceiling was broken`;

/** `nodes`: [{ name, admitted, afterCut, counts, peakGrant, end }]. */
export function fleetSummaryLines({ nodes, exposure, b, floor, pool, maxNodes, svgPath }) {
  return [
    'summary',
    ...nodes.flatMap((n) => {
      const refused = Object.entries(n.counts.reasons).map(([reason, count]) => `${reason} ${count}`).join(', ');
      return [
        `  ${n.name}  admitted ${n.admitted} (${n.afterCut} after the cut)  refused ${n.counts.refused}${refused ? ` (${refused})` : ''}`,
        `          peak grant ${grantText(n.peakGrant)}; ${n.end}`,
      ];
    }),
    ...wrap(`exposure: the units admitted after the cut on evidence from before it, over all nodes (the killed one included: a node reports each unit before it answers). Floors (at most ${maxNodes} × ${floor}) plus the pool (${pool}) keep it ≤ b.`, { first: '  ', rest: '  ' }),
    exposureLine(exposure, b),
    `timeline: ${svgPath}`,
  ];
}
