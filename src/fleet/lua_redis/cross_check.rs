//! The stand-in against a real `redis-server` (7.0): the same scripts and calls on both, the same
//! replies. Edge scripts pin the environment, commands and conversions; seeded traces of the
//! fleet scripts pin the whole (replies, final state, and what INFO commandstats counts).
//!
//! The one difference allowed is the server's identity: the stand-in takes the real one's.
//! Errors match by prefix, as Redis appends the script's sha and line to the text.

use std::collections::{BTreeMap, BTreeSet};

use redis::aio::MultiplexedConnection;
use redis::{RedisResult, Value};

use super::fleet_calls::{Step, Trace};
use super::{LuaRedis, Reply, Snapshot, RELEASE_SCRIPT, RENEW_SCRIPT};
use crate::fleet::test_redis::RedisServer;

const KEY: &str = "{spend-sentinel:cross-check}";
const DEL: &str = "return {redis.call('DEL', KEYS[1])}";
/// Makes the stored state look written by another server, if there is a state.
const FOREIGN: &str = "if redis.call('EXISTS', KEYS[1]) == 1 then
    redis.call('HSET', KEYS[1], 'server', ARGV[1]) end return {}";

fn reply_of(value: RedisResult<Value>) -> Reply {
    let value = match value {
        Ok(value) => value,
        Err(e) => {
            return Reply::Error(format!(
                "{} {}",
                e.code().unwrap_or("?"),
                e.detail().unwrap_or("")
            ))
        }
    };
    match value {
        Value::Nil => Reply::Nil,
        Value::Int(n) => Reply::Int(n),
        Value::BulkString(bytes) => Reply::Bulk(String::from_utf8_lossy(&bytes).into_owned()),
        Value::SimpleString(s) => Reply::Status(s),
        Value::Okay => Reply::Status("OK".to_owned()),
        Value::Array(items) => Reply::Array(items.into_iter().map(|v| reply_of(Ok(v))).collect()),
        Value::ServerError(e) => {
            Reply::Error(format!("{} {}", e.code(), e.details().unwrap_or("")))
        }
        other => panic!("a RESP3 reply from a RESP2 connection: {other:?}"),
    }
}

/// The stand-in's reply matches the real one: equal, or for errors a prefix of it.
fn same(fake: &Reply, real: &Reply) -> bool {
    match (fake, real) {
        (Reply::Error(fake), Reply::Error(real)) => real.starts_with(fake.as_str()),
        (Reply::Array(fake), Reply::Array(real)) => {
            fake.len() == real.len() && fake.iter().zip(real).all(|(f, r)| same(f, r))
        }
        _ => fake == real,
    }
}

/// A real server and the stand-in, side by side.
struct Pair {
    port: u16,
    real: MultiplexedConnection,
    fake: LuaRedis,
    loaded: BTreeSet<String>,
    snapshots: Option<(Option<Vec<u8>>, Option<Snapshot>)>,
}

impl Pair {
    async fn new(port: u16) -> Self {
        let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap();
        let mut real = client.get_multiplexed_async_connection().await.unwrap();
        // Keep the hash listpack-encoded (field insertion order, the stand-in's): the scripts'
        // `pairs` order, and with it which expired lease is charged first, follows HGETALL's.
        for (name, value) in [
            ("hash-max-listpack-entries", "100000"),
            ("hash-max-listpack-value", "100000"),
        ] {
            let _: () = redis::cmd("CONFIG")
                .arg("SET")
                .arg(name)
                .arg(value)
                .query_async(&mut real)
                .await
                .unwrap();
        }
        let mut fake = LuaRedis::new();
        let info: String = redis::cmd("INFO")
            .arg("server")
            .arg("replication")
            .query_async(&mut real)
            .await
            .unwrap();
        let field = |name: &str| {
            let start = info.find(&format!("\r\n{name}:")).expect(name) + name.len() + 3;
            info[start..start + 40].to_owned()
        };
        fake.set_server(&field("run_id"), &field("master_replid"));
        Pair {
            port,
            real,
            fake,
            loaded: BTreeSet::new(),
            snapshots: None,
        }
    }

    async fn query(&mut self, cmd: &redis::Cmd) -> Reply {
        reply_of(cmd.query_async(&mut self.real).await)
    }

    /// Loads `script` into the real server (SCRIPT LOAD, once); answers its error, if any.
    async fn load(&mut self, script: &str) -> Result<String, Reply> {
        let sha = redis::Script::new(script).get_hash().to_owned();
        if !self.loaded.contains(&sha) {
            let reply = self
                .query(redis::cmd("SCRIPT").arg("LOAD").arg(script))
                .await;
            if let Reply::Error(_) = reply {
                return Err(reply);
            }
            self.loaded.insert(sha.clone());
        }
        Ok(sha)
    }

    /// Runs `script` on both (EVALSHA on the real one).
    async fn eval(&mut self, script: &str, argv: &[String]) -> (Reply, Reply) {
        let real = match self.load(script).await {
            Ok(sha) => {
                let evalsha = redis::cmd("EVALSHA")
                    .arg(sha)
                    .arg(1)
                    .arg(KEY)
                    .arg(argv)
                    .clone();
                self.query(&evalsha).await
            }
            Err(error) => error,
        };
        (self.fake.eval_reply(script, &[KEY], argv), real)
    }

    async fn check(&mut self, script: &str, argv: &[String]) -> Reply {
        let (fake, real) = self.eval(script, argv).await;
        assert!(
            same(&fake, &real),
            "{script}\nARGV {argv:?}\nstand-in: {fake:?}\nredis:    {real:?}"
        );
        fake
    }

    async fn check_state(&mut self) {
        let Reply::Array(flat) = self.query(redis::cmd("HGETALL").arg(KEY)).await else {
            panic!("HGETALL")
        };
        let real: BTreeMap<String, String> = flat
            .chunks(2)
            .map(|pair| match pair {
                [Reply::Bulk(f), Reply::Bulk(v)] => (f.clone(), v.clone()),
                other => panic!("HGETALL gave {other:?}"),
            })
            .collect();
        assert_eq!(self.fake.hash(KEY), real, "the final states differ");
    }

    async fn snapshot(&mut self) {
        let real: Option<Vec<u8>> = redis::cmd("DUMP")
            .arg(KEY)
            .query_async(&mut self.real)
            .await
            .unwrap();
        self.snapshots = Some((real, self.fake.dump(KEY)));
    }

    /// The key goes back to the last snapshot (none: nothing happens; an empty one: no key).
    async fn fail_over(&mut self) {
        let Some((real, fake)) = self.snapshots.clone() else {
            return;
        };
        match (real, fake) {
            (Some(payload), Some(fake)) => {
                let restore = redis::cmd("RESTORE")
                    .arg(KEY)
                    .arg(0)
                    .arg(payload)
                    .arg("REPLACE")
                    .clone();
                assert_eq!(self.query(&restore).await, Reply::Status("OK".into()));
                self.fake.restore(KEY, fake);
            }
            (None, None) => {
                self.check(DEL, &[]).await;
            }
            other => panic!(
                "one side had the key, the other not: {:?}",
                (other.0.is_some(), other.1)
            ),
        }
    }

    /// INFO commandstats `calls` per command, without the ones the test sends itself.
    async fn real_counts(&mut self) -> BTreeMap<String, u64> {
        let Reply::Bulk(info) = self.query(redis::cmd("INFO").arg("commandstats")).await else {
            panic!("INFO")
        };
        info.lines()
            .filter_map(|line| {
                let (name, rest) = line.strip_prefix("cmdstat_")?.split_once(":calls=")?;
                let calls = rest.split(',').next()?.parse().ok()?;
                (!["dump", "restore", "config|resetstat"].contains(&name))
                    .then(|| (name.to_owned(), calls))
            })
            .collect()
    }

    async fn reset_counts(&mut self) {
        assert_eq!(
            self.query(redis::cmd("CONFIG").arg("RESETSTAT")).await,
            Reply::Status("OK".into())
        );
        self.fake.reset_command_counts();
    }

    /// Makes the server on `port` a replica of the pair's, whose diskless sync waits `delay`
    /// seconds for more replicas; waits until the master's INFO shows `state`.
    async fn replicate(&mut self, port: u16, delay: &str, state: &str) {
        let delay_cmd = redis::cmd("CONFIG")
            .arg("SET")
            .arg("repl-diskless-sync-delay")
            .arg(delay)
            .clone();
        assert_eq!(self.query(&delay_cmd).await, Reply::Status("OK".into()));
        let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap();
        let mut replica = client.get_multiplexed_async_connection().await.unwrap();
        // Loaded from the socket, the snapshot leaves no dump.rdb in the working directory.
        let _: () = redis::cmd("CONFIG")
            .arg("SET")
            .arg("repl-diskless-load")
            .arg("swapdb")
            .query_async(&mut replica)
            .await
            .unwrap();
        let master_port = self.port;
        let _: () = redis::cmd("REPLICAOF")
            .arg("127.0.0.1")
            .arg(master_port)
            .query_async(&mut replica)
            .await
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let Reply::Bulk(info) = self.query(redis::cmd("INFO").arg("replication")).await else {
                panic!("INFO")
            };
            if info
                .lines()
                .any(|line| line.contains(&format!("port={port},{state}")))
            {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no replica with {state}:\n{info}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// INFO `sections` has the same fields in the same order on both.
    async fn check_info_fields(&mut self, sections: &[&str]) {
        let script = "return {redis.call('INFO', unpack(ARGV))}";
        let (fake, real) = self.eval(script, &strings(sections)).await;
        let (Reply::Array(fake), Reply::Array(real)) = (fake, real) else {
            panic!("INFO")
        };
        let (Reply::Bulk(fake), Reply::Bulk(real)) = (&fake[0], &real[0]) else {
            panic!("INFO")
        };
        assert_eq!(skeleton(fake), skeleton(real), "INFO {sections:?}");
    }
}

fn block_on<F: std::future::Future>(test: F) -> F::Output {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(test)
}

fn with_pair<F: std::future::Future<Output = ()>>(test: impl FnOnce(Pair) -> F) {
    let redis = RedisServer::start();
    block_on(async { test(Pair::new(redis.port).await).await });
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// Small scripts over the environment, the commands, their errors and the reply conversions,
/// run in this order on one key (each may depend on the state the ones before left).
const EDGE_SCRIPTS: &[(&str, &[&str])] = &[
    ("return {KEYS[1], #KEYS, #ARGV, ARGV[2]}", &["a", "b"]),
    ("return {1, 2.9, -2.9, 'x', true, false, 'y', nil, 'z'}", &[]),
    ("return {err = 'ERR mine'}", &[]),
    ("return {ok = 'fine'}", &[]),
    ("return 7.9", &[]),
    ("return nil", &[]),
    ("return {{1, {2}}, 'a'}", &[]),
    ("return {redis.call('HSET', KEYS[1], unpack(ARGV))}", &["b", "1", "a", "2"]),
    ("return {redis.call('HSET', KEYS[1], unpack(ARGV))}", &["b", "3", "c", "4"]),
    ("return redis.call('HGETALL', KEYS[1])", &[]),
    ("return {redis.call('HDEL', KEYS[1], unpack(ARGV))}", &["a", "x"]),
    ("return {redis.call('HGET', KEYS[1], 'c'), redis.call('HGET', KEYS[1], 'zz')}", &[]),
    ("local r = redis.call('HGET', KEYS[1], 'zz') return {type(r), tostring(r)}", &[]),
    ("return {redis.call('EXISTS', KEYS[1], KEYS[1], 'nope'), redis.call('PTTL', KEYS[1])}", &[]),
    ("return {redis.call('PTTL', 'nope'), redis.call('DEL', 'nope', KEYS[1], KEYS[1])}", &[]),
    ("redis.call('HSET', KEYS[1], 'a', 0.1, 'b', 3600000, 'c', 1e20, 'd', -2.5, 'e', 1/3)
      return redis.call('HGETALL', KEYS[1])", &[]),
    ("return {redis.call('PEXPIRE', KEYS[1], ARGV[1]), redis.call('EXISTS', KEYS[1])}", &["0"]),
    ("return {redis.call('PEXPIRE', KEYS[1], ARGV[1])}", &["100"]),
    ("redis.call('HSET', KEYS[1], 'f', 'v') return {redis.call('PEXPIRE', KEYS[1], ARGV[1])}", &["1.5"]),
    ("return {redis.call('PEXPIRE', KEYS[1], ARGV[1])}", &["007"]),
    ("return {redis.call('PEXPIRE', KEYS[1], ARGV[1])}", &["9223372036854775807"]),
    ("return {redis.call('PEXPIRE', KEYS[1], ARGV[1]), redis.call('EXISTS', KEYS[1])}", &["-5"]),
    ("return {redis.pcall('HSET', KEYS[1], 'a', '1', 'odd').err}", &[]),
    ("redis.call('NOPE', 'x')", &[]),
    ("local a = redis.pcall('NOPE') local ok, b = pcall(redis.call, 'NOPE')
      return {a.err, tostring(ok), b}", &[]),
    ("redis.call('hgetall')", &[]),
    ("return {redis.pcall('HGET', KEYS[1]).err}", &[]),
    ("redis.call('HGET', {}, 'x')", &[]),
    ("redis.call()", &[]),
    ("local x = nil\nreturn x + 1", &[]),
    ("return {", &[]),
    ("error('mine')", &[]),
    ("leak = 1", &[]),
    ("KEYS = {}", &[]),
    ("_G.leak = 1", &[]),
    ("return {tostring(nothing_here)}", &[]),
    ("return {os.time()}", &[]),
    ("return {type(string.format), type(math.max), type(table.sort), type(unpack)}", &[]),
    ("local i = redis.call('INFO', 'server') return {string.match(i, '^# Server\\r\\nredis_version:([%d.]+)\\r\\n')}", &[]),
    ("return {#redis.call('INFO', 'nonsense')}", &[]),
];

#[test]
fn edge_scripts_answer_as_on_redis() {
    with_pair(|mut pair| async move {
        for (script, argv) in EDGE_SCRIPTS {
            pair.check(script, &strings(argv)).await;
        }
        pair.check_state().await;
    });
}

/// Each line's field name (or the whole line: headers, the empty line between sections).
fn skeleton(info: &str) -> Vec<&str> {
    info.split("\r\n")
        .map(|line| line.split_once(':').map_or(line, |(name, _)| name))
        .collect()
}

#[test]
fn info_has_redis_fields_in_redis_order() {
    with_pair(|mut pair| async move {
        for sections in [
            &["server"][..],
            &["replication"],
            &["replication", "server"],
        ] {
            pair.check_info_fields(sections).await;
        }
    });
}

/// A real replica online and one held in its full sync (a diskless sync waiting for more
/// replicas): INFO lists both, and the scripts count only the one online, on both.
#[test]
fn replicas_show_and_count_as_on_redis() {
    let (master, online, syncing) = (
        RedisServer::start(),
        RedisServer::start(),
        RedisServer::start(),
    );
    block_on(async {
        let mut pair = Pair::new(master.port).await;
        pair.replicate(online.port, "0", "state=online").await;
        pair.replicate(syncing.port, "60", "state=wait_bgsave")
            .await;
        pair.fake.set_replicas(1, 1);
        pair.check_info_fields(&["replication"]).await;
        // The replies match only if both count the same replicas.
        let reply = pair.check(RENEW_SCRIPT, &Trace::new(1).renew_argv(0)).await;
        let Reply::Array(fields) = &reply else {
            panic!("{reply:?}")
        };
        let fields: Vec<String> = fields
            .iter()
            .map(|field| match field {
                Reply::Bulk(text) => text.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        let (answer, _) =
            crate::rules::fleet::FleetReply::parse_renewal(&fields).expect("a renewal");
        assert_eq!(
            answer.replicas, 1,
            "only the online replica counts for WAIT: one in a full sync neither blocks growth \
             nor holds it"
        );
    });
}

/// Runs `steps` of the trace drawn from `seed` on both; answers how many calls answered.
async fn run_trace(port: u16, seed: u64, steps: u32) -> u32 {
    let mut pair = Pair::new(port).await;
    for script in [RENEW_SCRIPT, RELEASE_SCRIPT, DEL, FOREIGN] {
        pair.load(script).await.expect("the script compiles");
    }
    // The stand-in starts empty; the real server may hold an earlier trace's state.
    pair.query(redis::cmd("DEL").arg(KEY)).await;
    pair.reset_counts().await;
    let mut trace = Trace::new(seed);
    let mut answered = 0;
    for _ in 0..steps {
        let (node, script, argv) = match trace.next_step() {
            Step::Renew { node, argv } => (Some(node), RENEW_SCRIPT, argv),
            Step::Release { node, argv } => (Some(node), RELEASE_SCRIPT, argv),
            Step::Lose => (None, DEL, Vec::new()),
            Step::ForeignServer(id) => (None, FOREIGN, vec![id]),
            Step::Snapshot => {
                pair.snapshot().await;
                continue;
            }
            Step::FailOver => {
                pair.fail_over().await;
                continue;
            }
        };
        let reply = super::strings_of(pair.check(script, &argv).await);
        if let Some(node) = node {
            answered += u32::from(reply.is_ok());
            trace.observe(node, &reply);
        }
    }
    assert_eq!(
        pair.fake.command_counts(),
        pair.real_counts().await,
        "INFO commandstats"
    );
    pair.check_state().await;
    answered
}

#[test]
fn seeded_traces_answer_as_on_redis() {
    let redis = RedisServer::start();
    block_on(async {
        for seed in 1..=4 {
            let answered = run_trace(redis.port, seed, 1500).await;
            assert!(
                answered > 1000,
                "seed {seed}: only {answered} calls answered"
            );
        }
    });
}
