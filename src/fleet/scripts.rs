//! The two atomic Lua scripts (renew, release) and their arguments. `redis::Script` sends
//! EVALSHA and loads the script itself on NOSCRIPT (a restarted Redis), so callers never see that.

use std::sync::OnceLock;

use redis::{Script, ScriptInvocation};

use crate::numbers::millis_u64;
use crate::rules::budget::lease::FleetShape;
use crate::rules::fleet::{ReleaseRequest, RenewRequest};

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

/// The fleet's one key: its whole state, under the hash tag `{spend-sentinel:<name>}` (one Redis
/// Cluster slot).
pub fn fleet_key(name: &str) -> String {
    format!("{{spend-sentinel:{name}}}")
}

/// How long Redis keeps an idle fleet's state: long past any lease, short enough to clean up.
fn ttl_ms(shape: &FleetShape) -> u64 {
    millis_u64(shape.lease).saturating_mul(10).max(3_600_000)
}

/// The arguments of one renewal, in the order `renew.lua` reads them.
pub fn renew<'a>(
    key: &str,
    node: &str,
    new_id: &str,
    shape: &FleetShape,
    request: &RenewRequest,
) -> ScriptInvocation<'a> {
    let mut call = renew_script().prepare_invoke();
    call.key(key)
        .arg(node)
        .arg(request.seq)
        .arg(request.want.unwrap_or(-1.0))
        .arg(request.keep)
        .arg(shape.fleet_ceiling_units)
        .arg(shape.reserve)
        .arg(shape.max_nodes)
        .arg(millis_u64(shape.lease))
        .arg(&request.known.fleet_id)
        .arg(request.known.version)
        .arg(&request.known.epoch)
        .arg(request.acked_seq)
        .arg(request.clock_to_ms.unwrap_or(-1.0))
        .arg(request.settle_through)
        .arg(request.end_hold.as_deref().unwrap_or(""))
        .arg(new_id)
        .arg(ttl_ms(shape));
    call
}

/// The arguments of the release, in the order `release.lua` reads them.
pub fn release<'a>(
    key: &str,
    node: &str,
    shape: &FleetShape,
    request: &ReleaseRequest,
) -> ScriptInvocation<'a> {
    let mut call = release_script().prepare_invoke();
    call.key(key)
        .arg(node)
        .arg(request.seq)
        .arg(request.used_units)
        .arg(millis_u64(shape.lease))
        .arg(&request.known.fleet_id)
        .arg(request.clock_to_ms.unwrap_or(-1.0))
        .arg(ttl_ms(shape));
    call
}
