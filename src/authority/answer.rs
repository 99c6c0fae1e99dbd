//! The HTTP adapter table (docs/http-adapter.md): how an HTTP answer maps to an outcome. Pure, so every row is a unit test.

use serde_json::Value;

use crate::rules::Outcome;

/// Bodies above this are not read to the end: the answer is `Indeterminate`.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The outcome decided by the status line alone, or `None` for a 2xx whose body decides.
pub fn outcome_of_status(status: u16) -> Option<Outcome> {
    match status {
        200..=299 => None,
        401 | 403 => Some(Outcome::InvalidCredential),
        402 => Some(Outcome::CapabilityMissing),
        _ => Some(Outcome::Indeterminate),
    }
}

/// A 2xx body: the value at `pointer` must list every required capability, either as an array of
/// strings or as an object whose member for each capability is `true`.
pub fn outcome_of_body(body: &[u8], pointer: &str, required: &[String]) -> Outcome {
    let Ok(json) = serde_json::from_slice::<Value>(body) else {
        return Outcome::Indeterminate;
    };
    let has = |name: &String| -> Option<bool> {
        match json.pointer(pointer)? {
            Value::Array(items) => {
                // Every element must be a string, or the answer has "another type there".
                let names: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
                Some(names?.contains(&name.as_str()))
            }
            Value::Object(members) => Some(members.get(name) == Some(&Value::Bool(true))),
            _ => None,
        }
    };
    let mut missing = false;
    for name in required {
        match has(name) {
            None => return Outcome::Indeterminate,
            Some(false) => missing = true,
            Some(true) => {}
        }
    }
    if missing {
        Outcome::CapabilityMissing
    } else {
        Outcome::Valid
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn status_rows() {
        assert_eq!(outcome_of_status(200), None);
        assert_eq!(outcome_of_status(204), None);
        assert_eq!(outcome_of_status(401), Some(Outcome::InvalidCredential));
        assert_eq!(outcome_of_status(403), Some(Outcome::InvalidCredential));
        assert_eq!(outcome_of_status(402), Some(Outcome::CapabilityMissing));
        for other in [101, 302, 404, 408, 429, 500, 503] {
            assert_eq!(
                outcome_of_status(other),
                Some(Outcome::Indeterminate),
                "{other}"
            );
        }
    }

    #[test]
    fn array_of_strings_with_every_capability_is_valid() {
        let body = br#"{"capabilities":["meter.a","meter.b"]}"#;
        assert_eq!(
            outcome_of_body(body, "/capabilities", &caps(&["meter.b", "meter.a"])),
            Outcome::Valid
        );
        assert_eq!(
            outcome_of_body(body, "/capabilities", &caps(&["meter.c"])),
            Outcome::CapabilityMissing
        );
    }

    #[test]
    fn object_members_must_be_true() {
        let body = br#"{"account":{"meters":{"a":true,"b":false,"c":"yes"}}}"#;
        let pointer = "/account/meters";
        assert_eq!(
            outcome_of_body(body, pointer, &caps(&["a"])),
            Outcome::Valid
        );
        assert_eq!(
            outcome_of_body(body, pointer, &caps(&["a", "b"])),
            Outcome::CapabilityMissing
        );
        assert_eq!(
            outcome_of_body(body, pointer, &caps(&["c"])),
            Outcome::CapabilityMissing
        );
        assert_eq!(
            outcome_of_body(body, pointer, &caps(&["d"])),
            Outcome::CapabilityMissing
        );
    }

    #[test]
    fn malformed_answers_are_indeterminate() {
        let required = caps(&["a"]);
        for body in [
            &b"not json"[..],
            b"",
            br#"{"other":[]}"#,
            br#"{"capabilities":"a"}"#,
            br#"{"capabilities":["a",1]}"#,
            br#"{"capabilities":null}"#,
        ] {
            assert_eq!(
                outcome_of_body(body, "/capabilities", &required),
                Outcome::Indeterminate,
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn pointer_escapes_follow_rfc_6901() {
        let body = br#"{"a/b":{"m~n":["x"]}}"#;
        assert_eq!(
            outcome_of_body(body, "/a~1b/m~0n", &caps(&["x"])),
            Outcome::Valid
        );
    }
}
