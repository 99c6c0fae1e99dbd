// Compile-time checks of the CircuitBreaker typings, as the README uses them. Each
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
