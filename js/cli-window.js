'use strict';
// `spend-sentinel window`: the budget calculator. Flags become the `budget` options of
// `new Sentinel`; the addon computes every figure (binding.js's internal `windowFigures`, the
// rules a sentinel runs with), so this file only names flags and lays out text.

/** Flags → `budget` options. */
const BUDGET_FLAGS = {
  budget: 'unverifiedUnits',
  rate: 'maxUnitsPerSecond',
  nodes: 'nodes',
  share: 'share',
  'max-stale': 'maxStaleSeconds',
};
/** Flags → `budget.fleet` options: any of them makes a fleet budget (only its shape: no Redis). */
const FLEET_FLAGS = { 'max-nodes': 'maxNodes', reserve: 'reserve', 'lease-seconds': 'leaseSeconds', 'max-split-seconds': 'maxSplitSeconds' };
const LIVE_NODES = 'live-nodes';
const FLAGS = [...Object.keys(BUDGET_FLAGS), ...Object.keys(FLEET_FLAGS), LIVE_NODES];

/** The option paths of the addon's messages, longest first, as the flags a CLI user typed. */
const FLAG_NAMES = [
  ...Object.entries(FLEET_FLAGS).map(([flag, option]) => [`budget.fleet.${option}`, `--${flag}`]),
  ['budget.fleet', 'a fleet budget (--max-nodes)'],
  ...Object.entries(BUDGET_FLAGS).map(([flag, option]) => [`budget.${option}`, `--${flag}`]),
  ['liveNodes', `--${LIVE_NODES}`],
];

/** `parseArgs` options for the flags. */
const windowOptions = () => Object.fromEntries(FLAGS.map((flag) => [flag, { type: 'string' }]));

/**
 * The `window` command for parsed flag values: the text to print. A refused budget throws
 * `usageError(message)` with the addon's message in flag names and the text the user typed.
 */
function runWindow(values, usageError) {
  const number = (flag) => (values[flag].trim() === '' ? Number.NaN : Number(values[flag]));
  const budget = {};
  for (const [flag, option] of Object.entries(BUDGET_FLAGS)) if (values[flag] !== undefined) budget[option] = number(flag);
  const fleet = {};
  for (const [flag, option] of Object.entries(FLEET_FLAGS)) if (values[flag] !== undefined) fleet[option] = number(flag);
  if (Object.keys(fleet).length > 0) budget.fleet = fleet;
  const liveNodes = values[LIVE_NODES] === undefined ? undefined : number(LIVE_NODES);
  const { windowFigures } = require('./native');
  let figures;
  try {
    figures = windowFigures(budget, liveNodes);
  } catch (err) {
    if (err.code !== 'ERR_SPEND_SENTINEL_CONFIG') throw err;
    throw usageError(`window: ${withTypedValue(withFlagNames(err.message), values)}`);
  }
  const lines = figures.fleet === null ? fixedBudget(budget, figures.node) : fleetBudget(budget, figures);
  return `${[...lines, '', ...callRates(budget, figures)].join('\n')}\n`;
}

function fixedBudget(budget, node) {
  const b = budget.unverifiedUnits;
  const r = budget.maxUnitsPerSecond;
  const share = budget.share !== undefined ? String(budget.share) : `1/${budget.nodes ?? 1}`;
  const lines = [
    `node budget  = b × share = ${b} × ${share} = ${n(node.nodeBudgetUnits)} units`,
    `stale window = node budget / r = ${n(node.nodeBudgetUnits)} / ${r} = ${n(node.ceilingSeconds)} s`,
  ];
  if (budget.maxStaleSeconds !== undefined) lines.push(`             lowered to --max-stale: ${n(node.staleWindowSeconds)} s`);
  lines.push(
    `At ${r} units/s this node spends its ${n(node.nodeBudgetUnits)} unverified units in ${n(node.ceilingSeconds)} s:`,
    `evidence older than ${n(node.staleWindowSeconds)} s makes it not_ready.`,
  );
  return lines;
}

function fleetBudget(budget, { node, fleet }) {
  const b = budget.unverifiedUnits;
  const r = budget.maxUnitsPerSecond;
  const maxStale = budget.maxStaleSeconds;
  const want =
    fleet.wantUnits === null
      ? 'no limit without --max-stale: all the pool it can get'
      : `r × max-stale − floor = ${r} × ${maxStale} − ${n(fleet.floorUnits)} = ${n(fleet.wantUnits)} units`;
  const split = `${n(fleet.poolUnits)} / ${fleet.liveNodes}`;
  const grant = fleet.wantUnits === null ? `pool / live nodes = ${split}` : `min(want, pool / live nodes) = min(${n(fleet.wantUnits)}, ${split})`;
  const window = (w) =>
    maxStale === undefined
      ? `${n(w.nodeBudgetUnits)} / ${r} = ${n(w.staleWindowSeconds)} s`
      : `min(${n(w.nodeBudgetUnits)} / ${r}, ${maxStale}) = ${n(w.staleWindowSeconds)} s`;
  const formula = maxStale === undefined ? 'node budget / r' : 'min(node budget / r, max-stale)';
  const floorOnly = fleet.floorOnly;
  return [
    `floor        = b × reserve / max-nodes = ${b} × ${fleet.reserve} / ${fleet.maxNodes} = ${n(fleet.floorUnits)} units`,
    `pool         = b × (1 − reserve) = ${b} × ${n(1 - fleet.reserve)} = ${n(fleet.poolUnits)} units`,
    `want         = ${want}`,
    `grant        = ${grant} = ${n(fleet.grantUnits)} units (${fleet.liveNodes} of ${fleet.maxNodes} nodes alive)`,
    `node budget  = floor + grant = ${n(fleet.floorUnits)} + ${n(fleet.grantUnits)} = ${n(node.nodeBudgetUnits)} units`,
    `stale window = ${formula} = ${window(node)}`,
    `On its floor alone (a fresh fleet's first ${n(fleet.firstGrantsAfterSeconds)} s at least; a node past its lease`,
    floorOnly.nodeBudgetUnits > 0
      ? `deadline without Redis): ${n(floorOnly.nodeBudgetUnits)} units, stale window ${window(floorOnly)}.`
      : `deadline without Redis): no floor (reserve 0), not_ready (no_fleet_lease); its refreshes plan with the equal split's window, ${n(floorOnly.cadenceWindowSeconds)} s.`,
  ];
}

/** The authority calls a second at each window, per node and for the nodes counted. */
function callRates(budget, { node, fleet, calmWindowSeconds }) {
  const nodes = fleet?.liveNodes ?? budget.nodes;
  const rows = fleet === null ? [[null, node]] : [['leased', node], ['on the floor', fleet.floorOnly]];
  const labelled = (label, cells) => (fleet === null ? cells : [label, ...cells]);
  const table = [labelled('', ['window', 'pause', 'per node', ...(nodes === undefined ? [] : [`${nodes} nodes`])])];
  for (const [label, w] of rows) {
    const rate = w.callsPerSecond;
    const pause = `${n(w.minPauseMs / 1000)}–${n(w.maxPauseMs / 1000)} s`;
    table.push(labelled(label, [`${n(w.cadenceWindowSeconds)} s`, pause, `≤ ${n(rate)}/s`, ...(nodes === undefined ? [] : [`≤ ${n(rate * nodes)}/s`])]));
  }
  const widths = table[0].map((_, col) => Math.max(...table.map((row) => row[col].length)));
  const lines = [
    'Authority calls with the default refresh cadence (after each refresh, a pause uniform in',
    '[0.3 w, 0.5 w]):',
    ...table.map((row) => `  ${row.map((cell, col) => cell.padEnd(widths[col])).join('   ')}`.trimEnd()),
    'Each rate is 1 / mean pause, as if the authority answered at once: its answer time lengthens',
    'every cycle and lowers the rate. Traffic above r adds refreshes on demand (each no sooner',
    'than 100 ms after the previous refresh started) while the authority answers valid.',
  ];
  const busy = rows.filter(([, w]) => w.callsPerSecond > 1);
  if (busy.length > 0) {
    lines.push(
      `More than one call a second per node: new Sentinel logs a warning. A stale window of at least`,
      `${n(calmWindowSeconds)} s${fleet === null ? '' : ' on the floor'} keeps it to one (or give refresh.minIntervalMs and maxIntervalMs).`,
    );
  }
  return lines;
}

/**
 * The addon reports the number it was given (`(got NaN)` for `--budget abc`); a CLI user typed
 * text, so the message ends with that text instead: `--budget: … (got "abc")`.
 */
function withTypedValue(message, values) {
  const flag = FLAGS.find((f) => message.startsWith(`--${f}:`));
  if (flag === undefined || values[flag] === undefined) return message;
  const typed = `(got ${JSON.stringify(values[flag])})`;
  return /\(got [^()]*\)/.test(message) ? message.replace(/\(got [^()]*\)/, () => typed) : `${message} ${typed}`;
}

/** `budget.maxStaleSeconds: …` → `--max-stale: …`, for CLI users. */
function withFlagNames(message) {
  return FLAG_NAMES.reduce((text, [path, flag]) => text.replaceAll(path, flag), message);
}

/** A number as the calculator prints it: at most six decimals. */
const n = (x) => String(Math.round(x * 1e6) / 1e6);

module.exports = { windowOptions, runWindow };
