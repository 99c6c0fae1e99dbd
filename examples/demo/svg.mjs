// demo-timeline.svg, written by hand: per node a band of readiness over time (each stretch
// coloured by its reason and labelled where it fits; every reason is in the legend), the refreshes
// the authority saw and the requests admission refused under it, and the stale window w drawn from
// the last refresh answered before the silence to the cutoff (with 1 s ticks, so "not_ready at
// evidence age 5 s" reads off the picture); then the unverified units of each node against the
// node budget, over a time axis with a tick every second; then, when given, a panel of one phase
// on its own time scale (./streams-svg.mjs: the streamed answers) before the legend.
// Stable ids for tools and tests: phases, <node>-status, <node>-refreshes, <node>-refused,
// <node>-window, unverified-chart, budget-line, <node>-unverified, time-axis, legend. Colours are
// attributes (any viewer shows them); classes say what each element is.

const STATUS_FILL = { ready: '#2e9d4f', degraded: '#f0a400', not_ready: '#d64541' };
const REASON_FILL = {
  verified: '#2e9d4f',
  refresh_indeterminate: '#f0a400',
  evidence_too_old: '#d64541',
  budget_exhausted: '#c2185b',
  invalid_credential: '#7b1010',
  capability_missing: '#6a1b9a',
  no_evidence: '#757575',
  no_fleet_lease: '#a04000',
  shutting_down: '#455a64',
  internal_error: '#000000',
  held: '#5d4037',
};
const TEXT_ON = (fill) => (fill === REASON_FILL.refresh_indeterminate ? '#222' : '#fff');
const NODE_STROKE = ['#1f6fd1', '#8e44ad'];
const REFRESH_FILL = { valid: '#1b5e20', held: '#9e9e9e', revoked: '#8b0000' };
const REFRESH_LABEL = { valid: 'answered', held: 'never answered', revoked: '401' };
const WINDOW_STROKE = '#222';
const BUDGET_STROKE = '#d64541';

const WIDTH = 1000;
const LEFT = 110;
const PLOT = WIDTH - LEFT - 20;
const BAND_TOP = 58;
const BAND = 24;
const ROW = 84; // band, refreshes, refused requests, window
const CHART_HEIGHT = 190;

export const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]);
export const n1 = (v) => Number(v.toFixed(1));
const attrs = (o) => Object.entries(o).map(([k, v]) => ` ${k}="${esc(typeof v === 'number' ? n1(v) : v)}"`).join('');
export const el = (name, a, children) => (children === undefined ? `<${name}${attrs(a)}/>` : `<${name}${attrs(a)}>${children}</${name}>`);
export const text = (a, s) => el('text', a, esc(s));

export const fillOf = (status, reason) => REASON_FILL[reason] ?? STATUS_FILL[status];
/** A legend mark: a small filled rectangle, for a band or an area. */
export const swatch = (fill) => (lx, ly) => el('rect', { x: lx, y: ly - 9, width: 14, height: 10, fill });
/** A legend mark: a short line, as the chart draws one. */
export const lineMark = (stroke, dash) => (lx, ly) => el('line', { x1: lx, x2: lx + 14, y1: ly - 4, y2: ly - 4, stroke, 'stroke-width': dash ? 1.5 : 2, ...(dash && { 'stroke-dasharray': dash }) });

/**
 * `total` seconds; `plan` the story phases; `budget` units per node; `windowSeconds` w; `nodes`:
 * [{ name, segments: [{ from, to, status, reason }], units: [[t, units]], refreshes: [{ t, answer }],
 *    refusals: [{ t, reason }], window: { from } | null (the last answered refresh before the silence) }];
 * `panel` (optional): `({ top, left, right }) → { svg, bottom, legend: [{ mark, label }], desc }`.
 */
export function renderTimeline({ total, plan, budget, windowSeconds: w, nodes, panel = null }) {
  const x = (t) => LEFT + (Math.min(Math.max(t, 0), total) / total) * PLOT;
  const pxPerSecond = PLOT / total;
  const chartTop = BAND_TOP + nodes.length * ROW + 4;
  const chartBottom = chartTop + CHART_HEIGHT;
  // Overage may take a node past its budget: the scale keeps its peak in the chart.
  const yMax = Math.max(budget * 1.2, ...nodes.flatMap((n) => n.units.map(([, u]) => u * 1.05)));
  const y = (u) => chartBottom - (u / yMax) * CHART_HEIGHT;

  const phases = plan.map((p, i) => [
    i % 2 ? el('rect', { class: 'phase-bg', x: x(p.start), y: 36, width: x(p.end) - x(p.start), height: chartBottom - 36, fill: '#f3f3f3' }) : '',
    p.start > 0 ? el('line', { class: 'phase-marker', x1: x(p.start), x2: x(p.start), y1: 36, y2: chartBottom, stroke: '#777', 'stroke-dasharray': '3 3' }) : '',
    text({ class: 'phase-label', x: x(p.start) + 4, y: 48, fill: '#444' }, p.name),
  ].join(''));

  const reasons = new Map(); // `status: reason` → fill, in order of appearance
  const rowLabel = (yy, s) => text({ x: LEFT - 8, y: yy, 'text-anchor': 'end', 'font-size': 9, fill: '#555' }, s);
  const rows = nodes.map((node, i) => {
    const top = BAND_TOP + i * ROW;
    const rects = node.segments.map((s) => {
      const fill = fillOf(s.status, s.reason);
      reasons.set(`${s.status}: ${s.reason}`, fill);
      const width = x(s.to) - x(s.from);
      const label = width > s.reason.length * 6.5 + 8
        ? text({ class: 'status-label', x: x(s.from) + width / 2, y: top + 16, 'text-anchor': 'middle', 'font-size': 11, fill: TEXT_ON(fill) }, s.reason)
        : '';
      const tip = el('title', {}, esc(`${node.name}: ${s.status} (${s.reason}) ${s.from.toFixed(2)}–${s.to.toFixed(2)} s`));
      return el('rect', { class: `status status-${s.status}`, 'data-reason': s.reason, x: x(s.from), y: top, width, height: BAND, fill }, tip) + label;
    });
    const ticks = node.refreshes.filter((r) => r.t >= 0 && r.t <= total).map((r) =>
      el('rect', { class: `refresh refresh-${r.answer}`, x: x(r.t) - 1, y: top + BAND + 3, width: 2, height: 8, fill: REFRESH_FILL[r.answer] }),
    );
    const refused = node.refusals.map((r) =>
      el('rect', { class: 'refused', 'data-reason': r.reason, x: x(r.t) - 0.6, y: top + BAND + 15, width: 1.2, height: 8, fill: fillOf('not_ready', r.reason) }),
    );
    return [
      el('g', { id: `${node.name}-status`, class: 'status-band' }, text({ x: LEFT - 8, y: top + 16, 'text-anchor': 'end', 'font-weight': 'bold' }, node.name) + rects.join('')),
      el('g', { id: `${node.name}-refreshes`, class: 'refreshes' }, rowLabel(top + BAND + 10, 'refreshes') + ticks.join('')),
      el('g', { id: `${node.name}-refused`, class: 'refused-requests' }, rowLabel(top + BAND + 22, `refused (${node.refusals.length})`) + refused.join('')),
      node.window ? windowMark(node, { x, w, pxPerSecond, top, y: top + BAND + 36 }) : '',
    ].join('');
  });

  const lines = nodes.map((node, i) =>
    el('polyline', {
      id: `${node.name}-unverified`,
      class: 'unverified',
      fill: 'none',
      stroke: NODE_STROKE[i % NODE_STROKE.length],
      'stroke-width': 1.6,
      points: node.units.filter(([t]) => t >= 0 && t <= total).map(([t, u]) => `${n1(x(t))},${n1(y(u))}`).join(' '),
    }),
  );
  const chart = el('g', { id: 'unverified-chart' }, [
    unitsAxis({ budget, y, top: chartTop, bottom: chartBottom, left: LEFT, right: LEFT + PLOT, label: 'unverified units' }),
    ...lines,
    budgetLine({ id: 'budget-line', budget, y, left: LEFT, right: LEFT + PLOT, label: `node budget: ${budget} units per node` }),
  ].join(''));

  const axis = timeAxis({ x, total, y: chartBottom, left: LEFT, right: LEFT + PLOT, label: 'story time (s)', minorStep: 1 });
  const below = panel?.({ top: chartBottom + 50, left: LEFT, right: LEFT + PLOT });

  const legendItems = [
    ...[...reasons].map(([label, fill]) => ({ mark: swatch(fill), label, class: 'legend-reason' })),
    ...nodes.map((node, i) => ({ mark: lineMark(NODE_STROKE[i % NODE_STROKE.length]), label: `${node.name} unverified` })),
    { mark: lineMark(BUDGET_STROKE, '4 2'), label: 'node budget' },
    ...Object.entries(REFRESH_FILL).map(([answer, fill]) => ({ mark: (lx, ly) => el('rect', { x: lx + 6, y: ly - 10, width: 2, height: 9, fill }), label: `refresh ${REFRESH_LABEL[answer]}` })),
    { mark: (lx, ly) => el('rect', { x: lx + 6, y: ly - 10, width: 1.2, height: 9, fill: REASON_FILL.evidence_too_old }), label: 'refused request (503), coloured by reason' },
    { mark: (lx, ly) => el('path', { d: `M${lx} ${ly - 8}v6M${lx} ${ly - 5}h14M${lx + 14} ${ly - 8}v6`, stroke: WINDOW_STROKE, fill: 'none' }), label: `w = ${w} s from the last answered refresh to not_ready` },
    ...(below?.legend ?? []),
  ];
  const legendY = (below?.bottom ?? chartBottom) + 58;
  const legend = legendRows(legendItems, { left: LEFT, right: LEFT + PLOT, y: legendY });
  const legendRowsUsed = Number(/data-rows="(\d+)"/.exec(legend)[1]);
  const height = legendY + legendRowsUsed * 18 + 8;

  const title = `spend-sentinel demo (${total} s story): readiness and unverified units of ${nodes.map((n) => n.name).join(' and ')}`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${n1(height)}" viewBox="0 0 ${WIDTH} ${n1(height)}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12">`,
    el('title', {}, esc(title)),
    el('desc', {}, esc(`Phases: ${plan.map((p) => `${p.name} ${p.start}–${p.end} s`).join(', ')}. Status bands coloured by reason: ${[...reasons.keys()].join(', ')}. Under each band: refreshes, refused requests, and the stale window w = ${w} s.${below ? ` ${below.desc}` : ''}`)),
    el('rect', { width: WIDTH, height, fill: '#fff' }),
    text({ x: LEFT, y: 22, 'font-size': 14, 'font-weight': 'bold' }, title),
    el('g', { id: 'phases' }, phases.join('')),
    ...rows,
    chart,
    axis,
    below?.svg ?? '',
    legend,
    '</svg>',
    '',
  ].join('\n');
}

/**
 * The `<node>-window` group: the stale window w as a bracket on the time scale, from the last
 * refresh the authority answered before the silence (evidence age 0) to age w, a tick per second
 * of evidence age, and a dashed line up through the band where the node turned not_ready.
 */
function windowMark(node, { x, w, pxPerSecond, top, y }) {
  const from = node.window.from;
  const x0 = x(from);
  const x1 = x0 + w * pxPerSecond;
  const ticks = [];
  for (let s = 1; s < w; s += 1) ticks.push(el('line', { class: 'age-tick', x1: x0 + s * pxPerSecond, x2: x0 + s * pxPerSecond, y1: y - 2, y2: y + 2, stroke: WINDOW_STROKE }));
  return el('g', { id: `${node.name}-window`, class: 'window', 'data-from': n1(from), 'data-seconds': w }, [
    el('line', { class: 'window-start', x1: x0, x2: x0, y1: top + BAND + 3, y2: y + 4, stroke: WINDOW_STROKE, 'stroke-dasharray': '2 2' }),
    el('line', { class: 'window-end', x1: x1, x2: x1, y1: top, y2: y + 4, stroke: WINDOW_STROKE, 'stroke-dasharray': '2 2' }),
    el('line', { class: 'window-span', x1: x0, x2: x1, y1: y, y2: y, stroke: WINDOW_STROKE, 'stroke-width': 1.5 }),
    ...ticks,
    text({ class: 'window-label', x: x1 + 4, y: y + 4, 'font-size': 11 }, `w = ${w} s: evidence too old → not_ready`),
    text({ x: x0 - 4, y: y + 4, 'text-anchor': 'end', 'font-size': 9, fill: '#555' }, 'last answer'),
  ].join(''));
}

/** A units chart's scale: grid lines at 0, ¼, ½, ¾ and all of `budget`, labelled, its left edge and its title. */
export function unitsAxis({ budget, y, top, bottom, left, right, label }) {
  const grid = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const u = budget * f;
    return el('line', { x1: left, x2: right, y1: y(u), y2: y(u), stroke: '#e2e2e2' }) +
      text({ x: left - 8, y: y(u) + 4, 'text-anchor': 'end', 'font-size': 11 }, u);
  });
  const mid = (top + bottom) / 2;
  return [
    ...grid,
    el('line', { x1: left, x2: left, y1: top, y2: bottom, stroke: '#444' }),
    text({ x: left - 44, y: mid, transform: `rotate(-90 ${left - 44} ${n1(mid)})`, 'text-anchor': 'middle', 'font-size': 11 }, label),
  ].join('');
}

/**
 * The node budget across a units chart: a dashed line, labelled at its left end (where the units
 * start low; at the right, overage may take a line over it).
 */
export function budgetLine({ id, budget, y, left, right, label }) {
  return el('line', { id, class: 'budget', x1: left, x2: right, y1: y(budget), y2: y(budget), stroke: BUDGET_STROKE, 'stroke-width': 1.5, 'stroke-dasharray': '7 4' }) +
    text({ x: left + 6, y: y(budget) - 5, 'font-size': 11, fill: BUDGET_STROKE }, label);
}

/**
 * The `time-axis` group (or `id`): a line at `y` from `left` to `right` for the seconds `from` to
 * `total`, a tick and a label every 2 s (5 s over 20 s, 1 s up to 8 s), and an unlabelled one
 * every `minorStep` s when given; `label` (e.g. 'time (s)') under the ticks when given.
 */
export function timeAxis({ x, from = 0, total, y, left, right, label, minorStep, id = 'time-axis' }) {
  const span = total - from;
  const step = span <= 8 ? 1 : span <= 20 ? 2 : 5;
  const ticks = [];
  if (minorStep) {
    for (let t = from; t <= total + 1e-9; t += minorStep) {
      if (Math.abs(t / step - Math.round(t / step)) > 1e-9) ticks.push(el('line', { class: 'minor-tick', x1: x(t), x2: x(t), y1: y, y2: y + 3, stroke: '#888' }));
    }
  }
  for (let t = Math.ceil(from / step - 1e-9) * step; t <= total + 1e-9; t += step) {
    ticks.push(el('line', { x1: x(t), x2: x(t), y1: y, y2: y + 5, stroke: '#444' }) + text({ x: x(t), y: y + 18, 'text-anchor': 'middle', 'font-size': 11 }, `${t} s`));
  }
  const title = label ? text({ class: 'axis-label', x: (left + right) / 2, y: y + 34, 'text-anchor': 'middle', 'font-size': 11 }, label) : '';
  return el('g', { id }, el('line', { x1: left, x2: right, y1: y, y2: y, stroke: '#444' }) + ticks.join('') + title);
}

/** The `legend` group: `items` ({ mark(x, y), label }) in rows from `left` to `right`, starting at `y`. */
export function legendRows(items, { left, right, y }) {
  let lx = left;
  let ly = y;
  let row = 1;
  const body = items.map((item) => {
    const width = 26 + item.label.length * 6.6;
    if (lx + width > right) [lx, ly, row] = [left, ly + 18, row + 1]; // next row
    const out = item.mark(lx, ly) + text({ x: lx + 18, y: ly, ...(item.class && { class: item.class }) }, item.label);
    lx += width;
    return out;
  }).join('');
  return el('g', { id: 'legend', 'font-size': 11, 'data-rows': row }, body);
}
