//! Health checks through a `container` environment on podman (docs/health.md, "Checks in
//! provider environments"): the runtime server in the container answers a server check and
//! selects scripted runtimes running there for runtime checks — passed (through
//! `fabric_host` and `fabric check --environment`), a failing level, a deadline, a stopped
//! runtime. Runtimes are started inside with `runtime_control`, as another process would.

use crate::support;

use fabric_config::health::{CheckOutcome, CheckRequest, HealthLevel};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

use super::env_container::{Prepared, bridge};

#[test]
fn checks_reach_the_runtime_server_and_runtimes_inside_the_container() {
    let Some(prepared) = Prepared::new(|_| {}) else {
        return;
    };
    let Prepared {
        environment,
        fabric,
        dir,
        ..
    } = &prepared;

    let server = fabric
        .check(Some(environment), &CheckRequest::server())
        .expect("server check");
    assert!(server.passed(), "{server:?}");
    assert_eq!(server.checks[0].source_id, "fabric:runtime_server");

    // Scripted runtimes inside the container, under the config's agent name.
    let start = |health: Value| {
        let agent = json!({
            "schema_version": "fabric.agent/v1alpha1",
            "metadata": {"name": "contained"},
            "harness": {"adapter_id": "fabric.scripted", "settings": {"replies": ["ok"], "health": health}},
            "discovery": {"local_paths": ["/opt/fabric/adapters/scripted/scripted.fabric-adapter.json"]},
        });
        let started = environment
            .runtime_control(
                bridge("start", json!({"agent": "contained", "config": agent})),
                Duration::from_secs(60),
            )
            .expect("start");
        assert_eq!(started["status"], "succeeded", "{started}");
        started["result"]["runtime_id"]
            .as_str()
            .expect("runtime_id")
            .to_owned()
    };
    let ready = |id: &str, timeout: f64| {
        let mut request = CheckRequest::runtime(id).with_level(HealthLevel::Ready);
        request.timeout_seconds = Some(timeout);
        fabric
            .check(Some(environment), &request)
            .expect("runtime check")
    };

    let healthy = start(json!({}));
    let report = ready(&healthy, 5.0);
    assert!(report.passed(), "{report:?}");
    assert_eq!(report.checks.len(), 3);

    // The same through the CLI, from another process that attaches.
    let reference = dir.path().join("reference.json");
    std::fs::write(
        &reference,
        serde_json::to_string(&environment.reference()).expect("reference"),
    )
    .expect("write reference");
    let config_path = dir.path().join("fabric.json");
    let output = support::fabric(&[
        "check",
        config_path.to_str().expect("utf-8"),
        "--environment",
        reference.to_str().expect("utf-8"),
        "--runtime-id",
        &healthy,
        "--level",
        "ready",
        "--timeout",
        "10",
    ]);
    let printed = support::stdout_json(&output);
    assert_eq!(output.status.code(), Some(0), "{printed}");
    assert_eq!(printed["outcome"], "passed");

    let failing = start(json!({"fail": "active"}));
    let report = ready(&failing, 5.0);
    assert_eq!(report.outcome, CheckOutcome::Failed, "{report:?}");
    assert_eq!(report.checks.len(), 2);

    let stalling = start(json!({"stall": "ready"}));
    let began = Instant::now();
    let report = ready(&stalling, 1.0);
    assert_eq!(
        (report.outcome, report.reason.as_deref()),
        (CheckOutcome::Unknown, Some("probe_timeout")),
        "{report:?}"
    );
    assert!(
        began.elapsed() < Duration::from_millis(1500),
        "{:?}",
        began.elapsed()
    );

    let stopped = environment
        .runtime_control(
            bridge("stop", json!({"agent": "contained", "runtime_id": healthy})),
            Duration::from_secs(60),
        )
        .expect("stop");
    assert_eq!(stopped["status"], "succeeded", "{stopped}");
    let report = ready(&healthy, 5.0);
    assert_eq!(
        (report.outcome, report.reason.as_deref()),
        (CheckOutcome::Unknown, Some("runtime_unavailable")),
        "{report:?}"
    );

    prepared.release();
}
