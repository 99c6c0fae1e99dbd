//! INFO's `server` and `replication` sections in Redis 7.0.15's text format: the same fields in
//! the same order (`cross_check.rs` compares the field names with a real server's), values of a
//! standalone master. The scripts read `run_id`, `master_replid` and the replica lines.
//! Replication offsets are 0: nothing here replicates.

use std::fmt::Write;

/// What INFO shows about the server, and the replies rendered from it: every script calls INFO,
/// and rendering it each time would cost a tenth of a script call.
pub(super) struct Info {
    started_ms: i64,
    run_id: String,
    replid: String,
    online: u32,
    syncing: u32,
    /// Replies by sections asked (server, replication) at a server clock; cleared on a change.
    rendered: Vec<((bool, bool), i64, String)>,
}

impl Info {
    pub(super) fn new(started_ms: i64) -> Self {
        Info {
            started_ms,
            run_id: String::new(),
            replid: String::new(),
            online: 0,
            syncing: 0,
            rendered: Vec::new(),
        }
    }

    pub(super) fn set_identity(&mut self, run_id: &str, replid: &str) {
        (self.run_id, self.replid) = (run_id.to_owned(), replid.to_owned());
        self.rendered.clear();
    }

    pub(super) fn identity(&self) -> (String, String) {
        (self.run_id.clone(), self.replid.clone())
    }

    pub(super) fn set_replicas(&mut self, online: u32, syncing: u32) {
        (self.online, self.syncing) = (online, syncing);
        self.rendered.clear();
    }

    /// INFO's reply for these section arguments at `clock_ms`. Redis prints the sections asked
    /// for in its own order, whatever the order of the arguments; no argument, `default`, `all`
    /// and `everything` mean every section (here: the two served). Other sections are left out,
    /// as unknown ones are.
    pub(super) fn reply(&mut self, clock_ms: i64, args: &[String]) -> String {
        let asks = |section: &str| {
            args.is_empty()
                || args.iter().any(|arg| {
                    ["default", "all", "everything", section]
                        .iter()
                        .any(|name| arg.eq_ignore_ascii_case(name))
                })
        };
        let sections = (asks("server"), asks("replication"));
        let cached = self
            .rendered
            .iter()
            .find(|(s, at, _)| *s == sections && *at == clock_ms);
        if let Some((_, _, text)) = cached {
            return text.clone();
        }
        let mut parts = Vec::new();
        if sections.0 {
            parts.push(self.server_section(clock_ms));
        }
        if sections.1 {
            parts.push(self.replication_section());
        }
        // Each section ends with CRLF; Redis puts one more between sections.
        let text = parts.join("\r\n");
        self.rendered.retain(|(_, at, _)| *at == clock_ms);
        self.rendered.push((sections, clock_ms, text.clone()));
        text
    }

    fn server_section(&self, clock_ms: i64) -> String {
        let uptime_s = (clock_ms - self.started_ms).div_euclid(1000);
        let unix_s = clock_ms.div_euclid(1000);
        let fields = [
            ("redis_version", "7.0.15".into()),
            ("redis_git_sha1", "00000000".into()),
            ("redis_git_dirty", "0".into()),
            ("redis_build_id", "0000000000000000".into()),
            ("redis_mode", "standalone".into()),
            ("os", "Linux 6.1.0 x86_64".into()),
            ("arch_bits", "64".into()),
            ("monotonic_clock", "POSIX clock_gettime".into()),
            ("multiplexing_api", "epoll".into()),
            ("atomicvar_api", "c11-builtin".into()),
            ("gcc_version", "12.2.0".into()),
            ("process_id", "1".into()),
            ("process_supervised", "no".into()),
            ("run_id", self.run_id.clone()),
            ("tcp_port", "6379".into()),
            (
                "server_time_usec",
                clock_ms.saturating_mul(1000).to_string(),
            ),
            ("uptime_in_seconds", uptime_s.to_string()),
            ("uptime_in_days", (uptime_s / 86_400).to_string()),
            ("hz", "10".into()),
            ("configured_hz", "10".into()),
            // Redis's LRU clock: seconds, 24 bits.
            ("lru_clock", (unix_s & 0xFF_FFFF).to_string()),
            ("executable", "/usr/bin/redis-server".into()),
            ("config_file", String::new()),
            ("io_threads_active", "0".into()),
        ];
        section("Server", &fields)
    }

    /// Replicas in full sync are listed and counted in `connected_slaves` as Redis 7.0 does (its
    /// `replstateToString`: `wait_bgsave` until the snapshot is made, then `send_bulk` while a
    /// disk-based sync sends it; offset 0 until they ack).
    fn replication_section(&self) -> String {
        let online = self.online;
        let mut out = String::from("# Replication\r\nrole:master\r\n");
        let total = online + self.syncing;
        let _ = write!(out, "connected_slaves:{total}\r\n");
        for i in 0..total {
            let state = if i < online { "online" } else { "wait_bgsave" };
            let port = 6380 + u64::from(i);
            let _ = write!(
                out,
                "slave{i}:ip=127.0.0.1,port={port},state={state},offset=0,lag=0\r\n"
            );
        }
        let fields = [
            ("master_failover_state", "no-failover".into()),
            ("master_replid", self.replid.clone()),
            ("master_replid2", "0".repeat(40)),
            ("master_repl_offset", "0".into()),
            ("second_repl_offset", "-1".into()),
            ("repl_backlog_active", "1".into()),
            ("repl_backlog_size", "1048576".into()),
            ("repl_backlog_first_byte_offset", "1".into()),
            ("repl_backlog_histlen", "0".into()),
        ];
        out + &section("", &fields)
    }
}

/// `# Title` (if any) and `name:value` lines, CRLF-terminated.
fn section(title: &str, fields: &[(&str, String)]) -> String {
    let mut out = String::new();
    if !title.is_empty() {
        let _ = write!(out, "# {title}\r\n");
    }
    for (name, value) in fields {
        let _ = write!(out, "{name}:{value}\r\n");
    }
    out
}
