//! What one refresh concluded: `valid`, a denial, or `indeterminate` and why. The why is a code
//! from one closed list ([`RefreshCause`]): the log line's `cause`, the label of
//! `spend_sentinel_refresh_indeterminate_total` and the tables of docs/metrics.md and
//! docs/http-adapter.md all name these, so an operator reads which mistake or failure to fix
//! without the authority's text (which can carry the URL or the credential) ever being shown.

use super::evidence::{Denial, Outcome};
use crate::closed_list::closed_list;

/// What one refresh concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Valid,
    Denied(Denial),
    /// No proof either way, and why. Never [`RefreshCause::InspectBadValue`]: that one is
    /// [`Verdict::BadValue`], which also says what the value was.
    Indeterminate(RefreshCause),
    /// `inspect` answered something that is not one of the four outcome strings: indeterminate
    /// with cause `inspect_bad_value`. Only the value's type is kept: the value itself may be
    /// anything, a secret included.
    BadValue(JsType),
}

impl Verdict {
    /// What `inspect` answered, when it answered a string.
    pub fn of_inspect_answer(answer: &str) -> Verdict {
        match Outcome::from_name(answer) {
            Some(Outcome::Valid) => Verdict::Valid,
            Some(Outcome::InvalidCredential) => Verdict::Denied(Denial::InvalidCredential),
            Some(Outcome::CapabilityMissing) => Verdict::Denied(Denial::CapabilityMissing),
            Some(Outcome::Indeterminate) => {
                Verdict::Indeterminate(RefreshCause::InspectIndeterminate)
            }
            None => Verdict::BadValue(JsType::String),
        }
    }

    pub fn outcome(self) -> Outcome {
        match self {
            Verdict::Valid => Outcome::Valid,
            Verdict::Denied(Denial::InvalidCredential) => Outcome::InvalidCredential,
            Verdict::Denied(Denial::CapabilityMissing) => Outcome::CapabilityMissing,
            Verdict::Indeterminate(_) | Verdict::BadValue(_) => Outcome::Indeterminate,
        }
    }

    /// Why the refresh was indeterminate; `None` for `valid` and the denials, which explain
    /// themselves.
    pub fn cause(self) -> Option<RefreshCause> {
        match self {
            Verdict::Indeterminate(cause) => Some(cause),
            Verdict::BadValue(_) => Some(RefreshCause::InspectBadValue),
            Verdict::Valid | Verdict::Denied(_) => None,
        }
    }
}

closed_list! {
    /// Why a refresh was `indeterminate`. Each names what to look at; the doc comments are the
    /// tables' meanings (docs/metrics.md, docs/http-adapter.md).
    pub enum RefreshCause {
        /// `refresh.breaker` is open: the authority was not called.
        BreakerOpen => "breaker_open",
        /// HTTP: no whole answer (connection, headers and body) within `refresh.timeoutMs`.
        Timeout => "timeout",
        /// HTTP: the URL's host name did not resolve.
        Dns => "dns",
        /// HTTP: no connection could be made (refused, unreachable).
        Connect => "connect",
        /// HTTP: the TLS handshake failed: a certificate not trusted (`caPem`), not for this host,
        /// or a server that closed the handshake.
        Tls => "tls",
        /// HTTP: connected, then the connection closed or was reset before the whole answer, or
        /// what came back was not HTTP.
        ConnectionLost => "connection_lost",
        /// HTTP: a redirect, which is never followed (the URL is not the API's).
        Http3xx => "http_3xx",
        /// HTTP: a 4xx other than 401, 402, 403 and 429 (a 404 is most often a wrong path).
        Http4xx => "http_4xx",
        /// HTTP: 429, the authority is asked more often than it allows.
        Http429 => "http_429",
        /// HTTP: a 5xx, the authority (or a proxy in front of it) failed.
        Http5xx => "http_5xx",
        /// HTTP: a status outside 2xx–5xx (a final 1xx, or above 599).
        HttpOtherStatus => "http_other_status",
        /// HTTP: a 2xx body over 64 KiB.
        BodyTooLarge => "body_too_large",
        /// HTTP: a 2xx body that is not JSON.
        BodyNotJson => "body_not_json",
        /// HTTP: 2xx JSON without an array of strings or an object at `capabilitiesPointer`.
        BodyNoCapabilities => "body_no_capabilities",
        /// `inspect` threw.
        InspectThrew => "inspect_threw",
        /// The promise `inspect` returned rejected.
        InspectRejected => "inspect_rejected",
        /// `inspect` answered something that is not one of the four outcome strings.
        InspectBadValue => "inspect_bad_value",
        /// `inspect` did not answer within `refresh.timeoutMs`.
        InspectTimeout => "inspect_timeout",
        /// `inspect` answered `'indeterminate'` itself.
        InspectIndeterminate => "inspect_indeterminate",
    }
}

closed_list! {
    /// A JavaScript value's type as `typeof` names it, with `null` apart (`typeof null` is
    /// `'object'`, which would mislead).
    pub enum JsType {
        Undefined => "undefined",
        Null => "null",
        Boolean => "boolean",
        Number => "number",
        BigInt => "bigint",
        /// With [`Verdict::BadValue`]: a string that is not one of the four outcomes.
        String => "string",
        Symbol => "symbol",
        Object => "object",
        Function => "function",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inspect_answers_are_the_four_outcome_strings_exactly() {
        assert_eq!(Verdict::of_inspect_answer("valid"), Verdict::Valid);
        assert_eq!(
            Verdict::of_inspect_answer("invalid_credential"),
            Verdict::Denied(Denial::InvalidCredential)
        );
        assert_eq!(
            Verdict::of_inspect_answer("capability_missing"),
            Verdict::Denied(Denial::CapabilityMissing)
        );
        assert_eq!(
            Verdict::of_inspect_answer("indeterminate"),
            Verdict::Indeterminate(RefreshCause::InspectIndeterminate)
        );
        for other in ["VALID", "valid ", "", "ok", "true"] {
            assert_eq!(
                Verdict::of_inspect_answer(other),
                Verdict::BadValue(JsType::String),
                "{other:?}"
            );
        }
    }

    #[test]
    fn only_an_indeterminate_verdict_has_a_cause() {
        let cases = [
            (Verdict::Valid, Outcome::Valid, None),
            (
                Verdict::Denied(Denial::InvalidCredential),
                Outcome::InvalidCredential,
                None,
            ),
            (
                Verdict::Denied(Denial::CapabilityMissing),
                Outcome::CapabilityMissing,
                None,
            ),
            (
                Verdict::Indeterminate(RefreshCause::Http5xx),
                Outcome::Indeterminate,
                Some(RefreshCause::Http5xx),
            ),
            (
                Verdict::BadValue(JsType::Boolean),
                Outcome::Indeterminate,
                Some(RefreshCause::InspectBadValue),
            ),
        ];
        for (verdict, outcome, cause) in cases {
            assert_eq!((verdict.outcome(), verdict.cause()), (outcome, cause));
        }
    }
}
