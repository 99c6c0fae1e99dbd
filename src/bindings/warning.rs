//! `process.emitWarning`: how a sentinel with no `logger` still tells of a mistake that would
//! otherwise pass in silence (Node prints it on stderr unless warnings are turned off).

use napi::bindgen_prelude::*;

/// The `code` of the warning for an `inspect` that answered something that is not an outcome.
pub const INSPECT_VALUE: &str = "SPEND_SENTINEL_INSPECT_VALUE";

/// `process.emitWarning(message, { code })`. A throw (a patched `emitWarning`) is cleared by
/// napi and ignored: a warning must not break the sentinel.
pub fn emit(env: &Env, message: &str, code: &str) -> Result<()> {
    let process: Object = env.get_global()?.get_named_property("process")?;
    let emit_warning: Function<FnArgs<(&str, Object)>, Unknown> =
        process.get_named_property("emitWarning")?;
    let mut options = Object::new(env)?;
    options.set_named_property("code", code)?;
    emit_warning.call(FnArgs::from((message, options)))?;
    Ok(())
}
