//! The JavaScript options object → [`RawValue`], for `crate::config` to validate, and the values
//! only code gives (`logger`, `authority.inspect`) from that same read.

use napi::bindgen_prelude::*;

use crate::options::RawValue;

/// Options nest two levels; anything deeper is not ours to read (and may be cyclic).
const MAX_DEPTH: usize = 4;

pub fn to_raw(value: &Unknown<'_>) -> Result<RawValue> {
    to_raw_at(value, &mut Vec::new(), &mut |_, _| {})
}

/// The values of the options that only code gives, as the read the config validated saw them:
/// the sentinel runs with these, never with a second read of the options (a getter, a `Proxy`
/// or a change in between could answer something the config never checked).
#[derive(Default)]
pub struct CodeOptions<'a> {
    /// `logger`, whatever its type (the config refuses all but an object and `undefined`).
    pub logger: Option<Unknown<'a>>,
    /// `authority.inspect`, whatever its type (the config says whether it is a function).
    pub inspect: Option<Unknown<'a>>,
}

/// An options object (`new Sentinel`, `fromEnv`'s overrides) as the config reads it, and its
/// [`CodeOptions`] from the same pass: every member is read once.
pub fn read_options<'a>(value: &Unknown<'a>) -> Result<(RawValue, CodeOptions<'a>)> {
    let mut code = CodeOptions::default();
    let raw = to_raw_at(value, &mut Vec::new(), &mut |path, member| match path {
        [logger] if logger == "logger" => code.logger = Some(*member),
        [authority, inspect] if authority == "authority" && inspect == "inspect" => {
            code.inspect = Some(*member)
        }
        _ => {}
    })?;
    Ok((raw, code))
}

/// `value` (at `path` from the top; `keep` sees every member read, with its path) → [`RawValue`].
fn to_raw_at<'a>(
    value: &Unknown<'a>,
    path: &mut Vec<String>,
    keep: &mut dyn FnMut(&[String], &Unknown<'a>),
) -> Result<RawValue> {
    let depth = path.len();
    Ok(match value.get_type()? {
        ValueType::Undefined => RawValue::Undefined,
        ValueType::Null => RawValue::Null,
        ValueType::Boolean => RawValue::Bool(value.coerce_to_bool()?),
        ValueType::Number => RawValue::Number(value.coerce_to_number()?.get_double()?),
        ValueType::String => {
            RawValue::String(value.coerce_to_string()?.into_utf8()?.as_str()?.to_owned())
        }
        ValueType::Function => RawValue::Function,
        ValueType::Object if depth >= MAX_DEPTH => RawValue::Other("object"),
        ValueType::Object if value.is_array()? => {
            // SAFETY: `value` is an array (checked on this arm).
            let array: Array = unsafe { value.cast()? };
            let mut items = Vec::with_capacity(array.len() as usize);
            for i in 0..array.len() {
                let item: Unknown = array.get_element(i)?;
                path.push(i.to_string());
                let raw = to_raw_at(&item, path, keep);
                path.pop();
                items.push(raw?);
            }
            RawValue::Array(items)
        }
        ValueType::Object => {
            // SAFETY: `value` is an object (checked on this arm).
            let object: Object = unsafe { value.cast()? };
            let names: Vec<String> = Object::keys(&object)?;
            let mut members = Vec::with_capacity(names.len());
            for name in names {
                let member: Unknown<'a> = object.get_named_property(&name)?;
                path.push(name.clone());
                keep(path, &member);
                let raw = to_raw_at(&member, path, keep);
                path.pop();
                members.push((name, raw?));
            }
            RawValue::Object(members)
        }
        other => RawValue::Other(type_name(other)),
    })
}

/// A value's `typeof`, as messages name it (`null` as "null").
pub fn type_name(kind: ValueType) -> &'static str {
    match kind {
        ValueType::Undefined => "undefined",
        ValueType::Null => "null",
        ValueType::Boolean => "boolean",
        ValueType::Number => "number",
        ValueType::String => "string",
        ValueType::Symbol => "symbol",
        ValueType::Object => "object",
        ValueType::Function => "function",
        ValueType::External => "external",
        ValueType::BigInt => "bigint",
        _ => "unknown",
    }
}
