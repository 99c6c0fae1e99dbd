//! A budget fixed at construction (`budget.nodes` / `budget.share`): the math that turns money
//! into a node budget and a stale window, node budget = b × share and w by
//! [`stale_window_seconds`], and the limits a window must keep ([`Budget`], [`BudgetError`]). A
//! fleet checks its options with the same math, for its largest node budget.

use std::fmt;
use std::time::Duration;

use super::window::{ceiling_seconds, stale_window_seconds, MAX_STALE_WINDOW_SECONDS};
use crate::rules::cadence::{MIN_DEFAULT_WINDOW_MS, MIN_REFRESH_INTERVAL_MS};
use crate::rules::JsNumber;

/// The `budget` options as given (already type-checked: finite numbers).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BudgetInput {
    /// b: fleet-wide ceiling of units admitted on unverified evidence.
    pub fleet_ceiling_units: f64,
    /// r: this node's maximum admission rate, units per second.
    pub max_units_per_second: f64,
    /// Fleet size; this node's share is `1 / nodes`.
    pub nodes: Option<f64>,
    /// This node's share of b, given directly (0 < share ≤ 1).
    pub share: Option<f64>,
    /// Optional cap on the stale window, seconds (see [`stale_window_seconds`]).
    pub max_stale_seconds: Option<f64>,
}

/// What the budget means for this node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// b × share: the units this node may admit on unverified evidence.
    pub node_budget_units: f64,
    /// w = min(node budget / r, `maxStaleSeconds`): how long evidence stays usable.
    pub stale_window: Duration,
    /// r, as given.
    pub max_units_per_second: f64,
}

impl Budget {
    /// node budget / r, seconds: the longest stale window the ceiling allows (the window itself
    /// unless `maxStaleSeconds` lowers it).
    pub fn ceiling_seconds(&self) -> f64 {
        ceiling_seconds(self.node_budget_units, self.max_units_per_second)
    }
}

/// Why a budget is not acceptable. Each names the option at fault (`option()`).
#[derive(Debug, Clone, PartialEq)]
pub enum BudgetError {
    NotPositive {
        option: &'static str,
        value: f64,
    },
    NodesNotWhole {
        value: f64,
    },
    ShareOutOfRange {
        value: f64,
    },
    NodesAndShare,
    /// `maxStaleSeconds` above node budget / r: a window the ceiling does not allow.
    MaxStaleAboveCeiling {
        value: f64,
        ceiling: f64,
    },
    /// `given`: `maxStaleSeconds` itself is longer than [`MAX_STALE_WINDOW_SECONDS`]; otherwise
    /// the window node budget / r is, with no cap given.
    WindowTooLong {
        window_seconds: f64,
        given: bool,
    },
    /// node budget / r is not a finite number (b near the largest float, r near zero).
    CeilingOverflows,
    /// The window is no longer than [`MIN_REFRESH_INTERVAL_MS`]: no cadence fits in it.
    /// `given`: the cap `maxStaleSeconds` set it.
    WindowTooShort {
        window_seconds: f64,
        given: bool,
    },
}

impl BudgetError {
    /// The option path (as the user wrote it) that breaks a rule.
    pub fn option(&self) -> &'static str {
        match self {
            BudgetError::NotPositive { option, .. } => option,
            BudgetError::NodesNotWhole { .. } => "budget.nodes",
            BudgetError::ShareOutOfRange { .. } => "budget.share",
            BudgetError::NodesAndShare => "budget.share",
            BudgetError::MaxStaleAboveCeiling { .. } => "budget.maxStaleSeconds",
            BudgetError::WindowTooLong { .. } => "budget.maxStaleSeconds",
            BudgetError::CeilingOverflows => "budget.maxUnitsPerSecond",
            BudgetError::WindowTooShort { given: true, .. } => "budget.maxStaleSeconds",
            BudgetError::WindowTooShort { given: false, .. } => "budget",
        }
    }
}

impl BudgetError {
    /// The rule broken, without the option path (see [`BudgetError::option`]).
    pub fn rule(&self) -> String {
        match self {
            BudgetError::NotPositive { value, .. } => {
                format!(
                    "must be a finite number greater than 0 (got {})",
                    JsNumber(*value)
                )
            }
            BudgetError::NodesNotWhole { value } => {
                format!("must be a whole number ≥ 1 (got {})", JsNumber(*value))
            }
            BudgetError::ShareOutOfRange { value } => {
                format!(
                    "must be greater than 0 and at most 1 (got {})",
                    JsNumber(*value)
                )
            }
            BudgetError::NodesAndShare => {
                "give either budget.nodes or budget.share, not both".to_owned()
            }
            BudgetError::MaxStaleAboveCeiling { value, ceiling } => format!(
                "must be at most node budget / maxUnitsPerSecond = {} s (got {}); a longer \
                 window would let this node pass its share of the ceiling",
                JsNumber(*ceiling),
                JsNumber(*value)
            ),
            BudgetError::WindowTooLong {
                window_seconds,
                given: true,
            } => format!(
                "must be at most {MAX_STALE_WINDOW_SECONDS} s (7 days) (got {})",
                JsNumber(*window_seconds)
            ),
            BudgetError::WindowTooLong {
                window_seconds,
                given: false,
            } => format!(
                "the stale window node budget / maxUnitsPerSecond = {} s is longer than the \
                 supported {MAX_STALE_WINDOW_SECONDS} s (7 days); give budget.maxStaleSeconds \
                 (at most {MAX_STALE_WINDOW_SECONDS}) to cap it",
                JsNumber(*window_seconds)
            ),
            BudgetError::CeilingOverflows => {
                "node budget / maxUnitsPerSecond overflows a number: the budget is too large \
                 for so small a rate"
                    .to_owned()
            }
            BudgetError::WindowTooShort {
                window_seconds,
                given,
            } => format!(
                "{} = {} s is too short: refreshes are at least {MIN_REFRESH_INTERVAL_MS} ms \
                 apart, so the window must be longer than that (at least {:.1} ms with the \
                 default refresh cadence)",
                if *given {
                    "the stale window"
                } else {
                    "the stale window node budget / maxUnitsPerSecond"
                },
                JsNumber(*window_seconds),
                MIN_DEFAULT_WINDOW_MS
            ),
        }
    }
}

impl fmt::Display for BudgetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.option(), self.rule())
    }
}

impl std::error::Error for BudgetError {}

/// This node's fraction of b: `1 / nodes`, or `share` given directly; 1 when neither is given.
pub fn node_share(input: &BudgetInput) -> Result<f64, BudgetError> {
    match (input.nodes, input.share) {
        (Some(_), Some(_)) => Err(BudgetError::NodesAndShare),
        (Some(nodes), None) if nodes >= 1.0 && nodes.fract() == 0.0 && nodes.is_finite() => {
            Ok(1.0 / nodes)
        }
        (Some(nodes), None) => Err(BudgetError::NodesNotWhole { value: nodes }),
        (None, Some(share)) if share > 0.0 && share <= 1.0 => Ok(share),
        (None, Some(share)) => Err(BudgetError::ShareOutOfRange { value: share }),
        (None, None) => Ok(1.0),
    }
}

fn require_positive(option: &'static str, value: f64) -> Result<f64, BudgetError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(BudgetError::NotPositive { option, value })
    }
}

/// The budget math (README): node budget = b × share; w = min(node budget / r,
/// `maxStaleSeconds`) ([`stale_window_seconds`]). A `maxStaleSeconds` above node budget / r
/// contradicts the ceiling and is refused (a fleet checks it against its largest node budget,
/// floor + pool, the same way); so is a window longer than [`MAX_STALE_WINDOW_SECONDS`] (it also
/// bounds every later conversion of the window to a `Duration`) or too short for any cadence.
pub fn compute_budget(input: &BudgetInput) -> Result<Budget, BudgetError> {
    let b = require_positive("budget.unverifiedUnits", input.fleet_ceiling_units)?;
    let r = require_positive("budget.maxUnitsPerSecond", input.max_units_per_second)?;
    let node_budget_units = b * node_share(input)?;
    let ceiling = ceiling_seconds(node_budget_units, r);
    if !ceiling.is_finite() {
        return Err(BudgetError::CeilingOverflows);
    }
    let cap = input
        .max_stale_seconds
        .map(|value| require_positive("budget.maxStaleSeconds", value))
        .transpose()?;
    if let Some(value) = cap.filter(|cap| *cap > ceiling) {
        return Err(BudgetError::MaxStaleAboveCeiling { value, ceiling });
    }
    let window_seconds = stale_window_seconds(node_budget_units, r, cap);
    if window_seconds > MAX_STALE_WINDOW_SECONDS {
        return Err(BudgetError::WindowTooLong {
            window_seconds,
            given: cap.is_some(),
        });
    }
    if window_seconds * 1000.0 <= MIN_REFRESH_INTERVAL_MS {
        return Err(BudgetError::WindowTooShort {
            window_seconds,
            given: window_seconds < ceiling,
        });
    }
    Ok(Budget {
        node_budget_units,
        // In range: positive, finite and at most 7 days (checked above).
        stale_window: Duration::from_secs_f64(window_seconds),
        max_units_per_second: r,
    })
}

/// The seed example as options: b = 200, r = 20, 2 nodes; for tests.
#[cfg(test)]
pub fn seed_input() -> BudgetInput {
    BudgetInput {
        fleet_ceiling_units: 200.0,
        max_units_per_second: 20.0,
        nodes: Some(2.0),
        share: None,
        max_stale_seconds: None,
    }
}

/// The seed example's budget (100 units, a 5 s window), for tests.
#[cfg(test)]
pub fn seed_budget() -> Budget {
    compute_budget(&seed_input()).expect("the seed example is valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_example_two_nodes_gives_100_units_and_5_seconds() {
        let budget = compute_budget(&seed_input()).unwrap();
        assert_eq!(budget.node_budget_units, 100.0);
        assert_eq!(budget.stale_window, Duration::from_secs(5));
    }

    #[test]
    fn the_ceiling_is_node_budget_over_rate_even_when_max_stale_lowers_the_window() {
        let input = BudgetInput {
            max_stale_seconds: Some(2.0),
            ..seed_input()
        };
        let budget = compute_budget(&input).unwrap();
        assert_eq!(budget.stale_window, Duration::from_secs(2));
        assert_eq!(budget.ceiling_seconds(), 5.0);
        let quarter = BudgetInput {
            nodes: None,
            share: Some(0.25),
            ..seed_input()
        };
        assert_eq!(compute_budget(&quarter).unwrap().ceiling_seconds(), 2.5);
    }

    #[test]
    fn seed_example_quarter_share_gives_50_units_and_2_5_seconds() {
        let input = BudgetInput {
            nodes: None,
            share: Some(0.25),
            ..seed_input()
        };
        let budget = compute_budget(&input).unwrap();
        assert_eq!(budget.node_budget_units, 50.0);
        assert_eq!(budget.stale_window, Duration::from_millis(2500));
    }

    #[test]
    fn default_share_is_the_whole_budget() {
        let input = BudgetInput {
            nodes: None,
            ..seed_input()
        };
        let budget = compute_budget(&input).unwrap();
        assert_eq!(budget.node_budget_units, 200.0);
        assert_eq!(budget.stale_window, Duration::from_secs(10));
    }

    #[test]
    fn max_stale_lowers_the_window_and_one_above_the_ceiling_is_refused() {
        for (cap, window) in [(4.0, 4.0), (5.0, 5.0)] {
            let budget = compute_budget(&BudgetInput {
                max_stale_seconds: Some(cap),
                ..seed_input()
            })
            .unwrap();
            assert_eq!(
                budget.stale_window,
                Duration::from_secs_f64(window),
                "{cap}"
            );
            assert_eq!(
                budget.stale_window.as_secs_f64(),
                stale_window_seconds(budget.node_budget_units, 20.0, Some(cap)),
                "the one window rule, shared with the fleet (lease.rs)"
            );
        }
        let above = compute_budget(&BudgetInput {
            max_stale_seconds: Some(6.0),
            ..seed_input()
        });
        assert_eq!(
            above.unwrap_err(),
            BudgetError::MaxStaleAboveCeiling {
                value: 6.0,
                ceiling: 5.0
            }
        );
    }

    #[test]
    fn nodes_and_share_together_are_refused() {
        let input = BudgetInput {
            share: Some(0.5),
            ..seed_input()
        };
        assert_eq!(
            compute_budget(&input).unwrap_err(),
            BudgetError::NodesAndShare
        );
    }

    #[test]
    fn bad_numbers_name_their_option() {
        let cases = [
            (
                BudgetInput {
                    fleet_ceiling_units: 0.0,
                    ..seed_input()
                },
                "budget.unverifiedUnits",
            ),
            (
                BudgetInput {
                    fleet_ceiling_units: f64::NAN,
                    ..seed_input()
                },
                "budget.unverifiedUnits",
            ),
            (
                BudgetInput {
                    max_units_per_second: -1.0,
                    ..seed_input()
                },
                "budget.maxUnitsPerSecond",
            ),
            (
                BudgetInput {
                    max_units_per_second: f64::INFINITY,
                    ..seed_input()
                },
                "budget.maxUnitsPerSecond",
            ),
            (
                BudgetInput {
                    nodes: Some(0.0),
                    ..seed_input()
                },
                "budget.nodes",
            ),
            (
                BudgetInput {
                    nodes: Some(1.5),
                    ..seed_input()
                },
                "budget.nodes",
            ),
            (
                BudgetInput {
                    nodes: None,
                    share: Some(0.0),
                    ..seed_input()
                },
                "budget.share",
            ),
            (
                BudgetInput {
                    nodes: None,
                    share: Some(1.01),
                    ..seed_input()
                },
                "budget.share",
            ),
            (
                BudgetInput {
                    max_stale_seconds: Some(0.0),
                    ..seed_input()
                },
                "budget.maxStaleSeconds",
            ),
        ];
        for (input, option) in cases {
            let err = compute_budget(&input).unwrap_err();
            assert_eq!(err.option(), option, "{input:?}");
            assert!(err.to_string().starts_with(option), "{err}");
        }
    }

    #[test]
    fn windows_past_seven_days_are_refused_instead_of_overflowing() {
        // 1e20 units at 1/s: a window no Duration can hold (it used to abort the process).
        for (fleet_ceiling_units, max_units_per_second) in [(1e20, 1.0), (f64::MAX, 1.0)] {
            let input = BudgetInput {
                fleet_ceiling_units,
                max_units_per_second,
                nodes: None,
                ..seed_input()
            };
            let err = compute_budget(&input).unwrap_err();
            assert!(
                matches!(err, BudgetError::WindowTooLong { given: false, .. }),
                "{err}"
            );
            assert!(err.to_string().contains("budget.maxStaleSeconds"), "{err}");
        }
        let capped = BudgetInput {
            fleet_ceiling_units: 1e20,
            max_units_per_second: 1.0,
            nodes: None,
            max_stale_seconds: Some(MAX_STALE_WINDOW_SECONDS),
            ..seed_input()
        };
        let budget = compute_budget(&capped).unwrap();
        assert_eq!(budget.stale_window, Duration::from_secs(7 * 24 * 3600));
        let too_long = BudgetInput {
            max_stale_seconds: Some(MAX_STALE_WINDOW_SECONDS + 1.0),
            ..capped
        };
        assert_eq!(
            compute_budget(&too_long).unwrap_err(),
            BudgetError::WindowTooLong {
                window_seconds: MAX_STALE_WINDOW_SECONDS + 1.0,
                given: true
            }
        );
    }

    #[test]
    fn a_ceiling_that_overflows_is_refused_even_under_max_stale() {
        let input = BudgetInput {
            fleet_ceiling_units: f64::MAX,
            max_units_per_second: 5e-324,
            nodes: Some(1.0),
            max_stale_seconds: Some(1.0),
            ..seed_input()
        };
        assert_eq!(
            compute_budget(&input).unwrap_err(),
            BudgetError::CeilingOverflows
        );
    }

    #[test]
    fn a_window_no_cadence_fits_is_refused_by_the_budget_math() {
        // b = 0.01 at 1000/s: a 10 µs window used to refresh ~450 times a second; 1e-300 s
        // became a zero window.
        for (b, r, max_stale) in [
            (0.01, 1000.0, None),
            (1e-300, 0.01, Some(1e-300)),
            (1.0, 50.0, None),
        ] {
            let err = compute_budget(&BudgetInput {
                fleet_ceiling_units: b,
                max_units_per_second: r,
                nodes: None,
                max_stale_seconds: max_stale,
                ..seed_input()
            })
            .unwrap_err();
            assert!(matches!(err, BudgetError::WindowTooShort { .. }), "{err}");
            assert!(err.to_string().contains("at least 66.7 ms"), "{err}");
        }
    }
}
