//! Closing every sentinel of a JavaScript environment (the main thread or a worker) when that
//! environment tears down, so that no refresh outlives it.
//!
//! One cleanup hook per environment and a registry of weak references, rather than one hook per
//! sentinel: napi-rs never frees a hook's box when the hook is removed, and the weak reference in
//! it kept each sentinel's whole allocation alive (~1.5 KB leaked per sentinel).

use std::cell::RefCell;
use std::sync::{Arc, Weak};

use napi::bindgen_prelude::*;

use crate::shared_sentinel::SharedSentinel;

/// The live sentinels of this thread's environment (each environment has its own JS thread).
#[derive(Default)]
struct Registry {
    sentinels: Vec<Weak<SharedSentinel>>,
    /// Dead entries are dropped when the list reaches this length, so the list stays within
    /// about twice the live sentinels and pruning costs O(1) per sentinel, amortized.
    prune_at: usize,
}

thread_local! {
    static REGISTRY: RefCell<Option<Registry>> = const { RefCell::new(None) };
}

const MIN_PRUNE_AT: usize = 64;

/// Closes `shared` when this environment tears down, unless it is gone by then.
pub fn close_on_teardown(env: &Env, shared: &Arc<SharedSentinel>) -> Result<()> {
    REGISTRY.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            env.add_env_cleanup_hook((), |()| close_all())?;
        }
        let registry = slot.get_or_insert_with(Registry::default);
        if registry.sentinels.len() >= registry.prune_at {
            registry.sentinels.retain(|s| s.strong_count() > 0);
            registry.prune_at = (registry.sentinels.len() * 2).max(MIN_PRUNE_AT);
        }
        registry.sentinels.push(Arc::downgrade(shared));
        Ok(())
    })
}

fn close_all() {
    // Take the registry out first: closing never re-enters it, but a later environment on this
    // thread must start with a hook of its own.
    let registry = REGISTRY.with(|cell| cell.borrow_mut().take());
    for shared in registry.into_iter().flat_map(|r| r.sentinels) {
        if let Some(shared) = shared.upgrade() {
            shared.close();
        }
    }
}
