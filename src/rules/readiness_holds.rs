//! The service's own readiness signal, `sentinel.hold(name)` (README, Readiness): while any hold
//! is open the node is `not_ready` / `held`. A hold is pushed by the service (a cache warming, a
//! dependency it cannot serve without), never a check run on the probe path.
//!
//! (Not the reservations' held *units*, nor a fleet's holds: a readiness hold has a name and no
//! units.)

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

/// The longest hold name: names are metric labels and log fields, so they stay short.
pub const MAX_HOLD_NAME_CHARS: usize = 64;

/// Why a hold name is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HoldNameError {
    /// Not a string: its `typeof`.
    NotAString(&'static str),
    /// Empty, or longer than [`MAX_HOLD_NAME_CHARS`]: its length in characters.
    Length(usize),
    /// A character outside `[A-Za-z0-9_.:-]`, and where (counted from 1).
    Character { found: char, position: usize },
}

impl fmt::Display for HoldNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("must be a string of 1 to 64 characters from A-Z a-z 0-9 _ . : - (got ")?;
        match self {
            HoldNameError::NotAString(type_name) => write!(f, "{type_name})"),
            HoldNameError::Length(0) => f.write_str("an empty string)"),
            HoldNameError::Length(chars) => write!(f, "{chars} characters)"),
            HoldNameError::Character { found, position } => {
                write!(f, "{found:?} at position {position})")
            }
        }
    }
}

impl std::error::Error for HoldNameError {}

/// A hold's name, checked: 1 to 64 characters of `[A-Za-z0-9_.:-]`, safe in a metric label and
/// a log line as they are. Being ASCII and short it is kept inline, so a name is `Copy` and
/// opening a hold allocates nothing but its slot.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct HoldName {
    len: u8,
    bytes: [u8; MAX_HOLD_NAME_CHARS],
}

impl HoldName {
    /// The hold name rule.
    pub fn parse(name: &str) -> Result<HoldName, HoldNameError> {
        let chars = name.chars().count();
        if chars == 0 || chars > MAX_HOLD_NAME_CHARS {
            return Err(HoldNameError::Length(chars));
        }
        let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-');
        if let Some((i, found)) = name.chars().enumerate().find(|(_, c)| !allowed(*c)) {
            return Err(HoldNameError::Character {
                found,
                position: i + 1,
            });
        }
        // ASCII from here: one byte a character, at most 64.
        let mut bytes = [0; MAX_HOLD_NAME_CHARS];
        bytes[..name.len()].copy_from_slice(name.as_bytes());
        Ok(HoldName {
            len: u8::try_from(name.len()).unwrap_or(0),
            bytes,
        })
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl fmt::Debug for HoldName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for HoldName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Alphabetical, as the metric lists them.
impl Ord for HoldName {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for HoldName {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// One open hold's handle: releasing it ends that hold and no other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HoldId(u64);

/// What releasing an open hold did, for the log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Released {
    pub name: HoldName,
    /// How long the hold was open.
    pub open_for: Duration,
    /// Holds still open under the same name.
    pub still_open: usize,
}

#[derive(Debug, Clone, Copy)]
struct OpenHold {
    id: HoldId,
    name: HoldName,
    since: Duration,
}

/// The open holds, and how many are open under each name ever used (a name stays at 0 once its
/// last hold is released, so its metric series falls to 0 instead of vanishing).
#[derive(Debug, Clone, Default)]
pub struct ReadinessHolds {
    next_id: u64,
    open: Vec<OpenHold>,
    by_name: BTreeMap<HoldName, usize>,
}

impl ReadinessHolds {
    /// Opens a hold named `name` at `now`.
    pub fn open(&mut self, name: HoldName, now: Duration) -> HoldId {
        let id = HoldId(self.next_id);
        self.next_id += 1;
        self.open.push(OpenHold {
            id,
            name,
            since: now,
        });
        *self.by_name.entry(name).or_default() += 1;
        id
    }

    /// Ends the hold `id`; `None` when it had already ended (releasing twice is a no-op).
    pub fn release(&mut self, id: HoldId, now: Duration) -> Option<Released> {
        let index = self.open.iter().position(|hold| hold.id == id)?;
        let hold = self.open.swap_remove(index);
        let count = self.by_name.entry(hold.name).or_default();
        *count = count.saturating_sub(1);
        Some(Released {
            still_open: *count,
            open_for: now.saturating_sub(hold.since),
            name: hold.name,
        })
    }

    /// Whether any hold is open (readiness rule 3b).
    pub fn any_open(&self) -> bool {
        !self.open.is_empty()
    }

    /// Open holds under `name`.
    pub fn open_named(&self, name: HoldName) -> usize {
        self.by_name.get(&name).copied().unwrap_or(0)
    }

    /// Every name ever held, in alphabetical order, with its open holds now.
    pub fn by_name(&self) -> impl Iterator<Item = (HoldName, usize)> + '_ {
        self.by_name.iter().map(|(name, n)| (*name, *n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    fn name(name: &str) -> HoldName {
        HoldName::parse(name).unwrap()
    }

    #[test]
    fn names_of_1_to_64_safe_characters_pass_and_read_back() {
        for given in ["a", "warm-cache", "model:backend.v2_eu-1", &"x".repeat(64)] {
            assert_eq!(
                HoldName::parse(given).map(|n| n.to_string()),
                Ok(given.to_owned())
            );
        }
        assert!(name("b") > name("a1"), "alphabetical, not by length");
    }

    #[test]
    fn bad_names_say_what_is_wrong() {
        let rule = |name: &str| HoldName::parse(name).unwrap_err().to_string();
        assert_eq!(
            rule(""),
            "must be a string of 1 to 64 characters from A-Z a-z 0-9 _ . : - (got an empty string)"
        );
        assert!(rule(&"x".repeat(65)).ends_with("(got 65 characters)"));
        assert!(rule("warm cache").ends_with("(got ' ' at position 5)"));
        assert!(rule("café").ends_with("(got 'é' at position 4)"));
        assert!(rule("a\"b").ends_with("(got '\"' at position 2)"));
        assert!(
            rule("{x=\"1\"}").ends_with("(got '{' at position 1)"),
            "nothing that could break a metric label passes"
        );
        let not_a_string = HoldNameError::NotAString("number").to_string();
        assert!(not_a_string.ends_with("(got number)"), "{not_a_string}");
    }

    #[test]
    fn any_open_hold_holds_and_each_release_ends_its_own() {
        let mut holds = ReadinessHolds::default();
        assert!(!holds.any_open());
        let first = holds.open(name("cache"), ms(0));
        let second = holds.open(name("cache"), ms(10));
        let other = holds.open(name("backend"), ms(20));
        assert_eq!(
            (
                holds.open_named(name("cache")),
                holds.open_named(name("backend"))
            ),
            (2, 1)
        );
        let released = holds.release(first, ms(100)).unwrap();
        assert_eq!(
            released,
            Released {
                name: name("cache"),
                open_for: ms(100),
                still_open: 1
            }
        );
        assert_eq!(holds.release(first, ms(200)), None, "twice is a no-op");
        assert_eq!(
            holds.open_named(name("cache")),
            1,
            "the other hold of that name stays"
        );
        assert!(holds.release(other, ms(200)).is_some());
        assert!(holds.any_open());
        assert_eq!(holds.release(second, ms(300)).unwrap().still_open, 0);
        assert!(!holds.any_open());
    }

    #[test]
    fn a_name_once_held_stays_listed_at_zero() {
        let mut holds = ReadinessHolds::default();
        let id = holds.open(name("warming"), ms(0));
        holds.open(name("backend"), ms(0));
        holds.release(id, ms(1));
        let listed: Vec<_> = holds.by_name().collect();
        assert_eq!(listed, [(name("backend"), 1), (name("warming"), 0)]);
    }
}
