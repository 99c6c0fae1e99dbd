// The streams panel of demo-timeline.svg: the phase in which one node serves streamed answers
// through reservations, on its own time scale (the phase across the whole width). Above the chart,
// a mark per answer cut short (its extend refused) and per answer refused at reserve, coloured by
// reason; in it, the node's exposure against its budget as two stacked areas, the recorded part
// (what the answers reported as produced, and settled: a valid answer would clear it) under the
// part open reservations hold (what they may still produce), topped by the exposure's line; the
// units refunded and the overage so far, and the line the exposure stays under: node budget +
// overage so far. Stable ids: streams-panel, streams-cut, streams-refused, streams-chart,
// streams-recorded, streams-held, streams-exposure, streams-refunded, streams-overage,
// streams-budget, streams-bound, streams-time-axis. Built with ./svg.mjs's helpers.
import { budgetLine, el, fillOf, lineMark, n1, swatch, text, timeAxis, unitsAxis } from './svg.mjs';

const STROKE = { exposure: '#1f6fd1', refunded: '#2e9d4f', overage: '#e67e22', bound: '#d64541' };
const FILL = { recorded: '#c9d3df', held: '#7cc4ba' };
const CHART_HEIGHT = 170;
const MARKS = 26; // the two rows of marks above the chart

/**
 * `name` the node; `phase` { name, start, end }; `budget` its node budget; `streamed` what
 * startStreams().stop() returned. A `panel` for renderTimeline.
 */
export function streamsPanel({ name, phase, budget, streamed }) {
  const { series, cuts, refusals, tally } = streamed;
  const peak = (key) => Math.max(...series.map((s) => s[key]));
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
    // The stack: recorded from 0, held on top of it (up to the exposure); each area is its upper
    // edge left to right, then its lower edge back.
    const area = (id, fill, lower, upper) => el('polygon', {
      id, class: 'streams-area', fill,
      points: [...series.map((s) => at(s, upper(s))), ...series.toReversed().map((s) => at(s, lower(s)))].join(' '),
    });
    /** The held area's edges at `px` (between readings, as the polygon draws them): [lower y, upper y]. */
    const heldEdges = (px) => {
      const next = series.findIndex((s) => x(s.t) >= px); // -1: past the last reading
      const i = next < 0 ? series.length - 1 : Math.max(1, next);
      const [a, b] = [series[i - 1] ?? series[0], series[i] ?? series[0]];
      const f = x(b.t) > x(a.t) ? Math.min(1, Math.max(0, (px - x(a.t)) / (x(b.t) - x(a.t)))) : 0;
      const mix = (u) => y(u(a) + f * (u(b) - u(a)));
      return [mix((s) => s.recorded), mix((s) => s.recorded + s.held)];
    };
    /** Where a label `width` px wide has the most room inside the held area: { x, y, room }. */
    const heldSpot = (width) => series.reduce((best, s) => {
      const edges = [-width / 2, -width / 4, 0, width / 4, width / 2].map((dx) => heldEdges(x(s.t) + dx));
      const [floor, ceiling] = [Math.min(...edges.map((e) => e[0])), Math.max(...edges.map((e) => e[1]))];
      return floor - ceiling > best.room ? { x: x(s.t), y: (floor + ceiling) / 2 + 4, room: floor - ceiling } : best;
    }, { room: 0 });
    /** Each area named in it: recorded where the phase ends, held where it has room (if anywhere). */
    const areaLabels = () => {
      const recorded = `recorded ${series.at(-1).recorded}: the authority silent, nothing clears it`;
      const [mid, half] = [(left + 3 * right) / 4, recorded.length * 3.3]; // ~6.6 px a character
      const under = Math.min(series.at(-1).recorded, ...series.filter((s) => Math.abs(x(s.t) - mid) <= half).map((s) => s.recorded));
      const held = heldSpot(26);
      const label = (a, s) => text({ class: 'streams-area-label', 'text-anchor': 'middle', 'font-size': 11, fill: '#333', ...a }, s);
      return [
        y(0) - y(under) > 30 ? label({ x: mid, y: (y(0) + y(under)) / 2 + 4 }, recorded) : '',
        held.room >= 13 ? label({ x: held.x, y: held.y }, 'held') : '',
      ].join('');
    };

    const svg = el('g', { id: 'streams-panel' }, [
      text({ x: left, y: top + 12, 'font-weight': 'bold' }, `${phase.name} ${phase.start}–${phase.end} s, stretched: ${name} streams answers through reservations, the authority silent`),
      el('g', { id: 'streams-cut' }, rowLabel(marksTop + 7, `cut short (${cuts.length})`) + marks(cuts, marksTop, 2.4).join('')),
      el('g', { id: 'streams-refused' }, rowLabel(marksTop + 19, `refused (${refusals.length})`) + marks(refusals, marksTop + 12, 1.4).join('')),
      el('g', { id: 'streams-chart' }, [
        unitsAxis({ budget, y, top: chartTop, bottom, left, right, label: `${name} units` }),
        area('streams-recorded', FILL.recorded, () => 0, (s) => s.recorded),
        area('streams-held', FILL.held, (s) => s.recorded, (s) => s.recorded + s.held),
        areaLabels(),
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
      { mark: swatch(FILL.recorded), label: `recorded as produced or at settle (peak ${peak('recorded')} units)` },
      { mark: swatch(FILL.held), label: `held by open reservations (peak ${peak('held')} units)` },
      { mark: lineMark(STROKE.refunded), label: `refunded so far (${tally.refunded} units)` },
      { mark: lineMark(STROKE.overage), label: `overage so far (${tally.overage} units)` },
      { mark: lineMark(STROKE.bound, '2 3'), label: 'node budget + overage so far' },
      { mark: (lx, ly) => el('rect', { x: lx + 6, y: ly - 10, width: 2.4, height: 9, fill: fillOf('not_ready', 'budget_exhausted') }), label: 'answer cut short (extend refused), coloured by reason' },
    ];
    const desc = `Phase ${phase.name}, stretched: ${name}'s streamed answers (cut short ${cuts.length}, refused ${refusals.length}), its exposure stacked as the units recorded (${tally.byRecord} as produced, ${tally.atSettle} at the close) under the units held by open reservations, refunded ${tally.refunded} and overage ${tally.overage} so far, against the node budget.`;
    return { svg, bottom, legend, desc };
  };
}
