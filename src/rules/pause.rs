//! The pause between two refreshes, as a decision: how long the refresh loop sleeps, when it is
//! cut short, and how it ends. The loop (`crate::refresher`) reads the clock and the state,
//! draws, and sleeps until what this answers; nothing here waits or draws.
//!
//! A pause is drawn once (`draw`, uniform in [0, 1)) and re-planned with that same draw whenever
//! the window may have changed (a new lease, a lease deadline): it follows the cadence of the
//! window of the moment but is never lengthened, so a grant cannot postpone a refresh that a
//! smaller window had planned.

use std::time::Duration;

use super::budget::lease::FleetBudget;
use super::cadence::{Cadence, CadencePlan};

/// Why a pause ended: its time was up, or a refresh on demand was due first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PauseEnd {
    Elapsed,
    OnDemand,
}

/// What the refresh loop waits for next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wait {
    /// The pause ends then, unless something wakes the loop first.
    pub until: Duration,
    /// How it ends if nothing does.
    pub ends: PauseEnd,
    /// The next moment the budget changes by time alone (a lease deadline), when it comes
    /// before `until`: the window shrinks then, so the loop wakes and re-plans.
    pub replan_at: Option<Duration>,
}

/// One pause, from the moment it started.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pause {
    started: Duration,
    draw: f64,
    until: Duration,
}

impl Pause {
    /// The pause that starts at `started`, drawn (`draw`, uniform in [0, 1)) for the cadence of
    /// that moment.
    pub fn start(started: Duration, draw: f64, cadence: &Cadence) -> Self {
        Pause {
            started,
            draw,
            until: started + cadence.pause(draw),
        }
    }

    pub fn started(&self) -> Duration {
        self.started
    }

    /// What to wait for, given when a refresh must go out before a lease lapses
    /// ([`end_before_lapse`]), when one is due on demand (`refresh_on_demand::demand_due`), and when the
    /// budget next changes by time alone. A lapse only ever shortens the pause, for good: the
    /// evidence must be fresh before the deadline however the window changes meanwhile.
    pub fn wait(
        &mut self,
        before_lapse: Option<Duration>,
        on_demand: Option<Duration>,
        next_change: Option<Duration>,
    ) -> Wait {
        if let Some(due) = before_lapse {
            self.until = self.until.min(due);
        }
        let on_demand = on_demand.filter(|at| *at < self.until);
        let until = on_demand.unwrap_or(self.until);
        Wait {
            until,
            ends: if on_demand.is_some() {
                PauseEnd::OnDemand
            } else {
                PauseEnd::Elapsed
            },
            replan_at: next_change.filter(|at| *at < until),
        }
    }

    /// Woken at `now` before the pause ended: the same draw, for `cadence` (that of the window
    /// now), never lengthened. True when the pause is over.
    pub fn replan(&mut self, now: Duration, cadence: &Cadence) -> bool {
        self.until = self.until.min(self.started + cadence.pause(self.draw));
        now >= self.until
    }
}

/// When a pause that started at `started` must end so that fresh evidence is in hand before the
/// lease deadline shrinks the window to the floor's (see [`FleetBudget::refresh_before_lapse`]),
/// with evidence from `evidence_at`; never sooner than the floor's shortest pause after
/// `started`, so an authority that keeps failing is not called in a loop.
pub fn end_before_lapse(
    fleet: &FleetBudget,
    plan: &CadencePlan,
    now: Duration,
    evidence_at: Option<Duration>,
    started: Duration,
) -> Option<Duration> {
    let due = fleet.refresh_before_lapse(now, evidence_at)?;
    let floor_pause = plan.at(fleet.floor_window()).min_interval;
    Some(due.max(started + floor_pause))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::budget::lease::{example_shape, FleetShape, Lease};

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    /// Pauses of 1 to 3 s.
    fn one_to_three() -> Cadence {
        Cadence {
            min_interval: ms(1000),
            max_interval: ms(3000),
            timeout: ms(500),
        }
    }

    #[test]
    fn a_pause_lasts_its_draw_of_the_cadence_from_its_start() {
        let mut pause = Pause::start(ms(10_000), 0.25, &one_to_three());
        assert_eq!(
            pause.wait(None, None, None),
            Wait {
                until: ms(11_500),
                ends: PauseEnd::Elapsed,
                replan_at: None
            }
        );
    }

    #[test]
    fn a_re_planned_pause_keeps_its_draw_and_is_never_lengthened() {
        let mut pause = Pause::start(ms(10_000), 0.5, &one_to_three());
        // The window shrank: pauses of 0.5 to 1.5 s, the same draw gives 1 s from the start.
        let shorter = Cadence {
            min_interval: ms(500),
            max_interval: ms(1500),
            timeout: ms(500),
        };
        assert!(!pause.replan(ms(10_400), &shorter));
        assert_eq!(pause.wait(None, None, None).until, ms(11_000));
        // It grew again (a grant): the pause stays as short as it became.
        assert!(!pause.replan(ms(10_600), &one_to_three()));
        assert_eq!(pause.wait(None, None, None).until, ms(11_000));
        assert!(pause.replan(ms(11_000), &one_to_three()), "over at its end");
    }

    #[test]
    fn a_pause_re_planned_below_the_time_already_paused_is_over() {
        let mut pause = Pause::start(ms(0), 1.0, &one_to_three());
        let tiny = Cadence {
            min_interval: ms(20),
            max_interval: ms(40),
            timeout: ms(10),
        };
        assert!(pause.replan(ms(2000), &tiny));
    }

    #[test]
    fn a_refresh_on_demand_ends_the_pause_only_when_it_comes_first() {
        let mut pause = Pause::start(ms(0), 0.5, &one_to_three());
        assert_eq!(
            pause.wait(None, Some(ms(700)), None),
            Wait {
                until: ms(700),
                ends: PauseEnd::OnDemand,
                replan_at: None
            }
        );
        let at_the_end = pause.wait(None, Some(ms(2000)), None);
        assert_eq!(
            (at_the_end.until, at_the_end.ends),
            (ms(2000), PauseEnd::Elapsed),
            "due no sooner than the pause's end: an ordinary refresh"
        );
    }

    #[test]
    fn the_loop_wakes_for_a_budget_change_only_before_the_pause_ends() {
        let mut pause = Pause::start(ms(0), 0.5, &one_to_three());
        assert_eq!(
            pause.wait(None, None, Some(ms(1999))).replan_at,
            Some(ms(1999))
        );
        assert_eq!(pause.wait(None, None, Some(ms(2000))).replan_at, None);
        assert_eq!(
            pause.wait(None, Some(ms(500)), Some(ms(800))).replan_at,
            None,
            "the pause ends on demand first"
        );
    }

    #[test]
    fn a_lapse_cuts_the_pause_for_good() {
        let mut pause = Pause::start(ms(0), 0.5, &one_to_three());
        assert_eq!(pause.wait(Some(ms(1200)), None, None).until, ms(1200));
        assert_eq!(
            pause.wait(None, None, None).until,
            ms(1200),
            "still cut once the lease moved on"
        );
        assert_eq!(
            pause.wait(Some(ms(5000)), None, None).until,
            ms(1200),
            "a later deadline never lengthens it"
        );
    }

    /// b = 400, r = 20, 4 nodes, reserve 0.25: a floor's window of 1.25 s (scaled pauses from
    /// 0.375 s); a grant of 100 until `deadline`.
    fn leased_until(deadline: Duration) -> FleetBudget {
        let mut budget = FleetBudget::new(FleetShape {
            fleet_ceiling_units: 400.0,
            ..example_shape()
        });
        budget.set_lease(Some(Lease {
            grant_units: 100.0,
            deadline,
        }));
        budget
    }

    #[test]
    fn before_a_lapse_the_pause_ends_half_the_floors_window_before_the_deadline() {
        let fleet = leased_until(ms(10_000));
        let plan = CadencePlan::ScaledForFleet;
        assert_eq!(
            end_before_lapse(&fleet, &plan, ms(5000), Some(ms(4000)), ms(5000)),
            Some(ms(10_000 - 625))
        );
        assert_eq!(
            end_before_lapse(&fleet, &plan, ms(9000), Some(ms(8800)), ms(9000)),
            None,
            "evidence young enough for the floor's window at the deadline"
        );
    }

    #[test]
    fn before_a_lapse_the_pause_is_never_shorter_than_the_floors_shortest() {
        let fleet = leased_until(ms(10_000));
        assert_eq!(
            end_before_lapse(
                &fleet,
                &CadencePlan::ScaledForFleet,
                ms(9500),
                Some(ms(0)),
                ms(9500)
            ),
            Some(ms(9500 + 375)),
            "due at 9.375 s, already past: the floor's 0.375 s pause still applies"
        );
    }
}
