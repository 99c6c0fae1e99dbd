// `readiness()` is added to the addon's `Sentinel` class in JavaScript (js/readiness.js: one native
// call, the object built here), so its typing is added here, by declaration merging with the
// generated class.
import type { Readiness } from '../binding';

declare module '../binding' {
  interface Sentinel {
    /** Readiness now (README, Readiness): no I/O, never waits on a refresh. */
    readiness(): Readiness;
  }
}
