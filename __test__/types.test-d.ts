// Compile-time checks of the public typings (binding.d.ts). Run:
//   npx tsc -p __test__/tsconfig.json --noEmit
// Every `// @ts-expect-error` line must be an error; if the typings are too loose the directive is
// unused and tsc fails with TS2578.
import { Sentinel } from '../binding.js';
// `reserve` is added to the class in JavaScript; its typing comes with the entry's (js/reservation.d.ts).
import { Reservation } from 'spend-sentinel';

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

type Options = ConstructorParameters<typeof Sentinel>[0];
type Readiness = ReturnType<Sentinel['readiness']>;
type Status = Readiness['status'];
type Reason = Readiness['reason'];
type Listener = Parameters<Sentinel['onTransition']>[0];
type TransitionEvent = Parameters<Listener>[0];

// ---- status and reason are exactly the readiness table's string unions (plus internal_error) ------
const statusIsExact: Equals<Status, 'ready' | 'degraded' | 'not_ready'> = true;
const reasonIsExact: Equals<
  Reason,
  | 'shutting_down'
  | 'invalid_credential'
  | 'capability_missing'
  | 'no_evidence'
  | 'evidence_too_old'
  | 'budget_exhausted'
  | 'refresh_indeterminate'
  | 'verified'
  | 'no_fleet_lease'
  | 'internal_error'
  | 'held'
> = true;
const statusMethodIsExact: Equals<ReturnType<Sentinel['status']>, Status> = true;
const eventStatusIsExact: Equals<TransitionEvent['from'] | TransitionEvent['to'], Status> = true;
const eventReasonIsExact: Equals<TransitionEvent['reason'], Reason> = true;

const ready: Status = 'ready';
const degraded: Status = 'degraded';
const notReady: Status = 'not_ready';
// @ts-expect-error not a status
const healthy: Status = 'healthy';
// @ts-expect-error statuses are snake_case strings
const camel: Status = 'notReady';
// @ts-expect-error not a reason
const timeoutReason: Reason = 'timeout';

function describeReason(reason: Reason): string {
  switch (reason) {
    case 'shutting_down':
    case 'internal_error':
    case 'invalid_credential':
    case 'capability_missing':
    case 'no_evidence':
    case 'no_fleet_lease':
    case 'evidence_too_old':
    case 'held':
      return 'not ready';
    case 'budget_exhausted':
    case 'refresh_indeterminate':
      return 'degraded';
    case 'verified':
      return 'ready';
    default: {
      const unreachable: never = reason;
      return unreachable;
    }
  }
}

// ---- options ---------------------------------------------------------------------------------------
/** An inspect function whose type does not rely on contextual typing (used where that is not the point). */
const answerValid = async (): Promise<'valid'> => 'valid';

// The natural form (docs/api.md, Options: authority.inspect), "an async JavaScript function returning one of the four outcome
// strings", must compile as written:
const inspectOptions: Options = {
  budget: { unverifiedUnits: 200, maxUnitsPerSecond: 20, nodes: 2, maxStaleSeconds: 5 },
  refresh: { minIntervalMs: 1500, maxIntervalMs: 2500, timeoutMs: 2000 },
  authority: { inspect: async () => 'valid' },
};
const everyOutcome: Options['authority'][] = [
  { inspect: async () => 'valid' },
  { inspect: async () => 'invalid_credential' },
  { inspect: async () => 'capability_missing' },
  { inspect: async () => 'indeterminate' },
];
const httpOptions: Options = {
  budget: { unverifiedUnits: 200, maxUnitsPerSecond: 20, share: 0.25 },
  authority: {
    url: 'https://accounts.example.com/v1/account',
    credentialEnv: 'ACCOUNT_API_KEY',
    requiredCapabilities: ['metered-api', 'gpu'],
    capabilitiesPointer: '/plan/capabilities',
    header: 'x-api-key',
    scheme: '',
    allowInsecureHttp: false,
    caPem: '-----BEGIN CERTIFICATE-----\n...\n-----END CERTIFICATE-----\n',
  },
};
const minimalHttp: Options = {
  budget: { unverifiedUnits: 1000, maxUnitsPerSecond: 100 },
  authority: { url: 'https://accounts.example.com/v1/account', credential: 'secret', requiredCapability: 'metered-api' },
};

const badUnits: Options = {
  // @ts-expect-error unverifiedUnits is a number
  budget: { unverifiedUnits: '200', maxUnitsPerSecond: 20 },
  authority: { inspect: answerValid },
};
const badTimeout: Options = {
  budget: { unverifiedUnits: 200, maxUnitsPerSecond: 20 },
  // @ts-expect-error timeoutMs is a number
  refresh: { timeoutMs: '2000' },
  authority: { inspect: answerValid },
};
const badInsecure: Options = {
  budget: { unverifiedUnits: 200, maxUnitsPerSecond: 20 },
  authority: {
    url: 'http://127.0.0.1:8080/',
    credential: 'secret',
    requiredCapability: 'metered-api',
    // @ts-expect-error allowInsecureHttp is a boolean
    allowInsecureHttp: 'yes',
  },
};
const badCapabilities: Options = {
  budget: { unverifiedUnits: 200, maxUnitsPerSecond: 20 },
  authority: {
    url: 'https://accounts.example.com/v1/account',
    credential: 'secret',
    // @ts-expect-error requiredCapabilities is a string array
    requiredCapabilities: [1, 2],
  },
};
const badOutcome: Options = {
  budget: { unverifiedUnits: 200, maxUnitsPerSecond: 20 },
  // @ts-expect-error inspect must resolve to one of the four outcomes
  authority: { inspect: async () => 'ok' },
};
const unknownKey: Options = {
  budget: { unverifiedUnits: 200, maxUnitsPerSecond: 20 },
  authority: { inspect: answerValid },
  // @ts-expect-error unknown option
  retries: 3,
};
// @ts-expect-error budget is required
const noBudget: Options = { authority: { inspect: answerValid } };
// @ts-expect-error options are required
new Sentinel();

// ---- Sentinel.fromEnv: variables are strings; overrides are any part of the options -------------
function fromTheEnvironment(): Sentinel[] {
  return [
    Sentinel.fromEnv(),
    Sentinel.fromEnv(process.env),
    Sentinel.fromEnv({ SPEND_SENTINEL_BUDGET_NODES: '2', UNSET: undefined }),
    Sentinel.fromEnv(process.env, { budget: { maxUnitsPerSecond: 50 } }),
    Sentinel.fromEnv(process.env, { authority: { inspect: answerValid }, logger: console }),
    Sentinel.fromEnv(process.env, { refresh: { breaker: { openMs: 500 } }, budget: { fleet: { maxNodes: 25 } } }),
    // @ts-expect-error a variable's value is a string
    Sentinel.fromEnv({ SPEND_SENTINEL_BUDGET_NODES: 2 }),
    // @ts-expect-error overrides are options: no unknown key
    Sentinel.fromEnv(process.env, { retries: 3 }),
    // @ts-expect-error an override has the option's type
    Sentinel.fromEnv(process.env, { budget: { nodes: '2' } }),
    // @ts-expect-error inspect is a function, also as an override
    Sentinel.fromEnv(process.env, { authority: { inspect: 'valid' } }),
  ];
}

// ---- instance API ---------------------------------------------------------------------------------
function useSentinel(sentinel: Sentinel): void {
  const admitted: boolean = sentinel.admit();
  const admittedMany: boolean = sentinel.admit(2.5);
  // @ts-expect-error units is a number
  sentinel.admit('1');

  // A hold answers the function that releases it.
  const release: () => void = sentinel.hold('warming-cache');
  release();
  // @ts-expect-error a hold has a name
  sentinel.hold();
  // @ts-expect-error the name is a string
  sentinel.hold(1);

  const r: Readiness = sentinel.readiness();
  const status: Status = r.status;
  const reason: Reason = r.reason;
  const age: number | null = r.evidenceAgeSeconds;
  // @ts-expect-error the age is null before the first valid refresh
  const ageNumber: number = r.evidenceAgeSeconds;
  const httpStatus: number = r.httpStatus;
  // @ts-expect-error no such status, so this comparison can never be true
  if (r.status === 'readyy') describeReason(r.reason);

  const cheap: Status = sentinel.status();
  const ledger: number = sentinel.exposureUnits;
  const nodeBudget: number = sentinel.nodeBudgetUnits;
  const window: number = sentinel.staleWindowSeconds;
  // @ts-expect-error read-outs are read-only
  sentinel.exposureUnits = 0;

  const waiting: Promise<Readiness> = sentinel.whenReady({ timeoutMs: 1000 });
  // @ts-expect-error timeoutMs is a number
  sentinel.whenReady({ timeoutMs: '1000' });

  const remove: () => void = sentinel.onTransition((event) => {
    const from: Status = event.from;
    const to: Status = event.to;
    const why: Reason = event.reason;
    const eventAge: number | null = event.evidenceAgeSeconds;
    // @ts-expect-error a transition has no credential field
    event.credential;
  });
  remove();

  useReservations(sentinel);
  sentinel.drain();
  sentinel.close();
}

// ---- reservations -------------------------------------------------------------------------------
function useReservations(sentinel: Sentinel): void {
  const maybe: Reservation | null = sentinel.reserve(5);
  const one: Reservation | null = sentinel.reserve();
  // @ts-expect-error reserve refuses with null, as admit with false
  const sure: Reservation = sentinel.reserve(5);
  // @ts-expect-error units is a number
  sentinel.reserve('5');
  const reserved: number = sentinel.reservedUnits;
  // @ts-expect-error read-outs are read-only
  sentinel.reservedUnits = 0;
  sentinel.charge(2.5);
  // @ts-expect-error charge records work already done: units is required
  sentinel.charge();
  // @ts-expect-error charge answers nothing
  const charged: boolean = sentinel.charge(1);

  if (maybe !== null) {
    const extended: boolean = maybe.extend(10);
    const extendedByOne: boolean = maybe.extend();
    const held: number = maybe.heldUnits;
    const settled: boolean = maybe.settled;
    const recordedUnits: number = maybe.recordedUnits;
    const recordIsExact: Equals<typeof maybe.record, (units: number) => void> = true;
    maybe.record(2);
    maybe.record(0.5);
    // @ts-expect-error units is required: record reports work already produced
    maybe.record();
    // @ts-expect-error units is a number
    maybe.record('2');
    // @ts-expect-error record answers nothing
    const recorded: boolean = maybe.record(1);
    // @ts-expect-error read-outs are read-only
    maybe.heldUnits = 0;
    // @ts-expect-error read-outs are read-only
    maybe.recordedUnits = 0;
    // @ts-expect-error actualUnits is required
    maybe.settle();
    // @ts-expect-error actualUnits is a number
    maybe.settle('3');
    maybe.settle(3);
    maybe.release();
  }
  const found: unknown = one;
  if (found instanceof Reservation) found.release();
  // @ts-expect-error only sentinel.reserve() makes one
  new Reservation();
}

export {
  statusIsExact, reasonIsExact, statusMethodIsExact, eventStatusIsExact, eventReasonIsExact,
  ready, degraded, notReady, healthy, camel, timeoutReason, describeReason,
  inspectOptions, everyOutcome, httpOptions, minimalHttp,
  badUnits, badTimeout, badInsecure, badCapabilities, badOutcome, unknownKey, noBudget, useSentinel,
  fromTheEnvironment,
};
