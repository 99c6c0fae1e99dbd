//! The JavaScript options object → [`RawValue`], for `crate::config` to validate.

use napi::bindgen_prelude::*;

use crate::options::RawValue;

/// Options nest two levels; anything deeper is not ours to read (and may be cyclic).
const MAX_DEPTH: usize = 4;

pub fn to_raw(value: &Unknown<'_>) -> Result<RawValue> {
    to_raw_at(value, 0)
}

fn to_raw_at(value: &Unknown<'_>, depth: usize) -> Result<RawValue> {
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
                items.push(to_raw_at(&item, depth + 1)?);
            }
            RawValue::Array(items)
        }
        ValueType::Object => {
            // SAFETY: `value` is an object (checked on this arm).
            let object: Object = unsafe { value.cast()? };
            let names: Vec<String> = Object::keys(&object)?;
            let mut members = Vec::with_capacity(names.len());
            for name in names {
                let member: Unknown = object.get_named_property(&name)?;
                members.push((name, to_raw_at(&member, depth + 1)?));
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
