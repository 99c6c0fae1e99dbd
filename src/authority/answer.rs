//! The HTTP adapter table (docs/http-adapter.md): how an HTTP answer maps to a verdict, and the
//! cause of each indeterminate one. Pure, so every row is a unit test.

use serde_json::Value;

use crate::rules::evidence::Denial;
use crate::rules::{RefreshCause, Verdict};

/// Bodies above this are not read to the end: the answer is `Indeterminate`.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The verdict of the status line alone, or `None` for a 2xx whose body decides.
pub fn verdict_of_status(status: u16) -> Option<Verdict> {
    let cause = match status {
        200..=299 => return None,
        401 | 403 => return Some(Verdict::Denied(Denial::InvalidCredential)),
        402 => return Some(Verdict::Denied(Denial::CapabilityMissing)),
        300..=399 => RefreshCause::Http3xx,
        429 => RefreshCause::Http429,
        400..=499 => RefreshCause::Http4xx,
        500..=599 => RefreshCause::Http5xx,
        _ => RefreshCause::HttpOtherStatus,
    };
    Some(Verdict::Indeterminate(cause))
}

/// A 2xx body: the value at `pointer` must list every required capability, either as an array of
/// strings or as an object whose member for each capability is `true`.
pub fn verdict_of_body(body: &[u8], pointer: &str, required: &[String]) -> Verdict {
    let Ok(json) = serde_json::from_slice::<Value>(body) else {
        return Verdict::Indeterminate(RefreshCause::BodyNotJson);
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
            None => return Verdict::Indeterminate(RefreshCause::BodyNoCapabilities),
            Some(false) => missing = true,
            Some(true) => {}
        }
    }
    if missing {
        Verdict::Denied(Denial::CapabilityMissing)
    } else {
        Verdict::Valid
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: Verdict = Verdict::Valid;
    const MISSING: Verdict = Verdict::Denied(Denial::CapabilityMissing);

    fn caps(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    fn indeterminate(cause: RefreshCause) -> Option<Verdict> {
        Some(Verdict::Indeterminate(cause))
    }

    #[test]
    fn status_rows() {
        assert_eq!(verdict_of_status(200), None);
        assert_eq!(verdict_of_status(204), None);
        let invalid = Some(Verdict::Denied(Denial::InvalidCredential));
        assert_eq!(verdict_of_status(401), invalid);
        assert_eq!(verdict_of_status(403), invalid);
        assert_eq!(verdict_of_status(402), Some(MISSING));
    }

    #[test]
    fn every_other_status_is_indeterminate_with_its_class_as_the_cause() {
        use RefreshCause::*;
        let rows = [
            (100, HttpOtherStatus),
            (101, HttpOtherStatus),
            (199, HttpOtherStatus),
            (300, Http3xx),
            (302, Http3xx),
            (399, Http3xx),
            (400, Http4xx),
            (404, Http4xx),
            (408, Http4xx),
            (499, Http4xx),
            (429, Http429),
            (500, Http5xx),
            (503, Http5xx),
            (599, Http5xx),
            (600, HttpOtherStatus),
            (999, HttpOtherStatus),
        ];
        for (status, cause) in rows {
            assert_eq!(verdict_of_status(status), indeterminate(cause), "{status}");
        }
    }

    #[test]
    fn array_of_strings_with_every_capability_is_valid() {
        let body = br#"{"capabilities":["meter.a","meter.b"]}"#;
        assert_eq!(
            verdict_of_body(body, "/capabilities", &caps(&["meter.b", "meter.a"])),
            VALID
        );
        assert_eq!(
            verdict_of_body(body, "/capabilities", &caps(&["meter.c"])),
            MISSING
        );
    }

    #[test]
    fn object_members_must_be_true() {
        let body = br#"{"account":{"meters":{"a":true,"b":false,"c":"yes"}}}"#;
        let pointer = "/account/meters";
        assert_eq!(verdict_of_body(body, pointer, &caps(&["a"])), VALID);
        for required in [&["a", "b"][..], &["c"], &["d"]] {
            assert_eq!(
                verdict_of_body(body, pointer, &caps(required)),
                MISSING,
                "{required:?}"
            );
        }
    }

    #[test]
    fn a_2xx_body_that_cannot_be_read_is_indeterminate_with_its_cause() {
        use RefreshCause::*;
        let rows: [(&[u8], RefreshCause); 9] = [
            (b"not json", BodyNotJson),
            (b"", BodyNotJson),
            (b"<html>502</html>", BodyNotJson),
            (br#"{"a":"#, BodyNotJson),
            // JSON, but no array of strings or object at the pointer.
            (br#"{"other":[]}"#, BodyNoCapabilities),
            (br#"{"capabilities":"a"}"#, BodyNoCapabilities),
            (br#"{"capabilities":["a",1]}"#, BodyNoCapabilities),
            (br#"{"capabilities":null}"#, BodyNoCapabilities),
            (br#"["a"]"#, BodyNoCapabilities),
        ];
        for (body, cause) in rows {
            assert_eq!(
                verdict_of_body(body, "/capabilities", &caps(&["a"])),
                Verdict::Indeterminate(cause),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn pointer_escapes_follow_rfc_6901() {
        let body = br#"{"a/b":{"m~n":["x"]}}"#;
        assert_eq!(verdict_of_body(body, "/a~1b/m~0n", &caps(&["x"])), VALID);
    }
}
