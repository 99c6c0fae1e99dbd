//! The option schema and the reader that parses options by it.
//!
//! [`catalog`] describes every option once (path, type, default, range, limit, rule, doc);
//! [`Section`] reads an options object through it; [`env`] names an environment variable after
//! each option and [`EnvOptions`] reads `Sentinel.fromEnv`'s options by those names. The parsers in `crate::config` build on
//! these, and `js/option-types.d.ts` and the option tables of docs/ are generated from the
//! catalog (see `docs`). Nothing here knows what a configuration means, and nothing here
//! depends on `crate::config`.

pub mod catalog;
pub mod env;
mod from_env;
pub mod limits;
mod raw;
pub mod schema;
mod section;

#[cfg(test)]
mod docs;
#[cfg(test)]
mod render;

pub use from_env::EnvOptions;
#[cfg(test)]
pub use raw::build;
pub use raw::{error, ConfigError, RawValue};
pub use section::{check_length, is_env_name, Section};
