//! The runtime server's connection cap (`fabric_config::bridge::MAX_CONNECTIONS`): beyond
//! it a connection is refused with `host_busy` (nothing dispatched) by the accepting
//! thread, and a request succeeds again once the held connections close.

use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use crate::support::agent_ctl::{Serve, code, raw, response};
use fabric_config::bridge::MAX_CONNECTIONS;

#[test]
fn connections_beyond_the_cap_are_refused_host_busy_and_served_again_after_they_close() {
    let dir = tempfile::tempdir().expect("tempdir");
    let serve = Serve::ours(dir.path());
    let socket = dir.path().join("fabric.sock");
    assert_eq!(code(&response(&serve.ctl(&["check"]))), None);

    // Connections that send nothing each hold a serving thread (up to the 10 s read
    // deadline).
    let held: Vec<UnixStream> = (0..MAX_CONNECTIONS)
        .map(|_| UnixStream::connect(&socket).expect("connect"))
        .collect();

    // The server accepts the held connections asynchronously: wait (bounded) until one
    // more is refused, through the bridge client and through a raw request line.
    let deadline = Instant::now() + Duration::from_secs(10);
    let refused = loop {
        let answer = response(&serve.ctl(&["check"]));
        if code(&answer) == Some("host_busy") {
            break answer;
        }
        assert!(Instant::now() < deadline, "never refused: {answer}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(refused["operation"], "check", "{refused}");
    assert_eq!(refused["status"], "failed", "{refused}");
    assert_eq!(refused["error"]["effects"], "none", "{refused}");
    let output = serve.ctl(&["check"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let raw_refusal = raw(
        &socket,
        b"{\"interface_version\":2,\"operation\":\"check\"}\n",
    );
    assert_eq!(code(&raw_refusal), Some("host_busy"), "{raw_refusal}");
    // The accepting thread does not wait for the request: it names the operation only when
    // the whole line had already arrived.
    assert!(
        ["check", "unknown"].contains(&raw_refusal["operation"].as_str().unwrap_or_default()),
        "{raw_refusal}"
    );
    assert_eq!(raw_refusal["error"]["stage"], "transport", "{raw_refusal}");

    // Closing the held connections frees their slots: a legitimate request succeeds.
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let answer = response(&serve.ctl(&["check"]));
        match code(&answer) {
            None => break,
            Some("host_busy") if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => panic!("{other:?}: {answer}"),
        }
    }
    let (exit, stderr) = serve.terminate();
    assert_eq!(exit, Some(0), "{stderr}");
}
