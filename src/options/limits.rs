//! Upper bounds on strings, lists and numbers: generous for real use, small enough that no
//! option can blow up memory, metrics, a request line or a timer. The schema and the parser's
//! code both read them from here.

/// Bytes.
pub const URL_BYTES: usize = 2048;
pub const CREDENTIAL_BYTES: usize = 4096;
pub const ENV_NAME_BYTES: usize = 256;
pub const CAPABILITY_BYTES: usize = 256;
pub const POINTER_BYTES: usize = 1024;
pub const HEADER_BYTES: usize = 64;
pub const SCHEME_BYTES: usize = 64;
pub const CA_PEM_BYTES: usize = 1024 * 1024;
/// A PEM private key: an RSA 16384-bit key is about 12 KB.
pub const PRIVATE_KEY_BYTES: usize = 64 * 1024;
/// A fleet's `name` becomes part of every Redis key.
pub const FLEET_NAME_BYTES: usize = 100;
/// A breaker's `name` becomes a metric label.
pub const BREAKER_NAME_BYTES: usize = 128;

/// Items of `authority.requiredCapabilities`.
pub const CAPABILITIES: usize = 64;

/// The most nodes a fleet may declare: grants are computed over every live node in one script.
pub const MAX_NODES: f64 = 10_000.0;

/// The longest Node.js timer, ms (2³¹ − 1, ~24.8 days): Node fires a longer one after 1 ms.
pub const MAX_TIMER_MS: f64 = 2_147_483_647.0;

/// Breaker durations longer than a year are refused: they are mistakes (seconds given as
/// ms × 1000).
pub const MAX_BREAKER_MS: f64 = 365.0 * 24.0 * 3600.0 * 1000.0;

/// Request headers that a credential must never ride on: connection-level and framing headers
/// (proxies rewrite or drop them, and a wrong value breaks every request) and the headers the
/// adapter sets itself.
pub const FORBIDDEN_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "upgrade",
    "expect",
    "accept",
    "accept-encoding",
    "user-agent",
];
