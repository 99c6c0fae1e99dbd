//! The three atomic Lua scripts and how they are called. `redis::Script` sends EVALSHA and
//! reloads the script by itself on NOSCRIPT (a restarted Redis), so callers never see that.

use std::sync::OnceLock;

use redis::aio::MultiplexedConnection;
use redis::Script;

use super::session::Renewal;
use crate::numbers::millis_u64;
use crate::rules::lease::FleetShape;

fn script(cell: &'static OnceLock<Script>, body: &'static str) -> &'static Script {
    cell.get_or_init(|| Script::new(&format!("{}\n{}", include_str!("common.lua"), body)))
}

fn renew_script() -> &'static Script {
    static CELL: OnceLock<Script> = OnceLock::new();
    script(&CELL, include_str!("renew.lua"))
}

fn release_script() -> &'static Script {
    static CELL: OnceLock<Script> = OnceLock::new();
    script(&CELL, include_str!("release.lua"))
}

fn settle_script() -> &'static Script {
    static CELL: OnceLock<Script> = OnceLock::new();
    script(&CELL, include_str!("settle.lua"))
}

/// The fleet's three keys, all under one hash tag (one Redis Cluster slot).
#[derive(Debug, Clone)]
pub struct Keys([String; 3]);

impl Keys {
    /// The fleet record (0), the leases (1), the charges (2).
    #[cfg(test)]
    pub fn name(&self, index: usize) -> &str {
        &self.0[index]
    }

    pub fn new(name: &str) -> Self {
        let tag = format!("{{spend-sentinel:{name}}}");
        Keys([
            format!("{tag}:fleet"),
            format!("{tag}:leases"),
            format!("{tag}:charges"),
        ])
    }
}

/// How long Redis keeps an idle fleet's keys: long past any lease, short enough to clean up.
fn ttl_ms(shape: &FleetShape) -> u64 {
    millis_u64(shape.lease).saturating_mul(10).max(3_600_000)
}

fn lease_ms(shape: &FleetShape) -> u64 {
    millis_u64(shape.lease)
}

pub async fn renew(
    conn: &mut MultiplexedConnection,
    keys: &Keys,
    node: &str,
    new_fleet_id: &str,
    shape: &FleetShape,
    renewal: &Renewal,
) -> redis::RedisResult<Vec<String>> {
    let mut call = renew_script().prepare_invoke();
    for key in &keys.0 {
        call.key(key);
    }
    call.arg(node)
        .arg(renewal.seq)
        .arg(renewal.want)
        .arg(renewal.keep)
        .arg(shape.fleet_ceiling_units)
        .arg(shape.reserve)
        .arg(shape.max_nodes)
        .arg(lease_ms(shape))
        .arg(&renewal.known_id)
        .arg(renewal.known_version)
        .arg(new_fleet_id)
        .arg(ttl_ms(shape));
    call.invoke_async(conn).await
}

pub async fn release(
    conn: &mut MultiplexedConnection,
    keys: &Keys,
    node: &str,
    used_units: f64,
    shape: &FleetShape,
) -> redis::RedisResult<Vec<String>> {
    let mut call = release_script().prepare_invoke();
    for key in &keys.0 {
        call.key(key);
    }
    call.arg(node).arg(used_units).arg(ttl_ms(shape));
    call.invoke_async(conn).await
}

#[allow(clippy::too_many_arguments)]
pub async fn settle(
    conn: &mut MultiplexedConnection,
    keys: &Keys,
    cutoff_ms: f64,
    known_id: &str,
    known_version: u64,
    new_fleet_id: &str,
    shape: &FleetShape,
) -> redis::RedisResult<Vec<String>> {
    let mut call = settle_script().prepare_invoke();
    for key in &keys.0 {
        call.key(key);
    }
    call.arg(cutoff_ms)
        .arg(lease_ms(shape))
        .arg(known_id)
        .arg(known_version)
        .arg(new_fleet_id)
        .arg(shape.reserve)
        .arg(shape.max_nodes)
        .arg(ttl_ms(shape));
    call.invoke_async(conn).await
}
