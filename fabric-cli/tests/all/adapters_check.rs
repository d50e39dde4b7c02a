//! `fabric adapters check` (the conformance kit) and `fabric adapters list`: our adapters
//! pass every applicable check; each deliberately broken fixture adapter
//! (`tests/fixtures/conformance/`) is caught by exactly its check, with evidence.

use std::time::Instant;

use serde_json::Value;

use crate::support::{fabric, on_terminal, repo_root, stdout_json};

pub(crate) fn fixture(mode: &str) -> String {
    repo_root()
        .join(format!(
            "tests/fixtures/conformance/{mode}.fabric-adapter.json"
        ))
        .to_string_lossy()
        .into_owned()
}

/// `(exit code, report)` of `fabric adapters check ARGS --json`.
pub(crate) fn check(args: &[&str]) -> (Option<i32>, Value) {
    let mut all = vec!["adapters", "check", "--json"];
    all.extend_from_slice(args);
    let output = fabric(&all);
    (output.status.code(), stdout_json(&output))
}

fn ids_with(report: &Value, status: &str) -> Vec<String> {
    report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["status"] == status)
        .map(|c| c["id"].as_str().expect("id").to_owned())
        .collect()
}

fn assert_passes(report: &Value) {
    assert_eq!(
        ids_with(report, "failed"),
        Vec::<String>::new(),
        "{report:#}"
    );
    for id in [
        "descriptor.contract",
        "descriptor.discovery",
        "descriptor.fingerprint",
        "descriptor.schema_refs",
        "configs.accepted",
        "configs.settings.unknown_property",
        "configs.settings.wrong_type",
        "doctor.met",
        "lifecycle.start",
        "lifecycle.invoke",
        "lifecycle.repeat",
        "lifecycle.isolation",
        "lifecycle.stop",
        "lifecycle.eof",
        "lifecycle.protocol",
        "lifecycle.leftovers",
    ] {
        assert!(
            ids_with(report, "passed").contains(&id.to_owned()),
            "{id}: {report:#}"
        );
    }
    for skipped in report["checks"].as_array().expect("checks") {
        if skipped["status"] == "skipped" {
            assert!(!skipped["reason"].as_str().expect("reason").is_empty());
        }
    }
    assert_eq!(report["summary"]["required_profile_passed"], true);
    if report["adapter"]["capabilities"]["relay"] == "supported" {
        assert!(
            ids_with(report, "passed").contains(&"relay.correlation".to_owned()),
            "{report:#}"
        );
    }
    if report["adapter"]["capabilities"]["streaming"] == "supported" {
        for id in [
            "streaming.chunks",
            "streaming.empty",
            "streaming.early_close",
            "streaming.one_turn",
            "streaming.cancel",
        ] {
            assert!(
                ids_with(report, "passed").contains(&id.to_owned()),
                "{id}: {report:#}"
            );
        }
    }
}

#[test]
fn the_scripted_adapter_passes_every_applicable_check_within_30_s() {
    let began = Instant::now();
    let (code, report) = check(&["fabric.scripted"]);
    assert_eq!(code, Some(0), "{report:#}");
    assert_passes(&report);
    assert_eq!(report["adapter"]["adapter_id"], "fabric.scripted");
    assert_eq!(report["adapter"]["capabilities"]["streaming"], "supported");
    assert!(began.elapsed().as_secs() < 30, "took {:?}", began.elapsed());
}

#[test]
fn a_well_behaved_fixture_adapter_passes() {
    let (code, report) = check(&["--descriptor", &fixture("good")]);
    assert_eq!(code, Some(0), "{report:#}");
    assert_passes(&report);
}

#[test]
fn each_broken_adapter_is_caught_by_its_check_and_no_other() {
    let cases = [
        ("exit_second_invoke", "lifecycle.repeat", "host_crashed"),
        ("ignore_stop", "lifecycle.stop", "stop_answered"),
        ("grandchild", "lifecycle.leftovers", "killed_by"),
        ("non_json", "lifecycle.protocol", "invalid_json"),
        ("leak_state", "lifecycle.isolation", "leaked"),
        ("no_eof_exit", "lifecycle.eof", "sigterm"),
        ("partial_start", "lifecycle.partial_start", "left_behind"),
        ("undeclared_binary", "doctor.missing_binary", "runner"),
        (
            "open_model_extension",
            "configs.models.unknown_property",
            "conformance_unknown_property",
        ),
    ];
    let runs: Vec<_> = cases
        .iter()
        .map(|(mode, id, evidence)| {
            let descriptor = fixture(mode);
            let handle = std::thread::spawn(move || check(&["--descriptor", &descriptor]));
            (*mode, *id, *evidence, handle)
        })
        .collect();
    for (mode, id, evidence, handle) in runs {
        let (code, report) = handle.join().expect("check thread");
        assert_eq!(code, Some(1), "{mode}: {report:#}");
        assert_eq!(
            ids_with(&report, "failed"),
            vec![id.to_owned()],
            "{mode}: {report:#}"
        );
        let failed = report["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .find(|c| c["id"] == id)
            .expect("the failed check");
        let shown = failed["evidence"].to_string();
        assert!(shown.contains(evidence), "{mode}: {shown}");
        assert_eq!(report["summary"]["failed"], 1);
        assert_eq!(report["summary"]["required_profile_passed"], false);
    }
    let _ = std::fs::remove_file(
        std::env::temp_dir().join(format!("fabric-conformance-leak-{}", fabric_uid())),
    );
}

fn fabric_uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(0)
}

#[test]
fn an_adapter_claiming_streaming_that_sends_an_invalid_chunk_fails_streaming_chunks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = crate::support::scripted_config(
        dir.path(),
        "bad-chunk",
        serde_json::json!({"stream": {"fault": "bad_chunk"}}),
    );
    let (code, report) = check(&["fabric.scripted", "--config", &config]);
    assert_eq!(code, Some(1), "{report:#}");
    assert_eq!(
        ids_with(&report, "failed"),
        ["streaming.chunks"],
        "{report:#}"
    );
    let failed = &report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["id"] == "streaming.chunks")
        .expect("streaming.chunks")["evidence"];
    assert_eq!(
        failed["error"]["code"], "openai_stream_protocol_error",
        "{failed:#}"
    );
    assert_eq!(
        report["adapter"]["capabilities"]["streaming"],
        "claimed_but_failing"
    );
    // Streaming is optional: the required profile still passes.
    assert_eq!(report["summary"]["required_profile_passed"], true);
}

#[test]
fn a_streamed_turn_naming_two_completions_fails_streaming_one_turn_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = crate::support::scripted_config(
        dir.path(),
        "two-completions",
        serde_json::json!({"stream": {"fault": "two_completions"}}),
    );
    let (code, report) = check(&["fabric.scripted", "--config", &config]);
    assert_eq!(code, Some(1), "{report:#}");
    assert_eq!(
        ids_with(&report, "failed"),
        ["streaming.one_turn"],
        "{report:#}"
    );
    let failed = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["id"] == "streaming.one_turn")
        .expect("streaming.one_turn");
    assert!(
        failed["reason"]
            .as_str()
            .expect("reason")
            .contains("two completions"),
        "{failed:#}"
    );
    assert!(
        failed["evidence"]["chunks"]
            .as_array()
            .is_some_and(|c| c.len() > 1)
    );
}

#[test]
fn relay_records_that_name_another_request_fail_relay_correlation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = crate::support::scripted_config(
        dir.path(),
        "wrong-request-id",
        serde_json::json!({"atof": {"fault": "wrong_request_id"}}),
    );
    let (code, report) = check(&["fabric.scripted", "--config", &config]);
    assert_eq!(code, Some(1), "{report:#}");
    assert_eq!(
        ids_with(&report, "failed"),
        ["relay.correlation"],
        "{report:#}"
    );
    assert_eq!(
        report["adapter"]["capabilities"]["relay"],
        "claimed_but_failing"
    );
    assert_eq!(report["adapter"]["package"], "fabric-adapter-scripted");
}

#[test]
fn an_adapter_claiming_neither_streaming_nor_relay_skips_both_groups_saying_so() {
    let (_, report) = check(&[
        "--descriptor",
        &fixture("good"),
        "--only",
        "streaming",
        "--only",
        "relay",
    ]);
    let reasons: Vec<(&str, &str)> = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["status"] == "skipped")
        .map(|c| {
            (
                c["id"].as_str().expect("id"),
                c["reason"].as_str().expect("reason"),
            )
        })
        .collect();
    assert_eq!(
        reasons,
        [
            ("streaming.chunks", "streaming not claimed"),
            ("streaming.empty", "streaming not claimed"),
            ("streaming.early_close", "streaming not claimed"),
            ("streaming.one_turn", "streaming not claimed"),
            ("streaming.cancel", "streaming not claimed"),
            ("relay.correlation", "Relay telemetry not claimed"),
        ],
        "{report:#}"
    );
}

#[test]
fn only_runs_the_named_groups() {
    let (code, report) = check(&[
        "fabric.scripted",
        "--only",
        "descriptor",
        "--only",
        "doctor",
    ]);
    assert_eq!(code, Some(0), "{report:#}");
    let groups: std::collections::BTreeSet<&str> = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| c["group"].as_str().expect("group"))
        .collect();
    assert_eq!(
        groups.into_iter().collect::<Vec<_>>(),
        ["descriptor", "doctor"]
    );
}

#[test]
fn bad_input_exits_2_naming_the_problem() {
    let (code, report) = check(&["no.such.adapter"]);
    assert_eq!(code, Some(2));
    assert_eq!(report["error"]["code"], "adapter_not_found", "{report:#}");
    let (code, report) = check(&["fabric.scripted", "--only", "nonsense"]);
    assert_eq!(code, Some(2));
    assert!(
        report["error"]["message"]
            .as_str()
            .expect("message")
            .contains("nonsense")
    );
    let (code, report) = check(&[]);
    assert_eq!(code, Some(2));
    assert_eq!(report["error"]["code"], "invalid_argument", "{report:#}");
}

#[test]
fn a_terminal_gets_a_table() {
    let (code, shown) = on_terminal(&["adapters", "check", "fabric.scripted"], &[]);
    assert_eq!(code, Some(0), "{shown}");
    assert!(shown.contains("pass  lifecycle.stop"), "{shown}");
    assert!(shown.contains("0 failed"), "{shown}");
}

#[test]
fn adapters_without_a_subcommand_lists_as_adapters_list() {
    let plain = stdout_json(&fabric(&["adapters"]));
    let list = stdout_json(&fabric(&["adapters", "list"]));
    assert_eq!(plain, list);
    assert!(
        plain["adapters"]
            .as_array()
            .expect("adapters")
            .iter()
            .any(|a| a["adapter_id"] == "fabric.scripted")
    );
}

#[test]
fn the_python_echo_adapter_passes_every_applicable_check() {
    // An interpreter with nemo-fabric-adapters-common 0.5.0 (a failure without it, tests/dependency.rs).
    let Some(upstream) = crate::support::upstream::require() else {
        return;
    };
    crate::support::ensure_scripted_adapter();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_fabric"))
        .args(["adapters", "check", "fabric.python-echo", "--json"])
        .env("ADAPTER_PYTHON", upstream.python())
        // Importable without `pip install -e adapters/python-echo` too.
        .env("PYTHONPATH", crate::run::python_path())
        .output()
        .expect("run fabric");
    let report = stdout_json(&output);
    assert_eq!(output.status.code(), Some(0), "{report:#}");
    assert_passes(&report);
}
