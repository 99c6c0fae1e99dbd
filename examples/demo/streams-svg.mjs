// The streams panel of demo-timeline.svg: the phase in which one node serves streamed answers
// through reservations, on its own time scale (the phase across the whole width). Above the chart,
// a mark per answer cut short (its extend refused) and per answer refused at reserve, coloured by
// reason; in it, the node's exposure against its budget, the part of it that open reservations
// hold (shaded), the units refunded and the overage so far, and the line the exposure stays
// under: node budget + overage so far. Stable ids: streams-panel, streams-cut, streams-refused,
// streams-chart, streams-held, streams-exposure, streams-refunded, streams-overage,
// streams-budget, streams-bound, streams-time-axis. Built with ./svg.mjs's helpers.
import { budgetLine, el, fillOf, lineMark, n1, text, timeAxis, unitsAxis } from './svg.mjs';

const STROKE = { exposure: '#1f6fd1', refunded: '#2e9d4f', overage: '#e67e22', bound: '#d64541' };
const HELD_FILL = '#b9d3f2';
const CHART_HEIGHT = 170;
const MARKS = 26; // the two rows of marks above the chart

/**
 * `name` the node; `phase` { name, start, end }; `budget` its node budget; `streamed` what
 * startStreams().stop() returned. A `panel` for renderTimeline.
 */
export function streamsPanel({ name, phase, budget, streamed }) {
  const { series, cuts, refusals, tally } = streamed;
  return ({ top, left, right }) => {
    const x = (t) => left + ((Math.min(Math.max(t, phase.start), phase.end) - phase.start) / (phase.end - phase.start)) * (right - left);
    const marksTop = top + 24;
    const chartTop = marksTop + MARKS + 8;
    const bottom = chartTop + CHART_HEIGHT;
    const yMax = Math.max(budget * 1.2, ...series.map((s) => Math.max(s.exposure, budget + s.overage) * 1.05));
    const y = (u) => bottom - (u / yMax) * CHART_HEIGHT;
    const at = (s, units) => `${n1(x(s.t))},${n1(y(units))}`;
    const line = (id, units, stroke, extra = {}) =>
      el('polyline', { id, class: 'streams-line', fill: 'none', stroke, 'stroke-width': 1.8, points: series.map((s) => at(s, units(s))).join(' '), ...extra });
    const rowLabel = (yy, s) => text({ x: left - 8, y: yy, 'text-anchor': 'end', 'font-size': 9, fill: '#555' }, s);
    const marks = (events, yy, width) => events.map((e) =>
      el('rect', { class: 'streams-mark', 'data-reason': e.reason, x: x(e.t) - width / 2, y: yy, width, height: 8, fill: fillOf('not_ready', e.reason) }));
    const held = [`${n1(x(series[0].t))},${n1(y(0))}`, ...series.map((s) => at(s, s.held)), `${n1(x(series.at(-1).t))},${n1(y(0))}`].join(' ');

    const svg = el('g', { id: 'streams-panel' }, [
      text({ x: left, y: top + 12, 'font-weight': 'bold' }, `${phase.name} ${phase.start}–${phase.end} s, stretched: ${name} streams answers through reservations, the authority silent`),
      el('g', { id: 'streams-cut' }, rowLabel(marksTop + 7, `cut short (${cuts.length})`) + marks(cuts, marksTop, 2.4).join('')),
      el('g', { id: 'streams-refused' }, rowLabel(marksTop + 19, `refused (${refusals.length})`) + marks(refusals, marksTop + 12, 1.4).join('')),
      el('g', { id: 'streams-chart' }, [
        unitsAxis({ budget, y, top: chartTop, bottom, left, right, label: `${name} units` }),
        el('polygon', { id: 'streams-held', fill: HELD_FILL, points: held }),
        budgetLine({ id: 'streams-budget', budget, y, left, right, label: `node budget: ${budget} units` }),
        line('streams-refunded', (s) => s.refunded, STROKE.refunded),
        line('streams-overage', (s) => s.overage, STROKE.overage),
        line('streams-exposure', (s) => s.exposure, STROKE.exposure, { 'stroke-width': 2.2 }),
        // on top: where the exposure reaches it, the dots show on the exposure's line
        line('streams-bound', (s) => budget + s.overage, STROKE.bound, { 'stroke-width': 1.4, 'stroke-dasharray': '2 3' }),
      ].join('')),
      timeAxis({ x, from: phase.start, total: phase.end, y: bottom, left, right, label: 'story time (s)', minorStep: 0.5, id: 'streams-time-axis' }),
    ].join(''));

    const legend = [
      { mark: lineMark(STROKE.exposure), label: `${name} exposure (streams)` },
      { mark: (lx, ly) => el('rect', { x: lx, y: ly - 9, width: 14, height: 10, fill: HELD_FILL }), label: 'held by open reservations' },
      { mark: lineMark(STROKE.refunded), label: `refunded so far (${tally.refunded} units)` },
      { mark: lineMark(STROKE.overage), label: `overage so far (${tally.overage} units)` },
      { mark: lineMark(STROKE.bound, '2 3'), label: 'node budget + overage so far' },
      { mark: (lx, ly) => el('rect', { x: lx + 6, y: ly - 10, width: 2.4, height: 9, fill: fillOf('not_ready', 'budget_exhausted') }), label: 'answer cut short (extend refused), coloured by reason' },
    ];
    const desc = `Phase ${phase.name}, stretched: ${name}'s streamed answers (cut short ${cuts.length}, refused ${refusals.length}), its exposure, the units held by open reservations, refunded ${tally.refunded} and overage ${tally.overage} so far, against the node budget.`;
    return { svg, bottom, legend, desc };
  };
}
