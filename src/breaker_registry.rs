//! The native state of each `CircuitBreaker` (shared by its JavaScript object and the metrics),
//! and the registry of the breakers created with a `name`, whose series every `metrics()` shows.

use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;

use crate::clock::{Clock, SystemClock};
use crate::metrics::Family;
use crate::rules::breaker::{Breaker, BreakerState, BreakerStats, Transition};

/// One breaker, locked per operation, and the clock it is read on.
pub struct SharedBreaker {
    breaker: Mutex<Breaker>,
    clock: Arc<dyn Clock>,
}

/// What an operation leaves behind, besides its own result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct After {
    pub generation: u64,
    pub state: BreakerState,
    /// Transitions wait in `take_transitions()`.
    pub transitions_pending: bool,
}

impl SharedBreaker {
    /// A breaker on the system clock.
    pub fn new(breaker: Breaker) -> Self {
        Self::with_clock(breaker, Arc::new(SystemClock))
    }

    /// A breaker on `clock` (a JavaScript `now` option's told clock; tests hand it fake time).
    /// Every operation and every metrics read of it is at this clock's time.
    pub fn with_clock(breaker: Breaker, clock: Arc<dyn Clock>) -> Self {
        SharedBreaker {
            breaker: Mutex::new(breaker),
            clock,
        }
    }

    /// Runs `f` now, on this breaker's clock.
    pub fn with<T>(&self, f: impl FnOnce(&mut Breaker, Duration) -> T) -> (T, After) {
        self.with_at(self.clock.now(), f)
    }

    /// Runs `f` at `now`, after applying what time alone changed (so `f` reads the breaker as
    /// of `now`), then reads what it left behind.
    pub fn with_at<T>(
        &self,
        now: Duration,
        f: impl FnOnce(&mut Breaker, Duration) -> T,
    ) -> (T, After) {
        let mut breaker = self.breaker.lock();
        breaker.state(now);
        let result = f(&mut breaker, now);
        let after = After {
            generation: breaker.generation(),
            state: breaker.state(now),
            transitions_pending: breaker.has_transitions(),
        };
        (result, after)
    }

    pub fn take_transitions(&self) -> Vec<Transition> {
        self.breaker.lock().take_transitions()
    }
}

/// Weak references by name, in the order they registered: a collected item leaves by itself.
pub struct Registry<T> {
    entries: Mutex<Vec<(String, Weak<T>)>>,
}

impl<T> Registry<T> {
    pub const fn new() -> Self {
        Registry {
            entries: Mutex::new(Vec::new()),
        }
    }

    /// Adds `item` under `name`, dropping the entries of collected items on the way.
    pub fn register(&self, name: &str, item: &Arc<T>) {
        let mut entries = self.entries.lock();
        entries.retain(|(_, item)| item.strong_count() > 0);
        entries.push((name.to_owned(), Arc::downgrade(item)));
    }

    /// The live items, one per name: two under one name would make duplicate series, so the
    /// oldest live one counts and the others wait for it to go.
    pub fn live(&self) -> Vec<(String, Arc<T>)> {
        let mut live: Vec<(String, Arc<T>)> = Vec::new();
        for (name, item) in self.entries.lock().iter() {
            if live.iter().any(|(seen, _)| seen == name) {
                continue;
            }
            if let Some(item) = item.upgrade() {
                live.push((name.clone(), item));
            }
        }
        live
    }
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Every live breaker created with a `name`.
static NAMED: Registry<SharedBreaker> = Registry::new();

pub fn register(name: &str, breaker: &Arc<SharedBreaker>) {
    NAMED.register(name, breaker);
}

/// `spend_sentinel_breaker_state` and `spend_sentinel_breaker_calls_total` of the live named
/// breakers.
pub fn families() -> Vec<Family> {
    crate::metrics::breaker_families(&readings())
}

/// Each live named breaker's state and counts, each read now on its own clock.
fn readings() -> Vec<(String, BreakerState, BreakerStats)> {
    NAMED
        .live()
        .into_iter()
        .map(|(name, breaker)| {
            let (state, stats) = breaker.with(|b, now| (b.state(now), b.stats())).0;
            (name, state, stats)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ToldClock;
    use crate::rules::breaker::{test_settings, BreakerSettings, CallOutcome};

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    /// Trips on one failure, half-opens 1 s later.
    fn shared_breaker_state() -> Breaker {
        let settings = BreakerSettings {
            failure_threshold: 1,
            ..test_settings()
        };
        Breaker::new(settings, 7)
    }

    fn shared_breaker() -> SharedBreaker {
        SharedBreaker::new(shared_breaker_state())
    }

    fn names(live: &[(String, Arc<u32>)]) -> Vec<(&str, u32)> {
        live.iter().map(|(name, n)| (name.as_str(), **n)).collect()
    }

    #[test]
    fn an_operation_reports_what_it_left_behind() {
        let breaker = shared_breaker();
        let (permit, after) = breaker.with_at(ms(0), |b, now| b.acquire(now));
        assert!(permit.is_ok());
        assert_eq!(after.state, BreakerState::Closed);
        assert!(!after.transitions_pending);
        let generation = after.generation;
        let permit = permit.unwrap();
        let ((), after) =
            breaker.with_at(ms(0), |b, now| b.settle(permit, CallOutcome::Failure, now));
        assert_eq!(after.state, BreakerState::Open);
        assert!(after.transitions_pending);
        assert_ne!(after.generation, generation);
        assert_eq!(breaker.take_transitions().len(), 1);
        assert!(!breaker.with_at(ms(0), |_, _| ()).1.transitions_pending);
    }

    #[test]
    fn an_operation_sees_what_time_alone_changed() {
        let breaker = shared_breaker();
        let permit = breaker.with_at(ms(0), |b, now| b.acquire(now)).0.unwrap();
        breaker.with_at(ms(0), |b, now| b.settle(permit, CallOutcome::Failure, now));
        breaker.take_transitions();
        // 1.5 s later the breaker has half-opened by itself: `f` sees that transition waiting.
        let (seen, after) = breaker.with_at(ms(1500), |b, _| b.has_transitions());
        assert!(seen);
        assert_eq!(after.state, BreakerState::HalfOpen);
    }

    #[test]
    fn the_registry_reads_each_breaker_on_its_own_clock() {
        let clock = Arc::new(ToldClock::default());
        let breaker = Arc::new(SharedBreaker::with_clock(
            shared_breaker_state(),
            clock.clone(),
        ));
        register("registry-reads-its-clock", &breaker);
        let state = || {
            readings()
                .into_iter()
                .find(|(name, _, _)| name == "registry-reads-its-clock")
                .map(|(_, state, _)| state)
        };
        clock.tell(ms(5000));
        let permit = breaker.with(|b, now| b.acquire(now)).0.unwrap();
        breaker.with(|b, now| b.settle(permit, CallOutcome::Failure, now));
        assert_eq!(state(), Some(BreakerState::Open), "tripped at 5 s");
        clock.tell(ms(5999));
        assert_eq!(state(), Some(BreakerState::Open));
        clock.tell(ms(6000));
        assert_eq!(
            state(),
            Some(BreakerState::HalfOpen),
            "1 s after the trip on its clock, whatever the system's says"
        );
    }

    #[test]
    fn the_oldest_live_item_of_a_name_counts() {
        let registry = Registry::new();
        let (a, b, c) = (Arc::new(1), Arc::new(2), Arc::new(3));
        registry.register("x", &a);
        registry.register("y", &b);
        registry.register("x", &c);
        assert_eq!(names(&registry.live()), [("x", 1), ("y", 2)]);
        drop(a);
        assert_eq!(names(&registry.live()), [("y", 2), ("x", 3)]);
    }

    #[test]
    fn a_collected_item_leaves_and_its_entry_is_dropped_on_the_next_registration() {
        let registry = Registry::new();
        let a = Arc::new(1);
        registry.register("x", &a);
        drop(a);
        assert!(registry.live().is_empty());
        let b = Arc::new(2);
        registry.register("y", &b);
        assert_eq!(registry.entries.lock().len(), 1);
        assert_eq!(names(&registry.live()), [("y", 2)]);
    }
}
