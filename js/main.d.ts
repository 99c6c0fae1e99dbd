export { Sentinel, nativeNoop, computeBudget } from '../index';
export type * from '../index';
export { CircuitBreaker, CircuitOpenError } from './breaker';
export type { CircuitBreakerOptions, CircuitBreakerState, CircuitBreakerStateChange, CircuitBreakerStats } from './breaker';
