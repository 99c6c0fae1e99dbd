'use strict';
// How late the event loop runs, for /live. A timer ticks every `tickMs`; each tick records how
// late it fired. The answer is the worst lateness over the last complete sampling interval, the
// current one, and the tick that is overdue right now (so a probe answered just after a block,
// before the next tick, already sees it).
//
// Why not perf_hooks.monitorEventLoopDelay: its reset() also forgets the previous tick's time,
// so a block that starts or ends next to a sampling reset is never recorded (the probe tests
// found blocks of any length missed that way). Lateness measured against our own last tick has
// no such gap; it is read with perf_hooks' monotonic clock.

const { performance } = require('node:perf_hooks');

/** The rule, with time passed in (milliseconds on a monotonic clock), so tests drive it. */
class LoopDelayWindow {
  constructor({ tickMs, sampleMs }, now) {
    this.tickMs = tickMs;
    this.sampleMs = sampleMs;
    this.lastTick = now;
    this.intervalStart = now;
    this.currentMax = 0;
    this.previousMax = 0;
  }

  /** A tick fired at `now`: record its lateness, then close the interval if it is over. */
  tick(now) {
    this.currentMax = Math.max(this.currentMax, this.overdue(now));
    this.lastTick = now;
    if (now - this.intervalStart >= this.sampleMs) {
      this.previousMax = this.currentMax;
      this.currentMax = 0;
      this.intervalStart = now;
    }
  }

  /** Milliseconds the loop ran late, as of `now` (0 when healthy). */
  delayAt(now) {
    return Math.max(0, this.previousMax, this.currentMax, this.overdue(now));
  }

  overdue(now) {
    return now - this.lastTick - this.tickMs;
  }
}

/**
 * Tick period: a tenth of the limit, between 10 and 100 ms. Lateness is measured to within one
 * tick, so this keeps the error ≤ 10% of the limit with at most 100 wake-ups a second.
 */
function tickPeriodFor(maxDelayMs) {
  return Math.min(100, Math.max(10, Math.floor(maxDelayMs / 10)));
}

/** Starts the ticking (unref'd: it never keeps the process alive). */
function startLoopDelayMonitor({ maxDelayMs, sampleMs }) {
  const window = new LoopDelayWindow({ tickMs: tickPeriodFor(maxDelayMs), sampleMs }, performance.now());
  const timer = setInterval(() => window.tick(performance.now()), window.tickMs);
  timer.unref();
  return {
    delayMs: () => window.delayAt(performance.now()),
    stop: () => clearInterval(timer),
  };
}

module.exports = { LoopDelayWindow, tickPeriodFor, startLoopDelayMonitor };
