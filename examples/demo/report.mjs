// The demo's printed lines. Regular on purpose: __test__/demo.spec.mjs parses them.
//   == <t>s  <phase>: <what the authority does>          a phase starts (t: 2 decimals)
//   <t>s [<bar>]  <node> <status> <reason> <age> <units>/<budget> │ <node> …   a sample, every 0.5 s
//        ↳ <node>  <from> → <to> (<reason>)  at <t>s, evidence age <age>s        a transition
const BAR = 16;

const secs = (t, digits = 1) => `${t.toFixed(digits)}s`;
const age = (seconds) => (seconds === null ? '—' : secs(seconds));
const span = (p) => `${p.name} ${p.start}–${p.end} s`;

export function planLines(plan) {
  const total = plan.at(-1).end;
  return [`story (${total.toFixed(1)} s): ${plan.map(span).join(' · ')}`, ...plan.map((p) => `  ${p.name.padEnd(8)} ${p.note}`)];
}

export function headerLines({ budget, nodeBudget, windowSeconds, names, perSecond, plan }) {
  const share = `1/${budget.nodes}`;
  const w = windowSeconds;
  return [
    `spend-sentinel demo: a fake account authority and two Express services (${names.join(', ')}) in one process`,
    `  each node: budget { unverifiedUnits: ${budget.unverifiedUnits}, maxUnitsPerSecond: ${budget.maxUnitsPerSecond}, nodes: ${budget.nodes} }`,
    `  node budget = b × share = ${budget.unverifiedUnits} × ${share} = ${nodeBudget} units; stale window w = node budget / r = ${nodeBudget} / ${budget.maxUnitsPerSecond} = ${w} s`,
    `  refreshes every ${(0.3 * w).toFixed(1)}–${(0.5 * w).toFixed(1)} s, each bounded by ${Math.min(2, 0.4 * w)} s (the defaults for w = ${w} s)`,
    `  load: ${perSecond} POST /v1/usage per second into each node through admission(): its whole ${nodeBudget} units in exactly w,`,
    `  so a node whose evidence stops being renewed is cut off at age ${w} s (or a few ms earlier, when its budget fills first)`,
    ...planLines(plan),
    '',
    `${'time'.padStart(6)} ${'story'.padEnd(BAR + 2)}  ${names.map(() => `${'node'.padEnd(6)} ${'status'.padEnd(9)} ${'reason'.padEnd(21)} ${'age'.padStart(5)} unverified`).join('   ')}`,
  ];
}

export const phaseLine = (t, phase) => `== ${secs(t, 2)}  ${phase.name}: ${phase.note}`;

export const endLine = (t) => `== ${secs(t, 2)}  end of the story: load stopped; sentinels, services and the authority closed`;

/** `samples`: [{ name, status, reason, evidenceAge, units, budget }]. */
export function sampleLine(t, total, samples) {
  const filled = Math.min(BAR, Math.round((t / total) * BAR));
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(BAR - filled)}]`;
  const node = (s) =>
    `${s.name} ${s.status.padEnd(9)} ${s.reason.padEnd(21)} ${age(s.evidenceAge).padStart(5)} ${String(s.units).padStart(3)}/${s.budget}`;
  return `${secs(t).padStart(6)} ${bar}  ${samples.map(node).join(' │ ')}`;
}

export const transitionLine = (t, name, e) =>
  `         ↳ ${name}  ${e.from} → ${e.to} (${e.reason})  at ${secs(t, 2)}, evidence age ${e.evidenceAgeSeconds === null ? '—' : secs(e.evidenceAgeSeconds, 2)}`;

/** `nodes`: [{ name, counts, maxUnverified, budget, cutoff: { afterSilence, afterLastValid, lastValidAt } | null }]. */
export function summaryLines(nodes, svgPath) {
  const lines = ['summary'];
  for (const n of nodes) {
    const reasons = Object.entries(n.counts.reasons).map(([reason, count]) => `${reason} ${count}`).join(', ');
    const failed = n.counts.failed ? `  failed ${n.counts.failed}` : '';
    lines.push(`  ${n.name}  admitted ${n.counts.admitted}  refused ${n.counts.refused}${reasons ? ` (${reasons})` : ''}${failed}  max unverified ${n.maxUnverified}/${n.budget}`);
    lines.push(
      n.cutoff
        ? `          not_ready ${n.cutoff.afterSilence.toFixed(2)} s after the authority went silent, ${n.cutoff.afterLastValid.toFixed(2)} s after the last refresh it answered for ${n.name} (at ${secs(n.cutoff.lastValidAt, 2)})`
        : '          never went not_ready after the authority went silent',
    );
  }
  lines.push(`timeline: ${svgPath}`);
  return lines;
}
