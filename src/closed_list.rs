//! One definition per closed list (reasons, statuses, outcomes, breaker states, …): the variants
//! and their strings are written once, and `ALL`, `COUNT`, `index()`, `as_str()` and
//! `from_name()` come from them, so a list's position, count and name cannot drift apart and no lookup can miss and
//! fall back to slot 0. Pure Rust: usable from `rules/`.
//!
//! ```ignore
//! closed_list! {
//!     /// Docs of the enum.
//!     pub enum Status {
//!         Ready => "ready",
//!         /// Docs of a variant.
//!         NotReady => "not_ready",
//!     }
//! }
//! ```
//!
//! The order is the declaration order, and it is public where indexes leave the process (the
//! admission codes, the metrics' arrays): add new variants last.

/// Declares a `#[repr(u8)]` enum with `ALL` (declaration order), `COUNT`, `index()` (its place in
/// `ALL`: the discriminant, no search), `code()` (the same as a `u8`) and `as_str()`. Checked at
/// compile time: the strings are distinct and every variant sits at its index.
macro_rules! closed_list {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$variant_meta:meta])* $variant:ident => $string:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u8)]
        $vis enum $name {
            $($(#[$variant_meta])* $variant,)+
        }

        // Not every list reads every accessor; each is a plain read of the definition above.
        #[allow(dead_code)]
        impl $name {
            /// Every variant once, in declaration order.
            pub const ALL: [$name; $name::COUNT] = [$($name::$variant,)+];
            /// How many variants there are.
            pub const COUNT: usize = [$(stringify!($variant),)+].len();
            /// Every variant's string, in declaration order.
            pub const NAMES: [&'static str; $name::COUNT] = [$($string,)+];

            /// This variant's position in `ALL`.
            pub const fn index(self) -> usize {
                self as usize
            }

            /// `index()` as a `u8` (a list has at most 256 variants: `repr(u8)`).
            pub const fn code(self) -> u8 {
                self as u8
            }

            pub const fn as_str(self) -> &'static str {
                $name::NAMES[self.index()]
            }

            /// The variant whose string is `name`, if any.
            pub fn from_name(name: &str) -> Option<$name> {
                match name {
                    $($string => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        const _: () = {
            let mut i = 0;
            while i < $name::COUNT {
                assert!(
                    $name::ALL[i].index() == i,
                    concat!(stringify!($name), ": a variant is not at its index"),
                );
                i += 1;
            }
            assert!(
                $crate::closed_list::distinct(&$name::NAMES),
                concat!(stringify!($name), ": a string is used twice"),
            );
        };
    };
}

pub(crate) use closed_list;

/// Whether no two of `names` are equal (at compile time: no hashing, no `==` on `str`).
pub const fn distinct(names: &[&str]) -> bool {
    let mut i = 0;
    while i < names.len() {
        let mut j = i + 1;
        while j < names.len() {
            if same(names[i], names[j]) {
                return false;
            }
            j += 1;
        }
        i += 1;
    }
    true
}

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    closed_list! {
        enum Sample {
            First => "first",
            Second => "second",
            Third => "third",
        }
    }

    #[test]
    fn every_variant_sits_at_its_index_under_its_string_in_declaration_order() {
        for (i, variant) in Sample::ALL.into_iter().enumerate() {
            assert_eq!(variant.index(), i);
            assert_eq!(usize::from(variant.code()), i);
        }
        assert_eq!(Sample::COUNT, 3);
        assert_eq!(
            Sample::ALL.map(Sample::as_str),
            ["first", "second", "third"]
        );
        for variant in Sample::ALL {
            assert_eq!(Sample::from_name(variant.as_str()), Some(variant));
        }
        assert_eq!(Sample::from_name("fourth"), None);
    }

    #[test]
    fn a_string_used_twice_is_caught() {
        assert!(distinct(&["a", "ab", "b"]));
        assert!(!distinct(&["a", "b", "a"]));
        assert!(!distinct(&["ready", "degraded", "ready"]));
        assert!(distinct(&[]));
    }
}
