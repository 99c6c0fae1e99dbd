// demo-timeline.svg, written by hand: per node a band of readiness over time (with the refreshes
// the authority saw under it), then the unverified units of each node against the node budget.
// Stable ids for tools and tests: phases, <node>-status, <node>-refreshes, unverified-chart,
// budget-line, <node>-unverified, time-axis, legend. Colours are attributes (any viewer shows
// them); classes say what each element is.

const STATUS_FILL = { ready: '#2e9d4f', degraded: '#f0a400', not_ready: '#d64541' };
const STATUS_TEXT = { ready: '#fff', degraded: '#222', not_ready: '#fff' };
const NODE_STROKE = ['#1f6fd1', '#8e44ad'];
const REFRESH_FILL = { valid: '#1b5e20', held: '#9e9e9e', revoked: '#8b0000' };
const REFRESH_LABEL = { valid: 'answered', held: 'never answered', revoked: '401' };

const WIDTH = 1000;
const LEFT = 110;
const PLOT = WIDTH - LEFT - 20;
const BAND_TOP = 58;
const BAND = 24;
const BAND_STEP = 42;
const CHART_HEIGHT = 190;

export const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]);
export const n1 = (v) => Number(v.toFixed(1));
const attrs = (o) => Object.entries(o).map(([k, v]) => ` ${k}="${esc(typeof v === 'number' ? n1(v) : v)}"`).join('');
export const el = (name, a, children) => (children === undefined ? `<${name}${attrs(a)}/>` : `<${name}${attrs(a)}>${children}</${name}>`);
export const text = (a, s) => el('text', a, esc(s));

/**
 * `total` seconds; `plan` the story phases; `budget` units per node; `nodes`:
 * [{ name, segments: [{ from, to, status, reason }], units: [[t, units]], refreshes: [{ t, answer }] }].
 */
export function renderTimeline({ total, plan, budget, nodes }) {
  const x = (t) => LEFT + (Math.min(Math.max(t, 0), total) / total) * PLOT;
  const chartTop = BAND_TOP + nodes.length * BAND_STEP + 14;
  const chartBottom = chartTop + CHART_HEIGHT;
  const yMax = budget * 1.2;
  const y = (u) => chartBottom - (u / yMax) * CHART_HEIGHT;
  const height = chartBottom + 96;

  const phases = plan.map((p, i) => [
    i % 2 ? el('rect', { class: 'phase-bg', x: x(p.start), y: 36, width: x(p.end) - x(p.start), height: chartBottom - 36, fill: '#f3f3f3' }) : '',
    p.start > 0 ? el('line', { class: 'phase-marker', x1: x(p.start), x2: x(p.start), y1: 36, y2: chartBottom, stroke: '#777', 'stroke-dasharray': '3 3' }) : '',
    text({ class: 'phase-label', x: x(p.start) + 4, y: 48, fill: '#444' }, p.name),
  ].join(''));

  const bands = nodes.map((node, i) => {
    const top = BAND_TOP + i * BAND_STEP;
    const rects = node.segments.map((s) => {
      const w = x(s.to) - x(s.from);
      const label = w > s.reason.length * 6.5 + 8
        ? text({ x: x(s.from) + w / 2, y: top + 16, 'text-anchor': 'middle', 'font-size': 11, fill: STATUS_TEXT[s.status] }, s.reason)
        : '';
      const tip = el('title', {}, esc(`${node.name}: ${s.status} (${s.reason}) ${s.from.toFixed(2)}–${s.to.toFixed(2)} s`));
      return el('rect', { class: `status status-${s.status}`, 'data-reason': s.reason, x: x(s.from), y: top, width: w, height: BAND, fill: STATUS_FILL[s.status] }, tip) + label;
    });
    const ticks = node.refreshes.filter((r) => r.t >= 0 && r.t <= total).map((r) =>
      el('rect', { class: `refresh refresh-${r.answer}`, x: x(r.t) - 1, y: top + BAND + 2, width: 2, height: 7, fill: REFRESH_FILL[r.answer] }),
    );
    return [
      el('g', { id: `${node.name}-status`, class: 'status-band' }, text({ x: LEFT - 8, y: top + 16, 'text-anchor': 'end', 'font-weight': 'bold' }, node.name) + rects.join('')),
      el('g', { id: `${node.name}-refreshes`, class: 'refreshes' }, ticks.join('')),
    ].join('');
  });

  const grid = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const u = budget * f;
    return el('line', { x1: LEFT, x2: LEFT + PLOT, y1: y(u), y2: y(u), stroke: '#e2e2e2' }) +
      text({ x: LEFT - 8, y: y(u) + 4, 'text-anchor': 'end', 'font-size': 11 }, u);
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
    ...grid,
    el('line', { x1: LEFT, x2: LEFT, y1: chartTop, y2: chartBottom, stroke: '#444' }),
    text({ x: LEFT - 44, y: chartTop + CHART_HEIGHT / 2, transform: `rotate(-90 ${LEFT - 44} ${n1(chartTop + CHART_HEIGHT / 2)})`, 'text-anchor': 'middle', 'font-size': 11 }, 'unverified units'),
    ...lines,
    el('line', { id: 'budget-line', class: 'budget', x1: LEFT, x2: LEFT + PLOT, y1: y(budget), y2: y(budget), stroke: '#d64541', 'stroke-width': 1.5, 'stroke-dasharray': '7 4' }),
    text({ x: LEFT + PLOT - 4, y: y(budget) - 5, 'text-anchor': 'end', 'font-size': 11, fill: '#d64541' }, `node budget: ${budget} units per node`),
  ].join(''));

  const axis = timeAxis({ x, total, y: chartBottom, left: LEFT, right: LEFT + PLOT });

  const legendY = chartBottom + 46;
  const legendItems = [
    ...Object.entries(STATUS_FILL).map(([status, fill]) => ({ mark: (lx, ly) => el('rect', { x: lx, y: ly - 9, width: 14, height: 10, fill }), label: status })),
    ...nodes.map((node, i) => ({ mark: (lx, ly) => el('line', { x1: lx, x2: lx + 14, y1: ly - 4, y2: ly - 4, stroke: NODE_STROKE[i % NODE_STROKE.length], 'stroke-width': 2 }), label: `${node.name} unverified` })),
    { mark: (lx, ly) => el('line', { x1: lx, x2: lx + 14, y1: ly - 4, y2: ly - 4, stroke: '#d64541', 'stroke-dasharray': '4 2', 'stroke-width': 1.5 }), label: 'node budget' },
    ...Object.entries(REFRESH_FILL).map(([answer, fill]) => ({ mark: (lx, ly) => el('rect', { x: lx + 6, y: ly - 10, width: 2, height: 9, fill }), label: `refresh ${REFRESH_LABEL[answer]}` })),
  ];
  const legend = legendRows(legendItems, { left: LEFT, right: LEFT + PLOT, y: legendY });

  const title = `spend-sentinel demo (${total} s story): readiness and unverified units of ${nodes.map((n) => n.name).join(' and ')}`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${n1(height)}" viewBox="0 0 ${WIDTH} ${n1(height)}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12">`,
    el('title', {}, esc(title)),
    el('desc', {}, esc(`Phases: ${plan.map((p) => `${p.name} ${p.start}–${p.end} s`).join(', ')}. Status bands: ready green, degraded amber, not_ready red.`)),
    el('rect', { width: WIDTH, height, fill: '#fff' }),
    text({ x: LEFT, y: 22, 'font-size': 14, 'font-weight': 'bold' }, title),
    el('g', { id: 'phases' }, phases.join('')),
    ...bands,
    chart,
    axis,
    legend,
    '</svg>',
    '',
  ].join('\n');
}

/**
 * The `time-axis` group: a line at `y` from `left` to `right`, a tick and a label every 2 s (5 s
 * for stories over 20 s); `label` (e.g. 'time (s)') under the ticks when given.
 */
export function timeAxis({ x, total, y, left, right, label }) {
  const step = total <= 20 ? 2 : 5;
  const ticks = [];
  for (let t = 0; t <= total + 1e-9; t += step) {
    ticks.push(el('line', { x1: x(t), x2: x(t), y1: y, y2: y + 5, stroke: '#444' }) + text({ x: x(t), y: y + 18, 'text-anchor': 'middle', 'font-size': 11 }, `${t} s`));
  }
  const title = label ? text({ class: 'axis-label', x: (left + right) / 2, y: y + 34, 'text-anchor': 'middle', 'font-size': 11 }, label) : '';
  return el('g', { id: 'time-axis' }, el('line', { x1: left, x2: right, y1: y, y2: y, stroke: '#444' }) + ticks.join('') + title);
}

/** The `legend` group: `items` ({ mark(x, y), label }) in rows from `left` to `right`, starting at `y`. */
export function legendRows(items, { left, right, y }) {
  let lx = left;
  let ly = y;
  return el('g', { id: 'legend', 'font-size': 11 }, items.map((item) => {
    const width = 26 + item.label.length * 6.6;
    if (lx + width > right) [lx, ly] = [left, ly + 18]; // next row
    const out = item.mark(lx, ly) + text({ x: lx + 18, y: ly }, item.label);
    lx += width;
    return out;
  }).join(''));
}
