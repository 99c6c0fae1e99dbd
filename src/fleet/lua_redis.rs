//! An in-process stand-in for Redis that runs the fleet's real Lua scripts: Lua 5.1 (as Redis
//! embeds) through `mlua`, against a small in-memory keyspace of hashes with expiry, so that a
//! randomized explorer can make millions of script calls without a redis-server.
//!
//! What it emulates, as Redis 7.0 does (checked against a real server in `cross_check.rs`):
//! - the script environment: `KEYS` and `ARGV` (1-based tables of strings), `redis.call` and
//!   `redis.pcall`, only Redis's libraries (base, table, string, math), and protected globals: a
//!   script can neither create nor replace a global, nor read one that does not exist;
//! - the commands the scripts call (HGETALL, HSET, HDEL, PEXPIRE, INFO server/replication) and
//!   DEL, EXISTS, PTTL, TIME, HGET, with Redis's replies and errors (see `store.rs`);
//! - the conversions of replies into Lua (integer → number, bulk → string, nil → false, status →
//!   `{ok=}`, error → `{err=}`) and of the script's result back (see [`Reply`]);
//! - HGETALL in field insertion order, which is Redis's order for a small (listpack) hash; Redis
//!   switches to hash-table order above 128 fields or 64-byte values. A script must not depend on
//!   the order: [`LuaRedis::set_hgetall_shuffle`] shuffles it to find out.
//!
//! And the knobs an explorer needs: the server clock, key loss (DEL), DUMP/RESTORE-like copies,
//! the server identity (a failover or a restart), replicas, and INFO commandstats-like counts.
//! Not `Send` (an `mlua::Lua` is not): one per thread.
//!
//! Not emulated: RESP3, `redis.*` helpers other than `call`/`pcall`, the cjson, cmsgpack, struct
//! and bit libraries, script flags, and Redis 7.0.15's read-only tables beyond new globals (a
//! script here may change `string.x` or replace `_G.string`). Redis's Lua hashes every byte of a string where stock Lua 5.1.5 samples
//! strings of 32 bytes or more, so `pairs` over such keys may visit them in another order.

mod cross_check;
mod fleet_calls;
mod info;
mod store;
mod tests;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use mlua::{Function, Lua, LuaOptions, StdLib, Table, Value, Variadic};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use store::Server;
pub(crate) use store::{Reply, Snapshot};

pub(crate) use super::scripts::{RELEASE_SCRIPT, RENEW_SCRIPT};

/// Run once per Lua state, before the globals are locked. `run` (Rust) executes one command and
/// answers `ok, reply`; an error reply is a table `{err = "ERR ..."}`, which `redis.call` raises
/// as Redis does and `redis.pcall` returns (and Lua's `pcall` turns into its text, as Redis's
/// does). The chunk answers the runner of scripts, which turns a raised error into its text (a
/// Lua error gets Redis's `ERR ` code), and the scripts' environment.
const PRELUDE: &str = r#"
local run = ...
redis = {}
function redis.pcall(...)
  local _, reply = run(...)
  return reply
end
function redis.call(...)
  local ok, reply = run(...)
  if not ok then error(reply) end
  return reply
end
-- Redis 7's pcall hands a caught error table's text, as older versions did.
local lua_pcall = pcall
local function settle(ok, ...)
  if ok then return true, ... end
  local e = ...
  if type(e) == 'table' and (type(e.err) == 'string' or type(e.err) == 'number') then e = e.err end
  return false, e
end
function pcall(f, ...) return settle(lua_pcall(f, ...)) end
local function refuse() error('Attempt to modify a readonly table', 2) end
setmetatable(_G, { __newindex = refuse, __index = function(_, name)
  error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2)
end })
local readonly = { __index = _G, __newindex = refuse }
return function(script)
  local ok, result = lua_pcall(script)
  if ok then return true, result end
  if type(result) == 'table' and type(result.err) == 'string' then return false, result.err end
  return false, 'ERR ' .. tostring(result)
end, setmetatable({}, readonly)
"#;

/// Where the server clock starts (ms since the Unix epoch), so TIME looks like a real date.
const START_CLOCK_MS: i64 = 1_700_000_000_000;

pub(crate) struct LuaRedis {
    lua: Lua,
    server: Rc<RefCell<Server>>,
    /// Calls a compiled script; answers `ok, result or error text`.
    runner: Function,
    /// Every script's environment: empty, reads through to the globals, refuses writes.
    env: Table,
    /// Compiled scripts by text (few: a linear scan with a string compare beats hashing 9 KB).
    chunks: Vec<(String, Function)>,
}

impl LuaRedis {
    /// An empty server at [`START_CLOCK_MS`], with the identity drawn from seed 0 and no replicas.
    pub(crate) fn new() -> Self {
        let lua = Lua::new_with(
            StdLib::TABLE | StdLib::STRING | StdLib::MATH,
            LuaOptions::new(),
        )
        .expect("Lua 5.1 with Redis's libraries");
        let server = Rc::new(RefCell::new(Server::new(START_CLOCK_MS)));
        let run = command_function(&lua, Rc::clone(&server)).expect("the command function");
        let (runner, env) = lua
            .load(PRELUDE)
            .set_name("@prelude")
            .call::<(Function, Table)>(run)
            .expect("the prelude runs");
        let mut redis = LuaRedis {
            lua,
            server,
            runner,
            env,
            chunks: Vec::new(),
        };
        redis.new_server_identity(0);
        redis
    }

    /// Runs `script` as EVAL/EVALSHA would, answering its reply as [`strings_of`] reads it;
    /// [`Self::eval_reply`] answers the reply itself.
    pub(crate) fn eval(
        &mut self,
        script: &str,
        keys: &[&str],
        argv: &[String],
    ) -> Result<Vec<String>, String> {
        strings_of(self.eval_reply(script, keys, argv))
    }

    /// Runs `script` and answers its reply as Redis would send it (RESP2): a compile or runtime
    /// error is [`Reply::Error`] with Lua's text (Redis adds the script's sha and line to it).
    /// Counts one EVALSHA per call, as INFO commandstats does.
    pub(crate) fn eval_reply(&mut self, script: &str, keys: &[&str], argv: &[String]) -> Reply {
        self.server.borrow_mut().count("evalsha");
        self.run(script, keys, argv)
            .unwrap_or_else(|e| Reply::Error(lua_error_text(&e)))
    }

    fn run(&mut self, script: &str, keys: &[&str], argv: &[String]) -> mlua::Result<Reply> {
        let chunk = self.chunk(script)?;
        let globals = self.lua.globals();
        globals.raw_set("KEYS", self.lua.create_sequence_from(keys.iter().copied())?)?;
        globals.raw_set(
            "ARGV",
            self.lua
                .create_sequence_from(argv.iter().map(String::as_str))?,
        )?;
        let (ok, result): (bool, Value) = self.runner.call(chunk)?;
        if ok {
            Ok(script_reply(&result))
        } else {
            Ok(Reply::Error(lua_text(&result)))
        }
    }

    fn chunk(&mut self, script: &str) -> mlua::Result<Function> {
        if let Some((_, chunk)) = self.chunks.iter().find(|(text, _)| text == script) {
            return Ok(chunk.clone());
        }
        let chunk = self
            .lua
            .load(script)
            .set_name("@user_script")
            .set_environment(self.env.clone())
            .into_function()
            .map_err(|e| {
                mlua::Error::RuntimeError(format!(
                    "ERR Error compiling script (new function): {}",
                    lua_error_text(&e)
                ))
            })?;
        self.chunks.push((script.to_owned(), chunk.clone()));
        Ok(chunk)
    }

    /// The server clock (ms since the Unix epoch): what TIME answers and expiry is measured on.
    pub(crate) fn server_clock_ms(&self) -> i64 {
        self.server.borrow().clock_ms()
    }

    /// Steps the server clock, forward or back (an NTP step, a failover to a server whose clock
    /// differs). A step back never revives a key that had expired (Redis's active expiry would
    /// have deleted it) but postpones the expiry of live ones, as in Redis.
    pub(crate) fn advance_server_clock(&mut self, ms: i64) {
        self.server.borrow_mut().step_clock(ms);
    }

    /// Deletes `key` (DEL, an eviction, FLUSHDB); answers whether it existed.
    pub(crate) fn del(&mut self, key: &str) -> bool {
        self.server.borrow_mut().del(key)
    }

    /// A copy of `key`'s value and expiry, for [`Self::restore`] (DUMP): a replica's copy, or a
    /// snapshot a restarted server loads.
    pub(crate) fn dump(&mut self, key: &str) -> Option<Snapshot> {
        self.server.borrow_mut().dump(key)
    }

    /// Puts `snapshot` back under `key`, replacing it (RESTORE ... REPLACE ABSTTL): its expiry is
    /// absolute, so a snapshot older than its expiry is gone on next access.
    pub(crate) fn restore(&mut self, key: &str, snapshot: Snapshot) {
        self.server.borrow_mut().restore(key, snapshot);
    }

    /// `key`'s fields and values (empty if it does not exist), counting no command.
    pub(crate) fn hash(&mut self, key: &str) -> BTreeMap<String, String> {
        self.server.borrow_mut().hash(key)
    }

    /// The identity INFO shows (`run_id`, `master_replid`): a failover or a restart changes it.
    pub(crate) fn set_server(&mut self, run_id: &str, replid: &str) {
        self.server.borrow_mut().info.set_identity(run_id, replid);
    }

    /// A new identity drawn from `seed`: 40 hex digits each, as Redis draws them.
    pub(crate) fn new_server_identity(&mut self, seed: u64) {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut hex40 = || {
            (0..40)
                .map(|_| char::from(b"0123456789abcdef"[rng.random_range(0..16)]))
                .collect::<String>()
        };
        let (run_id, replid) = (hex40(), hex40());
        self.set_server(&run_id, &replid);
    }

    /// The identity INFO shows now: `(run_id, master_replid)`.
    pub(crate) fn server_identity(&self) -> (String, String) {
        self.server.borrow().info.identity()
    }

    /// The replicas INFO lists: `online` ones, then `syncing` ones in a full sync. Redis 7.0
    /// counts both in `connected_slaves` and shows the latter as `state=wait_bgsave,offset=0`.
    pub(crate) fn set_replicas(&mut self, online: u32, syncing: u32) {
        self.server.borrow_mut().info.set_replicas(online, syncing);
    }

    /// Calls per command (lower case) since the last reset, as INFO commandstats counts them: every
    /// command a script ran (even one that answered an error), and `evalsha` once per eval.
    pub(crate) fn command_counts(&self) -> BTreeMap<String, u64> {
        self.server.borrow().command_counts()
    }

    pub(crate) fn reset_command_counts(&mut self) {
        self.server.borrow_mut().reset_command_counts();
    }

    /// `Some(seed)`: HGETALL answers each hash in an order drawn from `seed` (then from the same
    /// generator, call after call); `None`: in insertion order (the default, Redis's for a small
    /// hash).
    pub(crate) fn set_hgetall_shuffle(&mut self, seed: Option<u64>) {
        self.server.borrow_mut().shuffle = seed.map(StdRng::seed_from_u64);
    }
}

/// A reply as strings: an array of integers, strings and nils (nil as ""). An error reply, a
/// reply that is not an array, or one that holds an array or an error, is `Err` with the text.
pub(crate) fn strings_of(reply: Reply) -> Result<Vec<String>, String> {
    let items = match reply {
        Reply::Array(items) => items,
        Reply::Error(message) => return Err(message),
        other => return Err(format!("the script answered {other:?}, not an array")),
    };
    items
        .into_iter()
        .map(|item| match item {
            Reply::Nil => Ok(String::new()),
            Reply::Int(n) => Ok(n.to_string()),
            Reply::Bulk(s) | Reply::Status(s) => Ok(s),
            Reply::Error(message) => Err(message),
            Reply::Array(_) => Err("the script answered a nested array".to_owned()),
        })
        .collect()
}

/// `redis.call`'s engine: runs one command, answers `ok, reply` (an error reply as `{err=}`).
fn command_function(lua: &Lua, server: Rc<RefCell<Server>>) -> mlua::Result<Function> {
    lua.create_function(move |lua, args: Variadic<Value>| {
        let reply = match command_args(&args) {
            Some(args) => server.borrow_mut().execute(&args),
            None => Reply::Error(
                "ERR Lua redis lib command arguments must be strings or integers".to_owned(),
            ),
        };
        Ok((!matches!(reply, Reply::Error(_)), lua_value(lua, reply)?))
    })
}

/// A command's arguments as Redis takes them from Lua: strings as they are, numbers as `%.17g`
/// (not Lua's `%.14g`, which loses precision); anything else refuses the call.
/// (Plain loops here and below: iterator adapters cost a lot in the debug builds tests run.)
fn command_args(args: &[Value]) -> Option<Vec<String>> {
    let mut out = Vec::with_capacity(args.len());
    for arg in args {
        out.push(match arg {
            Value::String(s) => lossy(s),
            Value::Number(n) => format_g17(*n),
            Value::Integer(n) => format_g17(integer_as_f64(*n)),
            _ => return None,
        });
    }
    Some(out)
}

/// mlua hands a Lua 5.1 number that is a whole i64 as `Integer`; it came from an f64, so the
/// conversion back is exact.
#[allow(clippy::cast_precision_loss)] // Exact: the value was an f64 (see above).
fn integer_as_f64(n: i64) -> f64 {
    n as f64
}

/// C's `printf("%.17g", x)` (glibc), which Redis uses for number arguments.
fn format_g17(x: f64) -> String {
    if !x.is_finite() {
        let magnitude = if x.is_nan() { "nan" } else { "inf" };
        return format!("{}{magnitude}", if x.is_sign_negative() { "-" } else { "" });
    }
    // 17 significant digits, correctly rounded; the exponent is the rounded one, as in C.
    let scientific = format!("{x:.16e}");
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("Rust's {:e} has an exponent");
    let exponent: i32 = exponent.parse().expect("a decimal exponent");
    let trim = |s: &str| s.trim_end_matches('0').trim_end_matches('.').to_owned();
    if !(-4..17).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exponent.unsigned_abs())
    } else {
        let decimals = usize::try_from(16 - exponent).expect("-4 <= exponent < 17");
        let fixed = format!("{x:.decimals$}");
        if fixed.contains('.') {
            trim(&fixed)
        } else {
            fixed
        }
    }
}

/// A command's reply as a script sees it (Redis's `redisProtocolToLuaType`). Arrays are filled
/// in place (no handle per item: HGETALL's strings are most of a script call's traffic).
fn lua_value(lua: &Lua, reply: Reply) -> mlua::Result<Value> {
    let tagged = |tag: &str, text: String| -> mlua::Result<Value> {
        let table = lua.create_table_with_capacity(0, 1)?;
        table.raw_set(tag, text)?;
        Ok(Value::Table(table))
    };
    Ok(match reply {
        Reply::Nil => Value::Boolean(false),
        Reply::Int(n) => Value::Integer(n),
        Reply::Bulk(s) => Value::String(lua.create_string(s)?),
        Reply::Status(s) => tagged("ok", s)?,
        Reply::Error(s) => tagged("err", s)?,
        Reply::Array(items) => {
            let table = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, item) in items.into_iter().enumerate() {
                match item {
                    Reply::Bulk(s) => table.raw_seti(i + 1, s)?,
                    other => table.raw_seti(i + 1, lua_value(lua, other)?)?,
                }
            }
            Value::Table(table)
        }
    })
}

/// A script's result as Redis replies it (`luaReplyToRedisReply`, RESP2): a table with a string
/// `err` or `ok` is an error or a status, any other table an array of its items up to the first
/// nil; a number is an integer, truncated toward zero (saturating where C's cast is undefined);
/// true is 1; false, nil and other types are nil.
fn script_reply(value: &Value) -> Reply {
    match value {
        Value::Boolean(true) => Reply::Int(1),
        Value::Integer(n) => Reply::Int(*n),
        Value::Number(n) => Reply::Int(truncate(*n)),
        Value::String(s) => Reply::Bulk(lossy(s)),
        Value::Table(table) => table_reply(table),
        _ => Reply::Nil,
    }
}

fn table_reply(table: &Table) -> Reply {
    let text = |field: &str| match table.raw_get::<Value>(field) {
        Ok(Value::String(s)) => Some(lossy(&s)),
        _ => None,
    };
    if let Some(message) = text("err") {
        return Reply::Error(message);
    }
    if let Some(status) = text("ok") {
        return Reply::Status(status);
    }
    let mut items = Vec::new();
    for i in 1.. {
        match table.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(item) => items.push(script_reply(&item)),
        }
    }
    Reply::Array(items)
}

#[allow(clippy::cast_possible_truncation)] // The truncation is Redis's `(long long)` cast.
fn truncate(n: f64) -> i64 {
    n as i64
}

/// A Lua string as Rust text (the scripts' strings are ASCII; other bytes become U+FFFD).
fn lossy(s: &mlua::LuaString) -> String {
    let bytes = s.as_bytes();
    match std::str::from_utf8(&bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => String::from_utf8_lossy(&bytes).into_owned(),
    }
}

/// The runner's error text (always a string; anything else is shown as it is).
fn lua_text(value: &Value) -> String {
    match value {
        Value::String(s) => lossy(s),
        other => format!("{other:?}"),
    }
}

/// The text of a Lua error without mlua's wrapping (callback chains, tracebacks).
fn lua_error_text(error: &mlua::Error) -> String {
    match error {
        mlua::Error::RuntimeError(message) | mlua::Error::SyntaxError { message, .. } => {
            message.clone()
        }
        mlua::Error::CallbackError { cause, .. } => lua_error_text(cause),
        other => other.to_string(),
    }
}
