//! The two atomic Lua scripts (renew, release) and their arguments. `redis::Script` sends
//! EVALSHA and loads the script itself on NOSCRIPT (a restarted Redis), so callers never see that.

use std::sync::OnceLock;

use redis::{Script, ScriptInvocation};

use crate::numbers::millis_u64;
use crate::rules::budget::lease::FleetShape;
use crate::rules::fleet::{ReleaseRequest, RenewRequest, Seen};

/// The renewal as Redis runs it: the shared functions, a newline, its own body.
pub(crate) const RENEW_SCRIPT: &str =
    concat!(include_str!("common.lua"), "\n", include_str!("renew.lua"));
/// The release as Redis runs it.
pub(crate) const RELEASE_SCRIPT: &str = concat!(
    include_str!("common.lua"),
    "\n",
    include_str!("release.lua")
);

fn script(cell: &'static OnceLock<Script>, source: &str) -> &'static Script {
    cell.get_or_init(|| Script::new(source))
}

fn renew_script() -> &'static Script {
    static CELL: OnceLock<Script> = OnceLock::new();
    script(&CELL, RENEW_SCRIPT)
}

fn release_script() -> &'static Script {
    static CELL: OnceLock<Script> = OnceLock::new();
    script(&CELL, RELEASE_SCRIPT)
}

fn invocation<'a>(script: &'a Script, key: &str, argv: Vec<String>) -> ScriptInvocation<'a> {
    let mut call = script.prepare_invoke();
    call.key(key);
    for arg in argv {
        call.arg(arg);
    }
    call
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

/// One renewal, ready to send.
pub fn renew<'a>(
    key: &str,
    node: &str,
    new_id: &str,
    shape: &FleetShape,
    request: &RenewRequest,
) -> ScriptInvocation<'a> {
    invocation(
        renew_script(),
        key,
        renew_argv(node, new_id, shape, request),
    )
}

/// The arguments of one renewal, in the order `renew.lua` reads them.
pub(crate) fn renew_argv(
    node: &str,
    new_id: &str,
    shape: &FleetShape,
    request: &RenewRequest,
) -> Vec<String> {
    let mut argv = vec![
        node.to_owned(),
        request.seq.to_string(),
        request.want.unwrap_or(-1.0).to_string(),
        request.keep.to_string(),
        request.floor_used.to_string(),
        shape.fleet_ceiling_units.to_string(),
        shape.reserve.to_string(),
        shape.max_nodes.to_string(),
        millis_u64(shape.lease).to_string(),
        request.known.fleet_id.clone(),
        request.known.version.to_string(),
        request.known.epoch.clone(),
        request.acked_seq.to_string(),
        request.acked_version.to_string(),
    ];
    argv.extend(seen_argv(request.seen.as_ref()));
    argv.extend([
        request.settle_through.to_string(),
        request.end_hold.clone().unwrap_or_default(),
        new_id.to_owned(),
        ttl_ms(shape).to_string(),
        request.floor_units.to_string(),
        millis_u64(shape.max_split).to_string(),
    ]);
    argv
}

/// A report of a state seen a lease ago: lineage, epoch, version, age in ms (-1: none).
fn seen_argv(seen: Option<&Seen>) -> [String; 4] {
    match seen {
        Some(seen) => [
            seen.fleet_id.clone(),
            seen.epoch.clone(),
            seen.version.to_string(),
            millis_u64(seen.age).to_string(),
        ],
        None => [
            String::new(),
            String::new(),
            "0".to_owned(),
            "-1".to_owned(),
        ],
    }
}

/// The release on close, ready to send.
pub fn release<'a>(
    key: &str,
    node: &str,
    new_id: &str,
    shape: &FleetShape,
    request: &ReleaseRequest,
) -> ScriptInvocation<'a> {
    invocation(
        release_script(),
        key,
        release_argv(node, new_id, shape, request),
    )
}

/// The arguments of the release, in the order `release.lua` reads them. `new_id` names the new
/// epoch should the release find the state on another server.
pub(crate) fn release_argv(
    node: &str,
    new_id: &str,
    shape: &FleetShape,
    request: &ReleaseRequest,
) -> Vec<String> {
    let mut argv = vec![
        node.to_owned(),
        request.seq.to_string(),
        request.used_units.to_string(),
        request.known.fleet_id.clone(),
    ];
    argv.extend(seen_argv(request.seen.as_ref()));
    argv.push(ttl_ms(shape).to_string());
    argv.push(request.floor_used.to_string());
    argv.push(request.known.version.to_string());
    argv.push(new_id.to_owned());
    argv.push(millis_u64(shape.max_split).to_string());
    argv
}
