//! The cause of each transport failure: first on error chains built like reqwest's, then on real
//! requests to servers on 127.0.0.1 that fail in each way (a name the nameserver does not know
//! is in dns/tests.rs, next to its nameserver).

use std::fmt;
use std::net::{Ipv4Addr, TcpListener as StdListener};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;
use crate::authority::client::client_builder;

/// A link of a chain: reqwest's and hyper's errors are such wrappers around their cause.
#[derive(Debug)]
struct Wrapper(Box<dyn Error + Send + Sync>);

impl fmt::Display for Wrapper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("wrapper")
    }
}

impl Error for Wrapper {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&*self.0)
    }
}

fn wrapped(inner: impl Error + Send + Sync + 'static) -> Wrapper {
    Wrapper(Box::new(Wrapper(Box::new(inner))))
}

/// What hyper-rustls makes of a refused certificate: io::Error::other(an InvalidData io::Error
/// holding the rustls error).
fn certificate_refused() -> io::Error {
    let refused = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
    io::Error::other(io::Error::new(io::ErrorKind::InvalidData, refused))
}

#[test]
fn a_rustls_error_under_io_errors_is_tls() {
    let error = wrapped(certificate_refused());
    assert_eq!(cause_of_chain(&error, true, false), RefreshCause::Tls);
}

#[test]
fn a_resolver_error_is_dns() {
    let error = wrapped(NetError::from("no record"));
    assert_eq!(cause_of_chain(&error, true, false), RefreshCause::Dns);
}

#[test]
fn a_refused_connection_is_connect() {
    let error = wrapped(io::Error::from(io::ErrorKind::ConnectionRefused));
    assert_eq!(cause_of_chain(&error, true, false), RefreshCause::Connect);
}

#[test]
fn a_stream_that_ends_while_connecting_is_tls_and_after_is_connection_lost() {
    let eof = || {
        wrapped(io::Error::other(io::Error::from(
            io::ErrorKind::UnexpectedEof,
        )))
    };
    assert_eq!(cause_of_chain(&eof(), true, false), RefreshCause::Tls);
    assert_eq!(
        cause_of_chain(&eof(), false, false),
        RefreshCause::ConnectionLost
    );
}

#[test]
fn a_timeout_is_timeout() {
    let error = wrapped(io::Error::from(io::ErrorKind::TimedOut));
    assert_eq!(cause_of_chain(&error, true, true), RefreshCause::Timeout);
}

/// Sends one GET to `url` and returns the cause of its failure.
async fn cause_of_get(url: &str) -> RefreshCause {
    let client = client_builder().build().unwrap();
    let error = client
        .get(url)
        .send()
        .await
        .expect_err("the request failed");
    cause_of(&error)
}

/// A server on 127.0.0.1 that reads what the first connection sends, then answers `reply`
/// (possibly nothing) and hangs up. Returns its port.
async fn serve_once(reply: &'static [u8]) -> u16 {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut first = [0; 1024];
        let _ = socket.read(&mut first).await;
        let _ = socket.write_all(reply).await;
        let _ = socket.shutdown().await;
    });
    port
}

#[tokio::test]
async fn a_port_nobody_listens_on_is_connect() {
    let port = StdListener::bind((Ipv4Addr::LOCALHOST, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let cause = cause_of_get(&format!("http://127.0.0.1:{port}/")).await;
    assert_eq!(cause, RefreshCause::Connect);
}

#[tokio::test]
async fn servers_that_fail_after_the_connection_give_their_cause() {
    let rows: [(&str, &[u8], RefreshCause); 3] = [
        // Hangs up without answering.
        ("http", b"", RefreshCause::ConnectionLost),
        // Plain HTTP where TLS is expected: rustls reads garbage.
        (
            "https",
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n",
            RefreshCause::Tls,
        ),
        // Hangs up on the TLS hello.
        ("https", b"", RefreshCause::Tls),
    ];
    for (scheme, reply, cause) in rows {
        let port = serve_once(reply).await;
        let url = format!("{scheme}://127.0.0.1:{port}/");
        let seen = cause_of_get(&url).await;
        assert_eq!(seen, cause, "{scheme} answered {reply:?}");
    }
}
