//! Differential: upstream NeMo Fabric 0.5.0's `fabric-agent-ctl` (client and server, run
//! with its own entry point `python -m nemo_fabric.runtime_server`) against ours, in all
//! four pairings, for every operation 0.5.0 has (start, invoke --input / --request, stop)
//! and its request-side failures. Each response is reduced to what both implementations
//! must agree on — the envelope (operation, status, changed, error code / stage / effects)
//! and the SDK payload fields upstream defines (ids normalized) — and the exit codes must
//! match. A missing venv fails them (tests/dependency.rs; FABRIC_ALLOW_SKIPS=1 skips).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::agent_ctl::{AGENT_CTL, Serve, ctl_at, response};
use crate::support::upstream;
use serde_json::{Value, json};

/// The venv of the upstream interpreter (`<venv>/bin/python`).
fn venv(python: &Path) -> PathBuf {
    python
        .parent()
        .and_then(Path::parent)
        .expect("venv of FABRIC_TEST_PYTHON")
        .to_path_buf()
}

/// A wrapper script running upstream's `fabric-agent-ctl` through its module entry point.
fn upstream_ctl(dir: &Path, python: &Path) -> String {
    let path = dir.join("upstream-agent-ctl");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nexec '{}' -m nemo_fabric.runtime_server \"$@\"\n",
            python.display()
        ),
    )
    .expect("write wrapper");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.to_string_lossy().into_owned()
}

/// What both implementations must agree on in one response.
fn skeleton(response: &Value) -> Value {
    let error = match &response["error"] {
        Value::Null => Value::Null,
        e => json!({"code": e["code"], "stage": e["stage"], "effects": e["effects"]}),
    };
    let r = &response["result"];
    let result = match (response["operation"].as_str(), r.is_null()) {
        (_, true) => Value::Null,
        (Some("start"), false) => json!({
            "agent_name": r["agent_name"], "harness": r["harness"],
            "adapter_kind": r["adapter_kind"], "adapter_id": r["adapter_id"],
            "service_id": r["service_id"],
            "ids": [r["runtime_id"].is_string(), r["runtime_binding"].is_string()],
            "environment": {"provider": r["environment"]["provider"],
                            "ownership": r["environment"]["ownership"]},
        }),
        (Some("invoke"), false) => {
            let mut output = r["output"].clone();
            if output["metadata"]["runtime_id"].is_string() {
                output["metadata"]["runtime_id"] = json!("RUNTIME");
            }
            let request_id = r["request_id"].as_str().unwrap_or_default();
            json!({
                "status": r["status"], "output": output, "error": r["error"],
                "agent_name": r["agent_name"], "harness": r["harness"],
                "adapter_kind": r["adapter_kind"], "adapter_id": r["adapter_id"],
                "request_id": if request_id.starts_with("request-") { "GENERATED" } else { request_id },
                "ids": [r["runtime_id"].is_string(), r["invocation_id"].is_string()],
            })
        }
        _ => json!("unexpected result"),
    };
    json!({
        "operation": response["operation"], "status": response["status"],
        "changed": response["changed"], "error": error, "result": result,
    })
}

/// Runs the scenario with `client` against the server already listening in `dir`.
fn scenario(client: &str, dir: &Path, config: &str) -> Vec<(Option<i32>, Value)> {
    let run = |args: &[&str]| {
        let output = ctl_at(client, dir, args, None);
        (output.status.code(), response(&output))
    };
    let mut seen = Vec::new();
    let started = run(&["start", "--agent", "python-echo", "--config", config]);
    let id = started.1["result"]["runtime_id"]
        .as_str()
        .unwrap_or_else(|| panic!("start failed under {client}: {}", started.1))
        .to_owned();
    seen.push(started);
    let input = dir.join("input.json");
    std::fs::write(&input, r#""hi""#).expect("write");
    let input = input.to_string_lossy().into_owned();
    let request = dir.join("request.json");
    std::fs::write(&request, r#"{"input": "again", "request_id": "turn-2"}"#).expect("write");
    let request = request.to_string_lossy().into_owned();
    let dup = dir.join("dup.json");
    std::fs::write(&dup, r#"{"input": "a", "input": "b"}"#).expect("write");
    let dup = dup.to_string_lossy().into_owned();
    for args in [
        &[
            "invoke",
            "--agent",
            "python-echo",
            "--runtime-id",
            &id,
            "--input",
            &input,
        ][..],
        &[
            "invoke",
            "--agent",
            "python-echo",
            "--runtime-id",
            &id,
            "--request",
            &request,
        ],
        &[
            "invoke",
            "--agent",
            "someone-else",
            "--runtime-id",
            &id,
            "--input",
            &input,
        ],
        &[
            "invoke",
            "--agent",
            "python-echo",
            "--runtime-id",
            "runtime-unknown",
            "--input",
            &input,
        ],
        &[
            "invoke",
            "--agent",
            "python-echo",
            "--runtime-id",
            &id,
            "--request",
            &dup,
        ],
        &["start", "--agent", "someone-else", "--config", config],
        &[
            "stop",
            "--agent",
            "python-echo",
            "--runtime-id",
            &id,
            "--agent",
            "x",
        ],
        &[
            "stop",
            "--agent",
            "python-echo",
            "--runtime-id",
            &id,
            "--bogus",
            "x",
        ],
        &["stop", "--agent", "python-echo", "--runtime-id", &id],
        &["stop", "--agent", "python-echo", "--runtime-id", &id],
        &[
            "invoke",
            "--agent",
            "python-echo",
            "--runtime-id",
            &id,
            "--input",
            &input,
        ],
    ] {
        seen.push(run(args));
    }
    seen
}

#[test]
fn upstream_and_ours_agree_in_every_pairing() {
    let Some(upstream) = upstream::require() else {
        return;
    };
    let python = upstream.python().to_path_buf();
    let venv = venv(&python);
    let root = tempfile::tempdir().expect("tempdir");
    let up_ctl = upstream_ctl(root.path(), &python);
    let descriptor_dir = support::repo_root().join("adapters/python-echo");
    let mut results = Vec::new();
    for (server, client) in [
        ("upstream", "upstream"),
        ("upstream", "ours"),
        ("ours", "upstream"),
        ("ours", "ours"),
    ] {
        let dir = root.path().join(format!("{server}-{client}"));
        std::fs::create_dir_all(&dir).expect("dir");
        let config = json!({
            "schema_version": "fabric.agent/v1alpha1",
            "metadata": {"name": "python-echo"},
            "harness": {"adapter_id": "fabric.python-echo", "settings": {"prefix": "echo: "}},
            "discovery": {"local_paths": [descriptor_dir]},
            "runtime": {"timeout_seconds": 60}
        });
        let config_path = dir.join("config.json");
        std::fs::write(&config_path, config.to_string()).expect("write config");
        let mut command = Command::new(if server == "ours" { AGENT_CTL } else { &up_ctl });
        command
            .arg("serve")
            .current_dir(&dir)
            .env("VIRTUAL_ENV", &venv)
            .env("ADAPTER_PYTHON", &python);
        let serve = Serve::spawn(
            &mut command,
            &dir,
            if server == "ours" { "listening on" } else { "" },
        );
        let program = if client == "ours" { AGENT_CTL } else { &up_ctl };
        let seen = scenario(program, &dir, config_path.to_str().expect("utf8"));
        let (status, stderr) = serve.terminate();
        assert_eq!(status, Some(0), "{server} server exit: {stderr}");
        assert!(
            dir.join("fabric.unclean").exists(),
            "{server}: a used sandbox keeps its marker"
        );
        results.push((server, client, seen));
    }
    let (_, _, baseline) = &results[0];
    for (server, client, seen) in &results[1..] {
        assert_eq!(seen.len(), baseline.len());
        for (step, ((code, doc), (base_code, base_doc))) in seen.iter().zip(baseline).enumerate() {
            assert_eq!(
                (code, skeleton(doc)),
                (base_code, skeleton(base_doc)),
                "step {step}: {server} server + {client} client differs from upstream + upstream\nours: {doc}\nupstream: {base_doc}"
            );
        }
    }
    // The two-turn conversation really happened.
    assert_eq!(baseline[1].1["result"]["output"]["response"], "echo: hi");
    assert_eq!(baseline[2].1["result"]["output"]["turn"], 2);
}
