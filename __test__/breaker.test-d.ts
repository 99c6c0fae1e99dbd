// Compile-time checks of the CircuitBreaker typings, as docs/circuit-breaker.md uses them. Each
// `// @ts-expect-error` must be an error (else TS2578 fails tsc).
import { CircuitBreaker, CircuitOpenError, Sentinel } from 'spend-sentinel';
import type { CircuitBreakerState, CircuitBreakerStats } from 'spend-sentinel';

const breaker = new CircuitBreaker({ name: 'billing', failureThreshold: 0, timeoutMs: 2000, isFailure: (e) => !(e instanceof TypeError) });
const state: CircuitBreakerState = breaker.state;
const stats: CircuitBreakerStats = breaker.stats;
const remove: () => void = breaker.onStateChange(({ name, from, to }) => void [name, from, to]);
remove();

async function use(): Promise<number> {
  const doubled: number = await breaker.fire(async (x: number, { signal }) => (signal.aborted ? 0 : x * 2), 21);
  try {
    await breaker.fire(async () => 'ok');
  } catch (err) {
    if (err instanceof CircuitOpenError) return err.retryAfterMs;
  }
  // @ts-expect-error the argument must match fn's parameter
  await breaker.fire(async (x: number) => x, 'not a number');
  return doubled;
}
void use;
void [state, stats, Sentinel];
// @ts-expect-error options are checked
new CircuitBreaker({ failureThreshold: 'five' });

// fallback widens what fire resolves with; fireWith takes the caller's signal; the error classes.
import { BulkheadFullError, CircuitTimeoutError } from 'spend-sentinel';
import type { FallbackInfo } from 'spend-sentinel';
const withFallback = new CircuitBreaker({ maxConcurrent: 10, fallback: (info: FallbackInfo) => (info.reason === 'open' ? null : null) });
async function useMore(signal: AbortSignal): Promise<void> {
  const maybe: number | null = await withFallback.fire(async () => 1);
  const viaSignal: string | null = await withFallback.fireWith({ signal }, async (id: string, { signal: s }) => (s.aborted ? '' : id), 'x');
  const retryAt: number | null = withFallback.retryAt;
  const rejected: number = withFallback.stats.rejected;
  try {
    await breaker.fire(async () => 1);
  } catch (err) {
    if (err instanceof CircuitTimeoutError) void err.timeoutMs;
    if (err instanceof BulkheadFullError) void err.maxConcurrent;
  }
  // @ts-expect-error without a fallback, fire resolves with fn's result only
  const wrong: null = await breaker.fire(async () => 1);
  void [maybe, viaSignal, retryAt, rejected, wrong];
}
void useMore;
// @ts-expect-error maxConcurrent is a number
new CircuitBreaker({ maxConcurrent: '3' });
