//! Every option, once: the parser reads its keys, types, ranges, limits and defaults from here,
//! and `js/option-types.d.ts` and the option tables of docs/ are generated from it
//! (`SPEND_SENTINEL_BLESS=1 cargo test --lib options::docs`; without the variable that test fails
//! when they disagree).
//!
//! Texts are Markdown: `doc` says what an option is for, `rule` what a valid value is beyond its
//! type, range and length (which the renderers add). A rule that relates two options is checked
//! by code in `crate::config`, but stated here.

use super::limits;
use super::schema::{Default, Group, Keys, Kind, Opt, Range};

/// The base of every entry below: optional, no default value, nothing more to say.
const OPT: Opt = Opt {
    key: "",
    kind: Kind::Boolean,
    default: Default::Text("—"),
    doc: "",
    rule: "",
    none_of: &[],
    secret: false,
};

const GROUP: Group = Group {
    path: "",
    interface: "",
    type_params: "",
    doc: "",
    shared: &[],
    options: &[],
    keys: Keys::Closed,
};

/// Every group, in the order of `js/option-types.d.ts` (read by its generator, a test).
#[cfg(test)]
pub static ALL: &[&Group] = &[
    &SENTINEL,
    &BUDGET,
    &FLEET,
    &FLEET_TLS,
    &REFRESH,
    &REFRESH_BREAKER,
    &HTTP_AUTHORITY,
    &INSPECT_AUTHORITY,
    &LOGGER,
    &WHEN_READY,
    &METRICS,
    &CIRCUIT_BREAKER,
];

/// A documentation table: the options of these groups, in `page` (a path from the repository
/// root) between `<!-- options:begin NAME -->` and `<!-- options:end NAME -->`. An option whose
/// nested groups are all in the same table gets no row of its own. Links in `doc` and `rule` texts
/// are relative to docs/, where every table lives. Read by their generator, a test.
#[cfg(test)]
pub struct DocTable {
    pub name: &'static str,
    pub page: &'static str,
    pub groups: &'static [&'static Group],
    pub rows: Rows,
}

/// What a documentation table lists.
#[cfg(test)]
pub enum Rows {
    /// One row per option: what it is, its default, its rule.
    Options,
    /// One row per environment variable of `Sentinel.fromEnv` (`super::env`), of the groups'
    /// options and the options nested in them.
    Variables,
}

#[cfg(test)]
pub static DOC_TABLES: &[DocTable] = &[
    DocTable {
        name: "sentinel",
        page: "docs/api.md",
        groups: &[
            &BUDGET,
            &REFRESH,
            &SENTINEL,
            &HTTP_AUTHORITY,
            &INSPECT_AUTHORITY,
        ],
        rows: Rows::Options,
    },
    DocTable {
        name: "env",
        page: "docs/api.md",
        groups: &[&SENTINEL],
        rows: Rows::Variables,
    },
    DocTable {
        name: "methods",
        page: "docs/api.md",
        groups: &[&WHEN_READY, &METRICS],
        rows: Rows::Options,
    },
    DocTable {
        name: "fleet",
        page: "docs/fleet.md",
        groups: &[&FLEET, &FLEET_TLS],
        rows: Rows::Options,
    },
    DocTable {
        name: "circuit-breaker",
        page: "docs/circuit-breaker.md",
        groups: &[&CIRCUIT_BREAKER],
        rows: Rows::Options,
    },
    DocTable {
        name: "refresh-breaker",
        page: "docs/circuit-breaker.md",
        groups: &[&REFRESH_BREAKER],
        rows: Rows::Options,
    },
];

// ---- new Sentinel(options) ---------------------------------------------------------------------

pub static SENTINEL: Group = Group {
    interface: "SentinelOptions",
    doc: "Options of `new Sentinel(options)`; every one is validated at construction, and unknown \
          keys are refused.",
    options: &[
        Opt {
            key: "budget",
            kind: Kind::Object(&BUDGET),
            default: Default::Required,
            doc: "The money that sets the stale window",
            ..OPT
        },
        Opt {
            key: "refresh",
            kind: Kind::Object(&REFRESH),
            default: Default::Text("defaults that scale with the window"),
            doc: "The cadence of the background refresh",
            ..OPT
        },
        Opt {
            key: "authority",
            kind: Kind::OneOf(&[&HTTP_AUTHORITY, &INSPECT_AUTHORITY]),
            default: Default::Required,
            doc: "Who says whether the credential is valid: the HTTP adapter or your own `inspect`",
            ..OPT
        },
        Opt {
            key: "logger",
            kind: Kind::Object(&LOGGER),
            default: Default::Text("none"),
            doc: "Receives one line per status change and per refresh that was not `valid` \
                  (codes only)",
            rule: "an object with `info`, `warn`, `error` methods (pino-style); see \
                   [Metrics and logs](metrics.md)",
            ..OPT
        },
    ],
    ..GROUP
};

pub static BUDGET: Group = Group {
    path: "budget",
    interface: "BudgetOptions",
    doc: "`budget`: the money that sets the stale window (README, The budget math).",
    options: &[
        Opt {
            key: "unverifiedUnits",
            kind: Kind::Number(None),
            default: Default::Required,
            doc: "b: the fleet-wide ceiling of units that may be admitted on unverified evidence",
            rule: "finite > 0",
            ..OPT
        },
        Opt {
            key: "maxUnitsPerSecond",
            kind: Kind::Number(None),
            default: Default::Required,
            doc: "r: this node's maximum admission rate, units per second",
            rule: "finite > 0",
            ..OPT
        },
        Opt {
            key: "nodes",
            kind: Kind::Number(None),
            default: Default::Text("1"),
            doc: "Fleet size; each node's share of b is 1 / nodes",
            rule: "a whole number ≥ 1; not with `share` or `fleet`",
            ..OPT
        },
        Opt {
            key: "share",
            kind: Kind::Number(None),
            default: Default::Text("1 / nodes"),
            doc: "This node's fraction of b",
            rule: "0 < share ≤ 1; not with `nodes` or `fleet`",
            ..OPT
        },
        Opt {
            key: "maxStaleSeconds",
            kind: Kind::Number(None),
            default: Default::Text("node budget / r"),
            doc: "Caps the stale window w, seconds: w = min(node budget / r, maxStaleSeconds)",
            rule: "> 0, ≤ node budget / r (a fleet: ≤ (floor + pool) / r), and ≤ 604800 (7 days)",
            ..OPT
        },
        Opt {
            key: "fleet",
            kind: Kind::Object(&FLEET),
            default: Default::Text("none"),
            doc: "Shares b among the nodes alive now, through leases in Redis (see \
                  [A fleet that scales](fleet.md))",
            rule: "not with `nodes` or `share`",
            ..OPT
        },
    ],
    ..GROUP
};

pub static FLEET: Group = Group {
    path: "budget.fleet",
    interface: "FleetOptions",
    doc: "`budget.fleet`: a fleet-wide budget leased from Redis (docs/fleet.md).",
    options: &[
        Opt {
            key: "redis",
            kind: Kind::String {
                max_bytes: limits::URL_BYTES,
            },
            doc: "The Redis URL (user, password and db allowed); never printed",
            rule: "`redis://` or `rediss://` with a host; give this or `redisEnv`",
            secret: true,
            ..OPT
        },
        Opt {
            key: "redisEnv",
            kind: Kind::String {
                max_bytes: limits::ENV_NAME_BYTES,
            },
            doc: "The *name* of an environment variable holding the Redis URL (read once, at \
                  construction; one trailing newline is dropped)",
            rule: "`[A-Za-z_][A-Za-z0-9_]*`, set and not empty; give this or `redis`",
            ..OPT
        },
        Opt {
            key: "name",
            kind: Kind::String {
                max_bytes: limits::FLEET_NAME_BYTES,
            },
            default: Default::Required,
            doc: "The fleet's identity, the same on every node that shares b; every key lives \
                  under the hash tag `{spend-sentinel:<name>}`",
            rule: "1 or more of `A-Z a-z 0-9 _ . : -`",
            ..OPT
        },
        Opt {
            key: "maxNodes",
            kind: Kind::Number(Some(Range {
                min: 1.0,
                min_open: false,
                max: limits::MAX_NODES,
                max_open: false,
                whole: true,
                must: "a whole number from 1 to 10000",
            })),
            default: Default::Required,
            doc: "The most nodes alive at once, surge and terminating pods included",
            ..OPT
        },
        Opt {
            key: "reserve",
            kind: Kind::Number(Some(Range {
                min: 0.0,
                min_open: false,
                max: 1.0,
                max_open: true,
                whole: false,
                must: "at least 0 and less than 1",
            })),
            default: Default::Number(0.25),
            doc: "The part of b kept as static floors (b × reserve / maxNodes each)",
            ..OPT
        },
        Opt {
            key: "leaseSeconds",
            kind: Kind::Number(Some(Range {
                min: 5.0,
                min_open: false,
                max: 600.0,
                max_open: false,
                whole: false,
                must: "from 5 to 600 seconds",
            })),
            default: Default::Number(30.0),
            doc: "How long a grant lives in Redis without renewal",
            ..OPT
        },
        Opt {
            key: "maxSplitSeconds",
            kind: Kind::Number(Some(Range {
                min: 0.0,
                min_open: false,
                max: 120.0,
                max_open: false,
                whole: false,
                must: "from 0 to 120 seconds",
            })),
            // Redis's default `min-replicas-max-lag` (10 s), and the ~2 s Redis takes to notice
            // that its replicas are gone.
            default: Default::Number(12.0),
            doc: "The longest split brain the fleet rides out (two Redis primaries taking writes \
                  after a failover that did not fence the old one): keep Redis's \
                  `min-replicas-max-lag` at most this less 2 s, or use 0 with a fencing \
                  failover. Leases end and holds last this much longer",
            ..OPT
        },
        Opt {
            key: "tls",
            kind: Kind::Object(&FLEET_TLS),
            default: Default::Text("the system's roots, no client certificate"),
            doc: "TLS settings for a `rediss://` URL: a private CA, a client certificate",
            rule: "only with `rediss://`",
            ..OPT
        },
    ],
    ..GROUP
};

pub static FLEET_TLS: Group = Group {
    path: "budget.fleet.tls",
    interface: "FleetTlsOptions",
    doc:
        "`budget.fleet.tls`: PEM strings for a `rediss://` Redis behind a private CA, or one that \
          asks clients for a certificate (`tls-auth-clients yes`).",
    options: &[
        Opt {
            key: "ca",
            kind: Kind::String {
                max_bytes: limits::CA_PEM_BYTES,
            },
            default: Default::Text("the system's roots"),
            doc: "The CA certificates that sign the Redis server's certificate (they replace \
                  the system's roots)",
            rule: "PEM with at least one certificate",
            ..OPT
        },
        Opt {
            key: "cert",
            kind: Kind::String {
                max_bytes: limits::CA_PEM_BYTES,
            },
            doc: "The client certificate (chain) this node presents",
            rule: "PEM; give `cert` and `key` together",
            ..OPT
        },
        Opt {
            key: "key",
            kind: Kind::String {
                max_bytes: limits::PRIVATE_KEY_BYTES,
            },
            doc: "The client certificate's private key; a secret, never printed",
            rule: "PEM (PKCS #8, PKCS #1 or SEC1); give `cert` and `key` together",
            secret: true,
            ..OPT
        },
    ],
    ..GROUP
};

pub static REFRESH: Group = Group {
    path: "refresh",
    interface: "RefreshOptions",
    doc: "`refresh`: cadence of the background refresh (docs/api.md, Options). Defaults scale with the \
          window w (seconds): 300·w, 500·w and min(2000, 400·w) ms.",
    options: &[
        Opt {
            key: "minIntervalMs",
            kind: Kind::Number(None),
            default: Default::Text("300 · w"),
            doc: "The shortest pause between two refreshes, ms",
            rule: "≥ 20 and ≤ `maxIntervalMs`",
            ..OPT
        },
        Opt {
            key: "maxIntervalMs",
            kind: Kind::Number(None),
            default: Default::Text("500 · w"),
            doc: "The longest pause between two refreshes, ms",
            rule: "≥ 0; `maxIntervalMs + timeoutMs` < w × 1000",
            ..OPT
        },
        Opt {
            key: "timeoutMs",
            kind: Kind::Number(None),
            default: Default::Text("min(2000, 400 · w)"),
            doc: "Bounds one whole refresh (connect, headers, body), ms",
            rule: "> 0",
            ..OPT
        },
        Opt {
            key: "breaker",
            kind: Kind::SwitchOrObject(&REFRESH_BREAKER),
            default: Default::Text("none"),
            doc: "Puts the refreshes behind a circuit breaker of their own (see \
                  [The refresh loop behind a breaker](circuit-breaker.md#the-refresh-loop-behind-a-breaker))",
            rule: "`true` (every default) or breaker options",
            ..OPT
        },
    ],
    ..GROUP
};

pub static HTTP_AUTHORITY: Group = Group {
    path: "authority",
    interface: "HttpAuthorityOptions",
    doc: "The built-in HTTP authority adapter (docs/http-adapter.md).",
    options: &[
        Opt {
            key: "url",
            kind: Kind::String {
                max_bytes: limits::URL_BYTES,
            },
            default: Default::Required,
            doc: "The account endpoint the adapter asks",
            rule: "an absolute https URL without `user:password@`; http only with \
                   `allowInsecureHttp: true`",
            ..OPT
        },
        Opt {
            key: "allowInsecureHttp",
            kind: Kind::Boolean,
            default: Default::Bool(false),
            doc: "Allows a plain http URL (tests, sidecars on localhost)",
            ..OPT
        },
        Opt {
            key: "credential",
            kind: Kind::String {
                max_bytes: limits::CREDENTIAL_BYTES,
            },
            doc: "The API credential; never printed",
            rule: "visible ASCII characters (`!` to `~`), not empty; give this or `credentialEnv`",
            secret: true,
            ..OPT
        },
        Opt {
            key: "credentialEnv",
            kind: Kind::String {
                max_bytes: limits::ENV_NAME_BYTES,
            },
            doc: "The *name* of an environment variable holding the credential (read once, at \
                  construction; one trailing newline is dropped)",
            rule: "`[A-Za-z_][A-Za-z0-9_]*`, set and not empty, holding a valid credential; give \
                   this or `credential`",
            ..OPT
        },
        Opt {
            key: "requiredCapability",
            kind: Kind::String {
                max_bytes: limits::CAPABILITY_BYTES,
            },
            doc: "The capability (meter) the account's tier must include",
            rule: "not empty; give this or `requiredCapabilities`",
            ..OPT
        },
        Opt {
            key: "requiredCapabilities",
            kind: Kind::StringList {
                max_items: limits::CAPABILITIES,
                item_bytes: limits::CAPABILITY_BYTES,
            },
            doc: "Several capabilities, all required",
            rule: "at least one, none empty; give this or `requiredCapability`",
            ..OPT
        },
        Opt {
            key: "capabilitiesPointer",
            kind: Kind::String {
                max_bytes: limits::POINTER_BYTES,
            },
            default: Default::Str("/capabilities"),
            doc: "Where the capability list or map is in the answer",
            rule: "a JSON Pointer (RFC 6901)",
            ..OPT
        },
        Opt {
            key: "header",
            kind: Kind::String {
                max_bytes: limits::HEADER_BYTES,
            },
            default: Default::Str("authorization"),
            doc: "The header that carries the credential",
            rule: "a valid HTTP header name",
            none_of: limits::FORBIDDEN_HEADERS,
            ..OPT
        },
        Opt {
            key: "scheme",
            kind: Kind::String {
                max_bytes: limits::SCHEME_BYTES,
            },
            default: Default::Str("Bearer"),
            doc: "The scheme before the credential; `''` sends the bare credential",
            rule: "visible ASCII characters",
            ..OPT
        },
        Opt {
            key: "caPem",
            kind: Kind::String {
                max_bytes: limits::CA_PEM_BYTES,
            },
            doc: "Extra trusted root certificates for an authority behind a private CA; added to \
                  the public roots",
            rule: "PEM with at least one certificate",
            ..OPT
        },
    ],
    ..GROUP
};

pub static INSPECT_AUTHORITY: Group = Group {
    path: "authority",
    interface: "InspectAuthorityOptions",
    doc: "An authority you implement: resolve to one of the four outcomes. A throw, a rejection, \
          any other value, or no answer within `refresh.timeoutMs` counts as `indeterminate`.",
    options: &[Opt {
        key: "inspect",
        kind: Kind::Function("() => Promise<RefreshOutcome>"),
        default: Default::Required,
        doc: "Instead of the HTTP options: your own check of the credential",
        rule: "`async () => 'valid' | 'invalid_credential' | 'capability_missing' | \
               'indeterminate'`, alone in `authority`",
        ..OPT
    }],
    ..GROUP
};

/// What the `logger` option must be. The config checks that it is an object; its methods are
/// checked where they can be seen (a pino logger keeps them on its prototype), by the binding
/// (`crate::bindings::logger`).
pub const LOGGER_RULE: &str =
    "must be an object with info, warn and error methods (pino-style: (obj, msg))";

/// The logger's methods; the binding checks them (`crate::bindings::logger`).
const LOG_METHOD: Opt = Opt {
    kind: Kind::Function("(obj: object, msg: string) => void"),
    default: Default::Required,
    ..OPT
};

pub static LOGGER: Group = Group {
    path: "logger",
    interface: "SentinelLogger",
    doc: "`logger`: pino-compatible; gets one line per transition and per refresh that was not \
          `valid`.",
    options: &[
        Opt {
            key: "info",
            doc: "Status changes to `ready`",
            ..LOG_METHOD
        },
        Opt {
            key: "warn",
            doc: "Other status changes, and `indeterminate` refreshes",
            ..LOG_METHOD
        },
        Opt {
            key: "error",
            doc: "Changes to `invalid_credential` or `capability_missing`, refreshes that said \
                  so, and a task stopped on an internal error",
            ..LOG_METHOD
        },
    ],
    keys: Keys::Open,
    ..GROUP
};

// ---- arguments of sentinel methods ---------------------------------------------------------------

pub static WHEN_READY: Group = Group {
    path: "whenReady",
    interface: "WhenReadyOptions",
    doc: "Options of `whenReady(options)`.",
    options: &[Opt {
        key: "timeoutMs",
        kind: Kind::Number(Some(Range {
            min: 0.0,
            min_open: false,
            max: limits::MAX_TIMER_MS,
            max_open: false,
            whole: false,
            must: "a number of milliseconds from 0 to 2147483647",
        })),
        default: Default::Text("none: wait until ready or closed"),
        doc: "Reject with `ERR_SPEND_SENTINEL_TIMEOUT` after this many milliseconds",
        ..OPT
    }],
    ..GROUP
};

pub static METRICS: Group = Group {
    path: "metrics",
    interface: "MetricsOptions",
    doc: "Options of `metrics(options)`.",
    options: &[Opt {
        key: "format",
        kind: Kind::Choice(&crate::metrics::Format::NAMES),
        default: Default::Str("text"),
        doc: "`'text'`: Prometheus text format 0.0.4, served as `text/plain; version=0.0.4; \
              charset=utf-8`. `'openmetrics'`: OpenMetrics 1.0, served as \
              `application/openmetrics-text; version=1.0.0; charset=utf-8`",
        ..OPT
    }],
    ..GROUP
};

// ---- circuit breakers --------------------------------------------------------------------------

/// A duration of the breaker's state machine.
const BREAKER_MS: Range = Range {
    min: 0.0,
    min_open: true,
    max: limits::MAX_BREAKER_MS,
    max_open: false,
    whole: false,
    must: "a number of milliseconds greater than 0 and at most one year",
};

/// A count where 0 turns a rule off.
const WHOLE: Range = Range {
    min: 0.0,
    min_open: false,
    max: u32::MAX as f64,
    max_open: false,
    whole: true,
    must: "a whole number ≥ 0",
};

/// The state machine's options: `refresh.breaker` and `new CircuitBreaker` both take them.
const BREAKER_SETTINGS: &[Opt] = &[
    Opt {
        key: "failureThreshold",
        kind: Kind::Number(Some(WHOLE)),
        default: Default::Number(5.0),
        doc: "Consecutive failures that open the breaker; 0 turns this rule off",
        ..OPT
    },
    Opt {
        key: "failureRateThreshold",
        kind: Kind::Number(Some(Range {
            min: 0.0,
            min_open: false,
            max: 1.0,
            max_open: false,
            whole: false,
            must: "between 0 and 1",
        })),
        default: Default::Number(0.5),
        doc: "The failure rate over `windowMs` that opens it; 0 turns this rule off",
        ..OPT
    },
    Opt {
        key: "windowMs",
        kind: Kind::Number(Some(BREAKER_MS)),
        default: Default::Number(10_000.0),
        doc: "The rolling window of the rate rule (10 buckets: samples leave within a tenth of it)",
        ..OPT
    },
    Opt {
        key: "minimumCalls",
        kind: Kind::Number(Some(WHOLE)),
        default: Default::Number(20.0),
        doc: "Calls the window must hold before the rate rule applies; 0: from the first call",
        ..OPT
    },
    Opt {
        key: "openMs",
        kind: Kind::Number(Some(BREAKER_MS)),
        default: Default::Number(5000.0),
        doc: "The first open period",
        ..OPT
    },
    Opt {
        key: "maxOpenMs",
        kind: Kind::Number(Some(Range {
            min_open: false,
            must: "a number of milliseconds ≥ 0 and at most one year",
            ..BREAKER_MS
        })),
        default: Default::Text("max(60000, `openMs`)"),
        doc: "Cap of the open period, which doubles after each failed trial, shortened at random \
              by up to 20% (so a fleet does not retry in step); back to `openMs` once closed",
        rule: "at least `openMs`",
        ..OPT
    },
    Opt {
        key: "trialTimeoutMs",
        kind: Kind::Number(Some(BREAKER_MS)),
        default: Default::Number(10_000.0),
        doc: "A half-open trial not settled by then counts as failed",
        ..OPT
    },
];

pub static REFRESH_BREAKER: Group = Group {
    path: "refresh.breaker",
    interface: "RefreshBreakerOptions",
    doc: "`refresh.breaker`: the `CircuitBreaker` options that apply to refreshes. An \
          inconclusive refresh is a failure; any definitive answer, a denial included, is a \
          success.",
    shared: BREAKER_SETTINGS,
    ..GROUP
};

pub static CIRCUIT_BREAKER: Group = Group {
    interface: "CircuitBreakerOptions",
    type_params: "<F = never>",
    doc: "Options of `new CircuitBreaker(options)`; all optional. 0 turns a rule off where noted.",
    shared: BREAKER_SETTINGS,
    options: &[
        Opt {
            key: "name",
            kind: Kind::String {
                max_bytes: limits::BREAKER_NAME_BYTES,
            },
            default: Default::Text("`\"breaker\"`"),
            doc: "Names the breaker in errors, events and (named breakers only) metrics, where it \
                  is a label",
            rule: "not empty, only `[A-Za-z0-9_.:-]`, so a route or a tenant cannot slip in and \
                   multiply the series",
            ..OPT
        },
        Opt {
            key: "timeoutMs",
            kind: Kind::Number(Some(Range {
                min: 0.0,
                min_open: false,
                max: f64::MAX,
                max_open: false,
                whole: false,
                must: "a number of milliseconds ≥ 0",
            })),
            default: Default::Number(0.0),
            doc: "Bound on each call, 0: none. The `signal` passed to `fn` is aborted with an \
                  `ERR_SPEND_SENTINEL_TIMEOUT` error, `fire` rejects with it, and it counts as a \
                  failure",
            rule: "at most 2147483647 (a Node.js timer fires after 1 ms for anything longer)",
            ..OPT
        },
        Opt {
            key: "isFailure",
            kind: Kind::Function("(error: unknown) => boolean"),
            default: Default::Text("every error counts"),
            doc: "`false`: the error counts neither way (and frees a half-open trial's permit); a \
                  predicate that throws counts as a failure",
            ..OPT
        },
        Opt {
            key: "maxConcurrent",
            kind: Kind::Number(Some(Range {
                must: "a whole number ≥ 0 (0: no limit)",
                ..WHOLE
            })),
            default: Default::Number(0.0),
            doc: "The bulkhead: calls in flight at once, 0: no limit. One more is refused at once \
                  with `BulkheadFullError` (`code` `ERR_SPEND_SENTINEL_BULKHEAD_FULL`, `reason` \
                  `'bulkhead'`, no stack), never queued; it is not a breaker refusal \
                  (`stats.bulkheadRejected`, not `rejected`) and takes no half-open trial",
            ..OPT
        },
        Opt {
            key: "fallback",
            kind: Kind::Function("(info: FallbackInfo) => F | PromiseLike<F>"),
            default: Default::Text("none"),
            doc: "Answers instead of rejecting when the call is refused (`reason` `'open'` or \
                  `'bulkhead'`), times out (`'timeout'`) or fails (`'failure'`); `fire` resolves \
                  with what it returns (rejects with what it throws). Not called for errors \
                  `isFailure` ignores, nor for a caller's abort",
            ..OPT
        },
        Opt {
            key: "now",
            kind: Kind::Function("() => number"),
            default: Default::Text("the process's monotonic clock"),
            doc: "The clock the breaker reads, milliseconds from any fixed origin (it must never \
                  go back; a reading lower than the last one counts as time standing still): \
                  every decision (open periods, the rolling window, trial timeouts) and the \
                  breaker's metrics are at the time it last read. Tests pass fake time; \
                  `retryAt` stays epoch milliseconds",
            ..OPT
        },
    ],
    ..GROUP
};
