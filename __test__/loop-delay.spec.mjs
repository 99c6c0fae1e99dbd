// The /live event-loop delay rule (js/loop-delay.js) with a fake clock: time is passed in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const { LoopDelayWindow, tickPeriodFor } = createRequire(import.meta.url)('../js/loop-delay.js');

const TICK = 10;
const SAMPLE = 100;

/** A window created at t = 0 and ticked on time up to `until` (inclusive). */
function healthyUntil(until) {
  const w = new LoopDelayWindow({ tickMs: TICK, sampleMs: SAMPLE }, 0);
  for (let t = TICK; t <= until; t += TICK) w.tick(t);
  return w;
}

test('ticks on time report no delay', () => {
  const w = healthyUntil(1000);
  assert.equal(w.delayAt(1000), 0);
  assert.equal(w.delayAt(1005), 0, 'between two ticks nothing is overdue yet');
});

test('a tick that is overdue right now counts before it fires (a probe answered just after a block)', () => {
  const w = healthyUntil(500);
  assert.equal(w.delayAt(500 + TICK + 700), 700);
});

test('a late tick stays visible through the whole next interval, then is forgotten', () => {
  const w = healthyUntil(500); // interval boundary at 500
  w.tick(1210); // due at 510: 700 ms late; this tick also closes the interval (1210 - 500 ≥ 100)
  assert.equal(w.delayAt(1210), 700);
  let t = 1210;
  for (; t < 1210 + SAMPLE - TICK; t += TICK) {
    w.tick(t + TICK);
    assert.equal(w.delayAt(t + TICK), 700, `still reported at ${t + TICK}`);
  }
  for (let i = 0; i < 3; i++) {
    t += TICK;
    w.tick(t);
  }
  assert.equal(w.delayAt(t), 0, 'gone once a whole healthy interval has passed');
});

test('a block right after an interval boundary is measured (the monitorEventLoopDelay reset gap)', () => {
  const w = healthyUntil(200); // the tick at 200 closed an interval
  w.tick(200 + TICK + 700);
  assert.equal(w.delayAt(200 + TICK + 700), 700);
});

test('a block right after creation is measured', () => {
  const w = new LoopDelayWindow({ tickMs: TICK, sampleMs: SAMPLE }, 0);
  w.tick(TICK + 300);
  assert.equal(w.delayAt(TICK + 300), 300);
});

test('the tick period is a tenth of the limit, kept within 10..100 ms', () => {
  assert.equal(tickPeriodFor(1000), 100);
  assert.equal(tickPeriodFor(200), 20);
  assert.equal(tickPeriodFor(50), 10);
  assert.equal(tickPeriodFor(60_000), 100);
});
