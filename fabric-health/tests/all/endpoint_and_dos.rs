//! The endpoint file (v1 TCP and v2 unix socket, O_NOFOLLOW, owner and mode checks) and the
//! listener's bounds: idle connections, on TCP from any local user or on the private unix
//! socket, cannot deny legitimate checks.

use crate::support;

use std::fs;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use fabric_health::client::Check;
use fabric_health::listener::{self, ProbeOutcome, Transport};
use fabric_health::wire::{self, EndpointAddr};
use fabric_health::{CheckOutcome, CheckReport, CheckRequest, HealthLevel, reason};
use serde_json::{Value, json};

fn all_pass(_: HealthLevel, _: Duration) -> ProbeOutcome {
    ProbeOutcome::passed("test:probe")
}

fn ready(runtime: &str) -> CheckRequest {
    CheckRequest::runtime(runtime).with_level(HealthLevel::Ready)
}

fn assert_not_passed(report: &CheckReport, why: &str) {
    assert_eq!(report.outcome, CheckOutcome::Unknown, "{report:?}");
    assert_eq!(report.reason.as_deref(), Some(why), "{report:?}");
    assert!(report.checks.is_empty(), "{report:?}");
}

fn endpoint_json(dir: &Path) -> Value {
    serde_json::from_slice(&fs::read(listener::endpoint_path(dir)).unwrap()).unwrap()
}

#[test]
fn tcp_transport_writes_a_v1_endpoint() {
    let home = tempfile::tempdir().unwrap();
    let handle = listener::spawn_with(home.path(), Transport::Tcp, all_pass).unwrap();
    let endpoint = endpoint_json(home.path());
    // v1, exactly the fields older cores read.
    assert_eq!(endpoint["schema_version"], wire::ENDPOINT_SCHEMA_VERSION);
    assert_eq!(endpoint["host"], "127.0.0.1");
    assert_eq!(
        Some(endpoint["port"].as_u64().unwrap() as u16),
        handle.port()
    );
    assert_eq!(endpoint.as_object().unwrap().len(), 5, "{endpoint}");
    assert!(Check::new(&ready("r")).run(handle.endpoint_path()).passed());
    handle.stop();
    assert_eq!(fs::read_dir(home.path()).unwrap().count(), 0);
}

#[test]
fn a_deep_fabric_home_still_gets_a_unix_socket() {
    // Longer than a unix socket address holds: bound and reached through /proc/self/fd.
    let home = tempfile::tempdir().unwrap();
    let deep = home.path().join("d".repeat(60)).join("e".repeat(60));
    fs::create_dir_all(&deep).unwrap();
    let handle = listener::spawn_with(&deep, Transport::Unix, all_pass).unwrap();
    let endpoint = endpoint_json(&deep);
    assert_eq!(endpoint["transport"], "unix");
    assert!(endpoint["socket"].as_str().unwrap().len() > 108);
    assert!(Check::new(&ready("r")).run(handle.endpoint_path()).passed());
}

#[test]
fn v2_endpoint_files_are_validated() {
    let home = tempfile::tempdir().unwrap();
    let handle = listener::spawn_with(home.path(), Transport::Tcp, all_pass).unwrap();
    let port = handle.port().unwrap();
    let secret = endpoint_json(home.path())["secret"].clone();
    let pid = std::process::id();
    let other = tempfile::tempdir().unwrap();
    let path = other.path().join(wire::ENDPOINT_FILE_NAME);
    let write = |value: Value| {
        let _ = fs::remove_file(&path);
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .unwrap();
        file.write_all(value.to_string().as_bytes()).unwrap();
    };
    // v2 naming TCP explicitly is read too.
    write(
        json!({"schema_version": wire::ENDPOINT_SCHEMA_VERSION_V2, "transport": "tcp",
                 "host": "127.0.0.1", "port": port, "pid": pid, "secret": secret}),
    );
    assert!(Check::new(&ready("r")).run(&path).passed());
    for bad in [
        json!({"schema_version": wire::ENDPOINT_SCHEMA_VERSION_V2, "transport": "unix",
               "socket": "relative.sock", "pid": pid, "secret": secret}),
        json!({"schema_version": wire::ENDPOINT_SCHEMA_VERSION_V2, "transport": "carrier-pigeon",
               "host": "127.0.0.1", "port": port, "pid": pid, "secret": secret}),
        json!({"schema_version": wire::ENDPOINT_SCHEMA_VERSION_V2,
               "host": "127.0.0.1", "port": port, "pid": pid, "secret": secret}),
        json!({"schema_version": wire::ENDPOINT_SCHEMA_VERSION, "transport": "unix",
               "socket": "/x.sock", "pid": pid, "secret": secret}),
        json!({"schema_version": "fabric.health-endpoint/v3", "transport": "tcp",
               "host": "127.0.0.1", "port": port, "pid": pid, "secret": secret}),
        json!({"schema_version": wire::ENDPOINT_SCHEMA_VERSION,
               "host": "10.0.0.1", "port": port, "pid": pid, "secret": secret}),
    ] {
        write(bad.clone());
        assert_not_passed(
            &Check::new(&ready("r")).run(&path),
            reason::INVALID_ENDPOINT,
        );
    }
}

#[test]
fn endpoint_readable_or_writable_by_others_is_rejected() {
    let home = tempfile::tempdir().unwrap();
    let handle = listener::spawn(home.path(), all_pass).unwrap();
    for mode in [0o644, 0o620, 0o602, 0o640] {
        fs::set_permissions(handle.endpoint_path(), fs::Permissions::from_mode(mode)).unwrap();
        assert_not_passed(
            &Check::new(&CheckRequest::runtime("r")).run(handle.endpoint_path()),
            reason::ENDPOINT_INSECURE_MODE,
        );
    }
    fs::write(handle.endpoint_path(), "{}").unwrap();
    fs::set_permissions(handle.endpoint_path(), fs::Permissions::from_mode(0o600)).unwrap();
    assert_not_passed(
        &Check::new(&CheckRequest::runtime("r")).run(handle.endpoint_path()),
        reason::INVALID_ENDPOINT,
    );
}

#[test]
fn symlinked_or_special_endpoint_is_rejected() {
    let home = tempfile::tempdir().unwrap();
    let handle = listener::spawn(home.path(), all_pass).unwrap();
    // A symlink to the real (valid) file is still refused: O_NOFOLLOW.
    let elsewhere = tempfile::tempdir().unwrap();
    let link = elsewhere.path().join(wire::ENDPOINT_FILE_NAME);
    std::os::unix::fs::symlink(handle.endpoint_path(), &link).unwrap();
    assert_not_passed(
        &Check::new(&CheckRequest::runtime("r")).run(&link),
        reason::ENDPOINT_SYMLINK,
    );
    // A directory (or FIFO) in its place is not a regular file.
    let dir = elsewhere.path().join("dir.json");
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    assert_not_passed(
        &Check::new(&CheckRequest::runtime("r")).run(&dir),
        reason::ENDPOINT_NOT_REGULAR,
    );
}

#[test]
fn endpoint_owned_by_another_user_is_rejected() {
    let home = tempfile::tempdir().unwrap();
    let handle = listener::spawn(home.path(), all_pass).unwrap();
    // Only privileged runs can give a file away; elsewhere this case cannot be built.
    if std::os::unix::fs::chown(handle.endpoint_path(), Some(65534), None).is_err() {
        eprintln!("skipping: cannot chown (not privileged)");
        return;
    }
    let report = Check::new(&CheckRequest::runtime("r")).run(handle.endpoint_path());
    assert_not_passed(&report, reason::ENDPOINT_FOREIGN_OWNER);
}

#[test]
fn idle_attackers_cannot_deny_checks_over_tcp() {
    let home = tempfile::tempdir().unwrap();
    let handle = listener::spawn_with(home.path(), Transport::Tcp, all_pass).unwrap();
    let EndpointAddr::Tcp(addr) = *handle.addr() else {
        unreachable!("tcp")
    };
    let attacker = support::Attacker::start(addr, 500);
    support::assert_checks_pass_under_attack(handle.endpoint_path(), &attacker);
    let opened = attacker.stop();
    assert!(opened >= 500, "{opened}");
}

#[test]
fn idle_connections_on_the_unix_socket_cannot_deny_checks() {
    // Only our own uid can reach the socket (0600 in a 0700 directory); even so, idle
    // connections from it are shed like on TCP.
    let home = tempfile::tempdir().unwrap();
    fs::set_permissions(home.path(), fs::Permissions::from_mode(0o700)).unwrap();
    let handle = listener::spawn_with(home.path(), Transport::Unix, all_pass).unwrap();
    let EndpointAddr::Unix(socket) = handle.addr().clone() else {
        unreachable!("unix")
    };
    let idle: Vec<_> = (0..500)
        .filter_map(|_| UnixStream::connect(&socket).ok())
        .collect();
    assert!(idle.len() >= 100, "{}", idle.len());
    let request = ready("r");
    let passed = (0..40)
        .filter(|_| Check::new(&request).run(handle.endpoint_path()).passed())
        .count();
    assert_eq!(passed, 40);
}
