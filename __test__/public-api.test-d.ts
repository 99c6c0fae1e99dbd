// Compile-time checks that the public typings expose the public API only: binding.d.ts (generated
// by napi build) also declares internals, which js/main.d.ts must not re-export. Each
// `// @ts-expect-error` must be an error (else TS2578 fails tsc).
// @ts-expect-error internal: the benchmarks' baseline (bench/ requires ../binding.js)
import { nativeNoop } from 'spend-sentinel';
// @ts-expect-error internal: the native half of CircuitBreaker
import type { BreakerCore } from 'spend-sentinel';
// @ts-expect-error internal: which binding the generated loader loaded
import { __napiBindingTarget } from 'spend-sentinel';
// @ts-expect-error internal: the native calls of js/reservation.js
import { reservationFunctions } from 'spend-sentinel';
import { Sentinel, computeBudget, CircuitBreaker, CircuitOpenError, Reservation } from 'spend-sentinel';
import type { SentinelOptions, Readiness, ReadinessReason, TransitionEvent, FleetReadout, FleetRedisError, CircuitBreakerStats } from 'spend-sentinel';
// The option interfaces (js/option-types.d.ts, generated from the option schema), by name.
import type {
  BudgetOptions,
  FleetOptions,
  FleetTlsOptions,
  RefreshOptions,
  RefreshBreakerOptions,
  HttpAuthorityOptions,
  InspectAuthorityOptions,
  SentinelLogger,
  SentinelOverrides,
  WhenReadyOptions,
  MetricsOptions,
  CircuitBreakerOptions,
} from 'spend-sentinel';
// The framework helpers import by name, as Node's ESM loader allows (see pack-install.spec.mjs).
import { admission, gracefulShutdown } from 'spend-sentinel/fastify';

export type Used = [SentinelOptions, Readiness, ReadinessReason, TransitionEvent, FleetReadout, FleetRedisError, CircuitBreakerStats, BreakerCore];
// fleet().redisError names one of these kinds, or is null after a success.
export const redisError: FleetReadout['redisError'][] = ['connect', 'timeout', 'tls', 'auth', 'noperm', 'response', 'malformed', null];
export type Options = [
  BudgetOptions,
  FleetOptions,
  FleetTlsOptions,
  RefreshOptions,
  RefreshBreakerOptions,
  HttpAuthorityOptions,
  InspectAuthorityOptions,
  SentinelLogger,
  WhenReadyOptions,
  MetricsOptions,
  CircuitBreakerOptions,
];

// The methods take these very interfaces.
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
export const sameOptions: [
  Equals<ConstructorParameters<typeof Sentinel>[0], SentinelOptions>,
  Equals<Parameters<typeof computeBudget>[0], BudgetOptions>,
  Equals<Parameters<Sentinel['whenReady']>[0], WhenReadyOptions | undefined>,
  Equals<Parameters<Sentinel['metrics']>[0], MetricsOptions | undefined>,
  Equals<NonNullable<ConstructorParameters<typeof CircuitBreaker<string>>[0]>, CircuitBreakerOptions<string>>,
  Equals<NonNullable<SentinelOptions['refresh']>['breaker'], boolean | RefreshBreakerOptions | undefined>,
  Equals<Parameters<typeof Sentinel.fromEnv>[1], SentinelOverrides | undefined>,
] = [true, true, true, true, true, true, true];
export const used = [nativeNoop, __napiBindingTarget, reservationFunctions, Sentinel, computeBudget, CircuitBreaker, CircuitOpenError, Reservation, admission, gracefulShutdown];
