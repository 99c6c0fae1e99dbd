// fleet-timeline.svg (`--fleet`): each node's grant over time (one line per node), then the fleet's
// units against b: the unverified units of the live nodes, and the units admitted after the cut
// summed over all nodes (the exposure). Phase markers (hold, scale-up, cut, kill, evicted,
// redis-paused, redis-back, restore), at the times the phases actually started (each lasts at
// least its length and until its event), span both charts; the time axis is labeled in seconds. Stable ids for tools
// and tests: phases, grant-chart, <node>-grant (class grant), fair-shares, units-chart,
// fleet-unverified, exposure, b-line, time-axis, legend. Built with ./svg.mjs's helpers.
import { el, esc, legendRows, n1, text, timeAxis } from './svg.mjs';

const NODE_STROKE = ['#1f6fd1', '#8e44ad', '#16a085', '#d35400', '#7f8c8d', '#c0392b'];
const UNVERIFIED_STROKE = '#1f6fd1';
const EXPOSURE_STROKE = '#111';
const B_STROKE = '#d64541';

const WIDTH = 1000;
const LEFT = 110;
const PLOT = WIDTH - LEFT - 20;
const PHASE_TOP = 36;
const GRANT_TOP = 76;
const CHART_HEIGHT = 180;
const GAP = 34;

const points = (series, x, y, total) => series.filter(([t]) => t >= 0 && t <= total).map(([t, v]) => `${n1(x(t))},${n1(y(v))}`).join(' ');

/** Horizontal grid lines with their values on the left, and the chart's y-axis title. */
function yAxis({ top, bottom, y, values, title }) {
  const mid = (top + bottom) / 2;
  return [
    ...values.map((v) => el('line', { x1: LEFT, x2: LEFT + PLOT, y1: y(v), y2: y(v), stroke: '#e2e2e2' }) + text({ x: LEFT - 8, y: y(v) + 4, 'text-anchor': 'end', 'font-size': 11 }, v)),
    el('line', { x1: LEFT, x2: LEFT, y1: top, y2: bottom, stroke: '#444' }),
    el('line', { x1: LEFT, x2: LEFT + PLOT, y1: bottom, y2: bottom, stroke: '#444' }),
    text({ class: 'axis-label', x: LEFT - 50, y: mid, transform: `rotate(-90 ${LEFT - 50} ${n1(mid)})`, 'text-anchor': 'middle', 'font-size': 11 }, title),
  ].join('');
}

/**
 * `total` seconds (the story as it ran); `plan` the phases as they ran, [{ name, start, end }]; `b`, `pool`, `floor` in units; `nodes`: [{ name, grants: [[t, units]],
 * killedAt: t | null }]; `series`: { unverified: [[t, units]], exposure: [[t, units]] }.
 */
export function renderFleetTimeline({ total, plan, b, pool, floor, nodes, series }) {
  const x = (t) => LEFT + (Math.min(Math.max(t, 0), total) / total) * PLOT;

  // Chart 1: grants.
  const grantBottom = GRANT_TOP + CHART_HEIGHT;
  const grantMax = (pool / 2) * 1.15;
  const yG = (u) => grantBottom - (Math.min(u, grantMax) / grantMax) * CHART_HEIGHT;
  const shares = [2, 4, 5].map((n) => ({ n, units: pool / n }));
  const grantLines = nodes.map((node, i) => {
    const stroke = NODE_STROKE[i % NODE_STROKE.length];
    const line = el('polyline', { id: `${node.name}-grant`, class: 'grant', 'data-node': node.name, fill: 'none', stroke, 'stroke-width': 1.8, points: points(node.grants, x, yG, total) });
    const last = node.grants.at(-1);
    const killed = node.killedAt !== null && last
      ? text({ class: 'killed', x: x(node.killedAt), y: yG(last[1]) + 4, 'text-anchor': 'middle', 'font-size': 13, fill: stroke }, '✕')
      : '';
    return line + killed;
  });
  const grantChart = el('g', { id: 'grant-chart' }, [
    yAxis({ top: GRANT_TOP, bottom: grantBottom, y: yG, values: [0, 25, 50, 75, 100, 125].filter((v) => v <= grantMax), title: 'grant (units)' }),
    el('g', { id: 'fair-shares' }, shares.map(({ n, units }) =>
      el('line', { class: 'fair-share', x1: LEFT, x2: LEFT + PLOT, y1: yG(units), y2: yG(units), stroke: '#aaa', 'stroke-dasharray': '2 3' }) +
      text({ x: LEFT + PLOT - 4, y: yG(units) - 4, 'text-anchor': 'end', 'font-size': 10, fill: '#777' }, `pool / ${n} = ${units}`)).join('')),
    ...grantLines,
  ].join(''));

  // Chart 2: the fleet's units against b.
  const unitsTop = grantBottom + GAP;
  const unitsBottom = unitsTop + CHART_HEIGHT;
  const unitsMax = b * 1.15;
  const yU = (u) => unitsBottom - (Math.min(u, unitsMax) / unitsMax) * CHART_HEIGHT;
  const unitsChart = el('g', { id: 'units-chart' }, [
    yAxis({ top: unitsTop, bottom: unitsBottom, y: yU, values: [0, 100, 200, 300].filter((v) => v <= unitsMax), title: 'units' }),
    el('polyline', { id: 'fleet-unverified', class: 'unverified', fill: 'none', stroke: UNVERIFIED_STROKE, 'stroke-width': 1.6, points: points(series.unverified, x, yU, total) }),
    el('polyline', { id: 'exposure', class: 'exposure', fill: 'none', stroke: EXPOSURE_STROKE, 'stroke-width': 2, points: points(series.exposure, x, yU, total) }),
    el('line', { id: 'b-line', class: 'budget', x1: LEFT, x2: LEFT + PLOT, y1: yU(b), y2: yU(b), stroke: B_STROKE, 'stroke-width': 1.5, 'stroke-dasharray': '7 4' }),
    text({ x: LEFT + PLOT - 4, y: yU(b) - 5, 'text-anchor': 'end', 'font-size': 11, fill: B_STROKE }, `b = ${b} units: the fleet's ceiling`),
  ].join(''));

  // Phases: a marker at each start, labels on two alternating rows (short phases stay readable).
  const phases = el('g', { id: 'phases' }, plan.map((p, i) => [
    i % 2 ? el('rect', { class: 'phase-bg', x: x(p.start), y: PHASE_TOP, width: x(p.end) - x(p.start), height: unitsBottom - PHASE_TOP, fill: '#f3f3f3' }) : '',
    el('line', { class: 'phase-marker', 'data-phase': p.name, x1: x(p.start), x2: x(p.start), y1: PHASE_TOP, y2: unitsBottom, stroke: '#777', 'stroke-dasharray': '3 3' }),
    text({ class: 'phase-label', x: x(p.start) + 3, y: PHASE_TOP + 12 + (i % 2) * 14, fill: '#444', 'font-size': 11 }, p.name),
  ].join('')).join(''));

  const axisY = unitsBottom;
  const axis = timeAxis({ x, total, y: axisY, left: LEFT, right: LEFT + PLOT, label: 'time (s)' });
  const line = (stroke, extra = {}) => (lx, ly) => el('line', { x1: lx, x2: lx + 14, y1: ly - 4, y2: ly - 4, stroke, 'stroke-width': 2, ...extra });
  const legend = legendRows([
    ...nodes.map((node, i) => ({ mark: line(NODE_STROKE[i % NODE_STROKE.length]), label: `${node.name} grant` })),
    { mark: line('#aaa', { 'stroke-dasharray': '2 3' }), label: 'pool / n: the fair share of n nodes' },
    { mark: line(UNVERIFIED_STROKE), label: 'unverified units, live nodes' },
    { mark: line(EXPOSURE_STROKE), label: 'units admitted after the cut, all nodes' },
    { mark: line(B_STROKE, { 'stroke-dasharray': '4 2' }), label: 'b' },
  ], { left: LEFT, right: LEFT + PLOT, y: axisY + 58 });
  const height = axisY + 58 + 3 * 18;

  const title = `spend-sentinel fleet demo (${total.toFixed(1)} s): grants of ${nodes.length} nodes, and the fleet's units against b = ${b}`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${n1(height)}" viewBox="0 0 ${WIDTH} ${n1(height)}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12">`,
    el('title', {}, esc(title)),
    el('desc', {}, esc(`Phases: ${plan.map((p) => `${p.name} ${p.start.toFixed(2)}–${p.end.toFixed(2)} s`).join(', ')}. Floor ${floor} units per node, pool ${pool} units.`)),
    el('rect', { width: WIDTH, height, fill: '#fff' }),
    text({ x: LEFT, y: 22, 'font-size': 14, 'font-weight': 'bold' }, title),
    phases,
    grantChart,
    unitsChart,
    axis,
    legend,
    '</svg>',
    '',
  ].join('\n');
}
