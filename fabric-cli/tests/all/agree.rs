//! The CLI agrees with itself (issue 38 item 4): `validate`, `plan`, `doctor` and `run` give
//! one verdict for the same config and base directory, with the same exit code, the same
//! code and the same "did you mean" hint; and the bundled hello example is clean under
//! `doctor`, which reads on a terminal and shows canonical paths (item 6).

use std::path::Path;

use crate::support::{fabric, on_terminal, repo_root, stdout_json};
use serde_json::{Value, json};

/// The hello example with `edit` applied, written into `dir`.
fn hello_with(dir: &Path, edit: impl FnOnce(&mut Value)) -> String {
    let text = std::fs::read_to_string(repo_root().join("examples/hello/fabric.json"))
        .expect("read hello");
    let mut config: Value = serde_json::from_str(&text).expect("hello is JSON");
    edit(&mut config);
    let path = dir.join("fabric.json");
    std::fs::write(&path, config.to_string()).expect("write config");
    path.to_string_lossy().into_owned()
}

/// What each command says about `config`: (command, exit code, code, message).
fn verdicts(config: &str) -> Vec<(&'static str, Option<i32>, String, String)> {
    let mut out = Vec::new();
    for (name, args) in [
        ("validate", vec!["validate", config]),
        ("plan", vec!["plan", config]),
        ("run", vec!["run", config, "--input", "hi"]),
    ] {
        let output = fabric(&args);
        let value = stdout_json(&output);
        let error = &value["error"];
        out.push((
            name,
            output.status.code(),
            error["code"].as_str().unwrap_or("").to_owned(),
            error["message"].as_str().unwrap_or("").to_owned(),
        ));
    }
    let output = fabric(&["doctor", config]);
    let report = stdout_json(&output);
    let failed = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|check| check["status"] == "fail");
    out.push((
        "doctor",
        output.status.code(),
        failed
            .map_or("", |check| check["code"].as_str().unwrap_or(""))
            .to_owned(),
        failed
            .map_or("", |check| check["message"].as_str().unwrap_or(""))
            .to_owned(),
    ));
    out
}

#[test]
fn a_near_miss_extension_key_gets_one_verdict_and_the_hint_from_every_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = hello_with(dir.path(), |config| {
        config["runtime"] = json!({"max_turn": 3});
    });
    for (command, exit, code, message) in verdicts(&config) {
        assert_eq!(exit, Some(2), "{command}: {message}");
        assert_eq!(code, "config_incompatible", "{command}: {message}");
        assert!(
            message.contains("`runtime.max_turn`")
                && message.contains("(did you mean `max_turns`?)"),
            "{command}: {message}"
        );
    }
    // The failed check carries the hint; doctor does not warn about the same key again.
    let report = stdout_json(&fabric(&["doctor", &config]));
    let at_key: Vec<&Value> = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|check| check["path"] == "runtime.max_turn")
        .collect();
    assert_eq!(at_key.len(), 1, "{report}");
    // `--config-only` judges the config alone: it passes, with the warning.
    let output = fabric(&["validate", &config, "--config-only"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("(did you mean `max_turns`?)"), "{stderr}");
}

#[test]
fn an_adapter_discovery_cannot_find_gets_one_verdict_from_every_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = hello_with(dir.path(), |config| {
        config["harness"] = json!({"adapter_id": "example.nowhere"});
    });
    for (command, exit, code, message) in verdicts(&config) {
        assert_eq!(exit, Some(2), "{command}: {message}");
        assert_eq!(code, "adapter_not_found", "{command}: {message}");
    }
}

#[test]
fn a_sound_config_passes_every_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = hello_with(dir.path(), |_| {});
    for (command, exit, code, message) in verdicts(&config) {
        assert_eq!(exit, Some(0), "{command}: {code} {message}");
    }
}

/// The bundled example is what a new user runs first: no warning under doctor.
#[test]
fn the_hello_example_is_clean_under_doctor() {
    let hello = repo_root().join("examples/hello/fabric.json");
    let output = fabric(&["doctor", &hello.to_string_lossy()]);
    let report = stdout_json(&output);
    assert_eq!(output.status.code(), Some(0), "{report}");
    assert_eq!(report["status"], "pass", "{report}");
}

#[test]
fn doctor_reads_on_a_terminal_and_prints_json_when_asked_or_piped() {
    let hello = repo_root()
        .join("examples/hello/fabric.json")
        .to_string_lossy()
        .into_owned();
    let (code, shown) = on_terminal(&["doctor", &hello], &[]);
    assert_eq!(code, Some(0), "{shown}");
    let mut lines = shown.lines();
    assert_eq!(
        lines.next(),
        Some("✓ doctor · hello · ready: every check passed"),
        "{shown}"
    );
    assert!(
        shown.contains(
            "  ✓ adapter_descriptor  resolved bundled adapter descriptor `fabric.scripted`"
        ),
        "{shown}"
    );
    assert!(!shown.contains("\"checks\""), "{shown}");

    let (_, json_shown) = on_terminal(&["doctor", &hello, "--json"], &[]);
    let report: Value = serde_json::from_str(&json_shown).expect("--json prints the report");
    assert_eq!(report["agent_name"], "hello");

    // A failed check is marked, with the field and the registry's hint.
    let dir = tempfile::tempdir().expect("tempdir");
    let config = hello_with(dir.path(), |config| {
        config["runtime"] = json!({"max_turn": 3});
    });
    let (code, shown) = on_terminal(&["doctor", &config], &[]);
    assert_eq!(code, Some(2), "{shown}");
    assert!(
        shown.starts_with("✗ doctor · hello · not ready: 1 check failed, 0 warnings"),
        "{shown}"
    );
    assert!(
        shown.contains("  ✗ compatibility ") && shown.contains("(did you mean `max_turns`?)"),
        "{shown}"
    );
    assert!(shown.contains("hint: `fabric inspect CONFIG`"), "{shown}");
}

/// Descriptor paths are shown canonical: never a build path such as
/// `fabric-plan/../adapters`.
#[test]
fn doctor_and_plan_show_canonical_descriptor_paths() {
    let hello = repo_root().join("examples/hello/fabric.json");
    let hello = hello.to_string_lossy();
    let report = stdout_json(&fabric(&["doctor", &hello]));
    let file = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|check| check["name"] == "adapter_descriptor")
        .and_then(|check| check["metadata"]["file"].as_str())
        .unwrap_or_else(|| panic!("{report}"))
        .to_owned();
    let canonical = std::fs::canonicalize(&file).expect("the file exists");
    assert_eq!(Path::new(&file), canonical, "{file}");
    let plan = stdout_json(&fabric(&["plan", &hello]));
    let provenance = &plan["adapter_descriptor"]["provenance"][0];
    assert_eq!(provenance["path"].as_str(), Some(file.as_str()), "{plan}");
    assert!(
        !provenance["root"].as_str().unwrap_or("..").contains(".."),
        "{plan}"
    );
}
