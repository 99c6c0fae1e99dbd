//! Refreshes against a nameserver that never answers: each lookup must end with its refresh,
//! on the runtime's own thread. And the system configuration still resolves `localhost`.
//!
//! The silent-nameserver test counts the process's OS threads, which cargo's parallel tests
//! disturb, so its body runs in a child process: this test binary again, with only that test
//! selected.

use std::net::{IpAddr, Ipv4Addr};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hickory_resolver::config::{NameServerConfig, ResolverConfig};
use reqwest::dns::Resolve;
use tokio::net::UdpSocket;
use tokio::task::JoinSet;

use super::AsyncResolver;
use crate::authority::client::client_builder;
use crate::authority::failure::cause_of;
use crate::rules::RefreshCause;

/// Set in the child's environment: run the body there instead of starting another child.
const CHILD: &str = "SPEND_SENTINEL_DNS_TEST_CHILD";
const TEST: &str = "lookups_against_a_silent_nameserver_end_with_their_refresh_on_no_thread";
/// Not in /etc/hosts, so only the (silent) nameserver could answer it.
const URL: &str = "http://authority.invalid-test.example/";
const TIMEOUT: Duration = Duration::from_millis(150);
/// Slack for a loaded machine; a lookup left to itself would run for hickory's 5 s.
const MARGIN: Duration = Duration::from_millis(1000);
const ROUNDS: usize = 10;
const CONCURRENT: usize = 10;

#[test]
fn lookups_against_a_silent_nameserver_end_with_their_refresh_on_no_thread() {
    if std::env::var_os(CHILD).is_some() {
        return silent_nameserver();
    }
    // libtest names a test by its module path without the crate.
    let (_crate, module) = module_path!().split_once("::").unwrap();
    let exe = std::env::current_exe().expect("cannot find the test binary");
    let output = Command::new(exe)
        .args(["--exact", &format!("{module}::{TEST}"), "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("cannot run the test binary");
    let stdout = String::from_utf8_lossy(&output.stdout);
    // A filter matching nothing also exits 0: insist that the one test ran.
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "the child run failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn localhost_resolves_to_loopback_with_the_system_config() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let addrs: Vec<_> = runtime
        .block_on(AsyncResolver::system().resolve("localhost".parse().unwrap()))
        .expect("localhost did not resolve")
        .map(|addr| addr.ip())
        .collect();
    assert!(
        addrs.iter().all(|ip| ip.is_loopback()) && !addrs.is_empty(),
        "localhost resolved to {addrs:?}"
    );
}

fn silent_nameserver() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let silent = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let config = only_nameserver(silent.local_addr().unwrap().port());
        let queries = Arc::new(AtomicUsize::new(0));
        tokio::spawn(read_forever(silent, queries.clone()));
        let client = client_builder()
            .dns_resolver(Arc::new(AsyncResolver::with_config(config)))
            .build()
            .unwrap();

        let threads_before = entries("/proc/self/task");
        let files_before = entries("/proc/self/fd");
        let mut most_threads = threads_before;
        for _ in 0..ROUNDS {
            let mut round = JoinSet::new();
            for _ in 0..CONCURRENT {
                let request = client.get(URL).send();
                round.spawn(async move {
                    let start = Instant::now();
                    let answer = tokio::time::timeout(TIMEOUT, request).await;
                    (answer.is_err(), start.elapsed())
                });
            }
            while let Some(joined) = round.join_next().await {
                let (timed_out, took) = joined.unwrap();
                assert!(
                    timed_out,
                    "the request ended before its timeout: nothing was tested"
                );
                assert!(took < TIMEOUT + MARGIN, "a request took {took:?}");
            }
            most_threads = most_threads.max(entries("/proc/self/task"));
        }
        assert!(
            queries.load(Ordering::Relaxed) > 0,
            "no query reached the silent nameserver"
        );
        assert!(
            most_threads <= threads_before + 1,
            "threads grew from {threads_before} to {most_threads}"
        );
        // Each lookup had its own UDP socket: open ones now would mean lookups outlived their
        // requests.
        let files_after = entries("/proc/self/fd");
        assert!(
            files_after <= files_before,
            "open files grew from {files_before} to {files_after}"
        );
    });
}

#[tokio::test]
async fn a_name_the_nameserver_does_not_know_is_the_dns_cause() {
    let nameserver = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let config = only_nameserver(nameserver.local_addr().unwrap().port());
    tokio::spawn(answer_no_such_name(nameserver));
    let client = client_builder()
        .dns_resolver(Arc::new(AsyncResolver::with_config(config)))
        .build()
        .unwrap();
    let request = client.get(URL).send();
    let error = tokio::time::timeout(Duration::from_secs(10), request)
        .await
        .expect("the nameserver answers at once")
        .expect_err("the name does not resolve");
    assert_eq!(cause_of(&error), RefreshCause::Dns);
}

/// Answers every query: no such name (NXDOMAIN), the question echoed.
async fn answer_no_such_name(socket: UdpSocket) {
    let mut buffer = [0; 512];
    while let Ok((length, from)) = socket.recv_from(&mut buffer).await {
        let query = &buffer[..length];
        // The question: the name's labels up to the root's empty one, then type and class.
        let mut end = 12;
        while end < length && query[end] != 0 {
            end += 1 + usize::from(query[end]);
        }
        let end = (end + 5).min(length);
        let mut reply = query[..end].to_vec();
        // Response, recursion desired and available, NXDOMAIN; one question, no other records.
        reply[2..4].copy_from_slice(&[0x81, 0x83]);
        reply[4..12].copy_from_slice(&[0, 1, 0, 0, 0, 0, 0, 0]);
        let _ = socket.send_to(&reply, from).await;
    }
}

/// One UDP nameserver on 127.0.0.1 at `port`, no search list.
fn only_nameserver(port: u16) -> ResolverConfig {
    let mut server = NameServerConfig::udp(IpAddr::V4(Ipv4Addr::LOCALHOST));
    for connection in &mut server.connections {
        connection.port = port;
    }
    ResolverConfig::from_name_servers(vec![server])
}

/// Takes every query and answers none.
async fn read_forever(socket: UdpSocket, queries: Arc<AtomicUsize>) {
    let mut buffer = [0; 512];
    while socket.recv_from(&mut buffer).await.is_ok() {
        queries.fetch_add(1, Ordering::Relaxed);
    }
}

fn entries(dir: &str) -> usize {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {dir}: {e}"))
        .count()
}
