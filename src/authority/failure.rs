//! Which transport failure a reqwest error is (docs/http-adapter.md): the cause an operator
//! reads instead of the error's text, which can carry the URL. Read from the error's types,
//! never from its message.

use std::error::Error;
use std::io;

use hickory_resolver::net::NetError;

use crate::rules::RefreshCause;

/// The cause of a request that ended in `error`, before or while its answer was read.
pub fn cause_of(error: &reqwest::Error) -> RefreshCause {
    cause_of_chain(error, error.is_connect(), error.is_timeout())
}

/// `connecting`: the error came before a connection was made (reqwest's `is_connect`).
fn cause_of_chain(error: &(dyn Error + 'static), connecting: bool, timeout: bool) -> RefreshCause {
    let mut ended_early = false;
    for link in chain(error) {
        if link.is::<NetError>() {
            return RefreshCause::Dns;
        }
        if link.is::<rustls::Error>() {
            return RefreshCause::Tls;
        }
        ended_early |= link
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::UnexpectedEof);
    }
    if timeout {
        RefreshCause::Timeout
    } else if connecting && ended_early {
        // A TCP connect cannot end early: the stream ended during the TLS handshake (a server
        // that refuses our hello by hanging up).
        RefreshCause::Tls
    } else if connecting {
        RefreshCause::Connect
    } else {
        RefreshCause::ConnectionLost
    }
}

/// `error` and the errors under it. An `io::Error`'s own `source()` skips the error it wraps
/// (it returns that error's source), so it is descended into through `get_ref`.
fn chain<'a>(error: &'a (dyn Error + 'static)) -> impl Iterator<Item = &'a (dyn Error + 'static)> {
    std::iter::successors(Some(error), |&link: &&'a (dyn Error + 'static)| match link
        .downcast_ref::<io::Error>()
    {
        Some(io) => io.get_ref().map(|inner| inner as &(dyn Error + 'static)),
        None => link.source(),
    })
}

#[cfg(test)]
mod tests;
