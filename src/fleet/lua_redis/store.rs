//! The server behind [`super::LuaRedis`]: a keyspace of hashes with expiry on a server clock that
//! the test moves, the server's identity and replicas (for INFO), and the commands the fleet
//! scripts call, with Redis 7.0's replies and error texts (checked in `cross_check.rs`).

use std::collections::{BTreeMap, HashMap};

use rand::rngs::StdRng;
use rand::seq::SliceRandom;

use super::info::Info;

/// A reply as Redis sends it over RESP2: what a command gives a script, and what a script gives
/// its caller. Error texts carry their code (`"ERR ..."`), as in the tables scripts see.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Reply {
    Nil,
    Int(i64),
    Bulk(String),
    Status(String),
    Error(String),
    Array(Vec<Reply>),
}

fn error(message: &str) -> Reply {
    Reply::Error(format!("ERR {message}"))
}

/// One key's value (a hash, its fields in insertion order) and its expiry, an absolute time on
/// the server clock (ms), as DUMP/RESTORE, replication and snapshots carry it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Snapshot {
    fields: Vec<(String, String)>,
    expires_at: Option<i64>,
}

enum Arity {
    Exactly(usize),
    AtLeast(usize),
}

/// The commands served, lower case, with Redis's arity (the command name counts).
const COMMANDS: [(&str, Arity); 10] = [
    ("hgetall", Arity::Exactly(2)),
    ("hset", Arity::AtLeast(4)),
    ("hdel", Arity::AtLeast(3)),
    ("pexpire", Arity::AtLeast(3)),
    ("info", Arity::AtLeast(1)),
    ("del", Arity::AtLeast(2)),
    ("exists", Arity::AtLeast(2)),
    ("pttl", Arity::Exactly(2)),
    ("time", Arity::Exactly(1)),
    ("hget", Arity::Exactly(3)),
];

/// A Redis integer argument: what `string2ll` takes (canonical decimal, no `+`, no leading zeros).
fn parse_i64(s: &str) -> Option<i64> {
    s.parse::<i64>().ok().filter(|n| n.to_string() == s)
}

pub(crate) struct Server {
    keys: HashMap<String, Snapshot>,
    clock_ms: i64,
    pub(crate) info: Info,
    counts: BTreeMap<&'static str, u64>,
    /// Set: HGETALL answers in an order drawn from this, to catch scripts that depend on order.
    pub(crate) shuffle: Option<StdRng>,
}

impl Server {
    pub(crate) fn new(clock_ms: i64) -> Self {
        Server {
            keys: HashMap::new(),
            clock_ms,
            info: Info::new(clock_ms),
            counts: BTreeMap::new(),
            shuffle: None,
        }
    }

    /// The key's value if it has not expired; an expired one is deleted here, as Redis does on
    /// access. Redis's test is `now > expiry`: a key lives through its expiry millisecond.
    fn live(&mut self, key: &str) -> Option<&mut Snapshot> {
        let expired = self
            .keys
            .get(key)?
            .expires_at
            .is_some_and(|at| self.clock_ms > at);
        if expired {
            self.keys.remove(key);
            return None;
        }
        self.keys.get_mut(key)
    }

    pub(crate) fn clock_ms(&self) -> i64 {
        self.clock_ms
    }

    /// Steps the clock. Before a step back, deletes every key expired by now, as Redis's active
    /// expiry would have (so that a step back never revives a key).
    pub(crate) fn step_clock(&mut self, ms: i64) {
        if ms < 0 {
            let now = self.clock_ms;
            self.keys
                .retain(|_, value| value.expires_at.is_none_or(|at| now <= at));
        }
        self.clock_ms = self.clock_ms.saturating_add(ms);
    }

    pub(crate) fn del(&mut self, key: &str) -> bool {
        let existed = self.live(key).is_some();
        self.keys.remove(key);
        existed
    }

    pub(crate) fn dump(&mut self, key: &str) -> Option<Snapshot> {
        self.live(key).cloned()
    }

    pub(crate) fn restore(&mut self, key: &str, snapshot: Snapshot) {
        self.keys.insert(key.to_owned(), snapshot);
    }

    /// The key's fields and values (none if it does not exist).
    pub(crate) fn hash(&mut self, key: &str) -> BTreeMap<String, String> {
        self.live(key)
            .map(|value| value.fields.iter().cloned().collect())
            .unwrap_or_default()
    }

    pub(crate) fn command_counts(&self) -> BTreeMap<String, u64> {
        self.counts
            .iter()
            .map(|(k, v)| ((*k).to_owned(), *v))
            .collect()
    }

    pub(crate) fn reset_command_counts(&mut self) {
        self.counts.clear();
    }

    /// Counts a call that Redis's `INFO commandstats` counts (the EVALSHA around a script).
    pub(crate) fn count(&mut self, command: &'static str) {
        *self.counts.entry(command).or_default() += 1;
    }

    /// Runs one command from a script. Unknown commands and wrong arities are refused before they
    /// run, with the texts Redis gives scripts, and are not counted (Redis counts neither in
    /// `calls`); the rest count, even when the command itself answers an error.
    pub(crate) fn execute(&mut self, args: &[String]) -> Reply {
        let Some(name) = args.first() else {
            return error("Please specify at least one argument for this redis lib call");
        };
        let Some((command, arity)) = COMMANDS.iter().find(|(c, _)| c.eq_ignore_ascii_case(name))
        else {
            return error("Unknown Redis command called from script");
        };
        let fits = match *arity {
            Arity::Exactly(n) => args.len() == n,
            Arity::AtLeast(n) => args.len() >= n,
        };
        if !fits {
            return error("Wrong number of args calling Redis command from script");
        }
        self.count(command);
        let (key, rest) = (
            args.get(1).map_or("", String::as_str),
            args.get(2..).unwrap_or(&[]),
        );
        match *command {
            "hgetall" => self.hgetall(key),
            "hset" => self.hset(key, rest),
            "hdel" => self.hdel(key, rest),
            "pexpire" => self.pexpire(key, rest),
            "info" => Reply::Bulk(self.info.reply(self.clock_ms, &args[1..])),
            "del" => Reply::Int(self.count_keys(&args[1..], Self::del)),
            "exists" => Reply::Int(self.count_keys(&args[1..], |s, k| s.live(k).is_some())),
            "pttl" => self.pttl(key),
            "time" => self.time(),
            "hget" => self.hget(key, &rest[0]),
            _ => unreachable!("every command in COMMANDS is served"),
        }
    }

    fn count_keys(
        &mut self,
        keys: &[String],
        mut test: impl FnMut(&mut Self, &str) -> bool,
    ) -> i64 {
        let hits = keys.iter().filter(|key| test(self, key)).count();
        i64::try_from(hits).unwrap_or(i64::MAX)
    }

    fn hgetall(&mut self, key: &str) -> Reply {
        let Some(mut pairs) = self.live(key).map(|value| value.fields.clone()) else {
            return Reply::Array(Vec::new());
        };
        if let Some(rng) = self.shuffle.as_mut() {
            pairs.shuffle(rng);
        }
        let flat = pairs
            .into_iter()
            .flat_map(|(field, value)| [Reply::Bulk(field), Reply::Bulk(value)]);
        Reply::Array(flat.collect())
    }

    fn hset(&mut self, key: &str, pairs: &[String]) -> Reply {
        if !pairs.len().is_multiple_of(2) {
            return error("wrong number of arguments for 'hset' command");
        }
        if self.live(key).is_none() {
            let value = Snapshot {
                fields: Vec::new(),
                expires_at: None,
            };
            self.keys.insert(key.to_owned(), value);
        }
        let value = self.keys.get_mut(key).expect("inserted above");
        let mut added = 0;
        for pair in pairs.chunks_exact(2) {
            // An existing field keeps its place, as in a listpack-encoded hash.
            match value.fields.iter_mut().find(|(f, _)| *f == pair[0]) {
                Some(slot) => slot.1.clone_from(&pair[1]),
                None => {
                    value.fields.push((pair[0].clone(), pair[1].clone()));
                    added += 1;
                }
            }
        }
        Reply::Int(added)
    }

    fn hdel(&mut self, key: &str, fields: &[String]) -> Reply {
        let Some(value) = self.live(key) else {
            return Reply::Int(0);
        };
        let before = value.fields.len();
        value.fields.retain(|(f, _)| !fields.contains(f));
        let removed = before - value.fields.len();
        if value.fields.is_empty() {
            self.keys.remove(key);
        }
        Reply::Int(i64::try_from(removed).unwrap_or(i64::MAX))
    }

    /// PEXPIRE without its NX/XX/GT/LT options (the scripts use none): refused as unsupported.
    fn pexpire(&mut self, key: &str, rest: &[String]) -> Reply {
        if let Some(option) = rest.get(1) {
            return error(&format!("Unsupported option {option}"));
        }
        let Some(ms) = parse_i64(&rest[0]) else {
            return error("value is not an integer or out of range");
        };
        let Some(at) = self.clock_ms.checked_add(ms) else {
            return error("invalid expire time in 'pexpire' command");
        };
        let now = self.clock_ms;
        let Some(value) = self.live(key) else {
            return Reply::Int(0);
        };
        if at > now {
            value.expires_at = Some(at);
        } else {
            // A time not in the future deletes the key at once (Redis's checkAlreadyExpired).
            self.keys.remove(key);
        }
        Reply::Int(1)
    }

    fn pttl(&mut self, key: &str) -> Reply {
        let now = self.clock_ms;
        match self.live(key) {
            None => Reply::Int(-2),
            Some(Snapshot {
                expires_at: None, ..
            }) => Reply::Int(-1),
            Some(Snapshot {
                expires_at: Some(at),
                ..
            }) => Reply::Int((*at - now).max(0)),
        }
    }

    fn time(&self) -> Reply {
        let seconds = self.clock_ms.div_euclid(1000);
        let micros = self.clock_ms.rem_euclid(1000) * 1000;
        Reply::Array(vec![
            Reply::Bulk(seconds.to_string()),
            Reply::Bulk(micros.to_string()),
        ])
    }

    fn hget(&mut self, key: &str, field: &str) -> Reply {
        let found = self
            .live(key)
            .and_then(|value| value.fields.iter().find(|(f, _)| f == field));
        found.map_or(Reply::Nil, |(_, v)| Reply::Bulk(v.clone()))
    }
}
