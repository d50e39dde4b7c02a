//! Runs the built `fabric` binary: `validate` over the config corpus (exit 0, canonical JSON)
//! and over one bad config per rule (exit 2, a JSON error whose `path` names the field);
//! `schema` listing, printing and unknown names.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use fabric_config::{ConfigError, FabricConfig, schema};
use serde_json::Value;

const SENTINEL: &str = "S3CR3T-SENTINEL-VALUE";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn fabric(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fabric"))
        .args(args)
        .output()
        .expect("run fabric")
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
}

fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

#[test]
fn validate_accepts_every_corpus_config_and_prints_canonical_json() {
    let files = json_files(&fixtures().join("configs"));
    assert!(files.len() >= 20);
    for file in files {
        // The corpus is written for adapters that are not installed here: the config's own
        // rules only.
        let output = fabric(&["validate", file.to_str().unwrap(), "--config-only"]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}: {}",
            file.display(),
            String::from_utf8_lossy(&output.stdout)
        );
        let printed = stdout_json(&output);
        let expected = FabricConfig::parse(&std::fs::read_to_string(&file).unwrap())
            .unwrap()
            .to_canonical_value();
        assert_eq!(printed, expected, "{}", file.display());
        // The printed form is itself valid and stable.
        let again = FabricConfig::parse(&printed.to_string()).unwrap();
        assert_eq!(again.to_canonical_value(), printed, "{}", file.display());
    }
}

#[test]
fn validate_rejects_each_bad_config_with_code_and_path() {
    let dir = fixtures().join("configs-invalid");
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let expected = expected.as_object().unwrap();
    let files: Vec<PathBuf> = json_files(&dir)
        .into_iter()
        .filter(|path| path.file_name().unwrap() != "expected.json")
        .collect();
    assert_eq!(
        files.len(),
        expected.len(),
        "every bad config needs an expected.json entry"
    );
    let mut codes_seen = BTreeSet::new();
    for file in files {
        let name = file.file_name().unwrap().to_str().unwrap();
        let want = &expected[name];
        let output = fabric(&["validate", file.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(2), "{name}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !stdout.contains(SENTINEL) && !stderr.contains(SENTINEL),
            "{name} leaked a secret"
        );
        let error = &stdout_json(&output)["error"];
        assert_eq!(error["code"], want["code"], "{name}: {stdout}");
        assert_eq!(error["path"], want["path"], "{name}: {stdout}");
        assert_eq!(error["stage"], "config", "{name}");
        assert!(
            error["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{name}"
        );
        if let Some(path) = want["path"].as_str() {
            assert!(
                error["message"].as_str().unwrap().contains(path),
                "{name}: message names the path"
            );
        }
        codes_seen.insert(want["code"].as_str().unwrap().to_owned());
    }
    // One bad config per code; `temperature_not_finite` cannot be written in JSON (NaN and
    // infinities are not JSON numbers), `blank_request_id` is a RunRequest rule and the
    // `relay_stream_*` codes belong to the external-collector check of a streaming start
    // (`fabric_config::streaming`), not to `validate`; the two streaming option rules
    // belong to the start options (`run --stream-atof`, fabric-ffi/tests/all/atof_stream.rs);
    // all are covered by the fabric-config tests.
    let not_validate = [
        "temperature_not_finite",
        "blank_request_id",
        "launch_collector_requires_streaming",
        "streaming_requires_relay",
    ];
    let missing: Vec<&str> = ConfigError::all_codes()
        .into_iter()
        .filter(|code| !not_validate.contains(code))
        .filter(|code| !code.starts_with("relay_stream_"))
        .filter(|code| !codes_seen.contains(*code))
        .collect();
    assert!(missing.is_empty(), "no bad config for codes {missing:?}");
}

#[test]
fn validate_reports_unreadable_files_and_resolves_base_dir() {
    let output = fabric(&["validate", "/nonexistent/fabric.json"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stdout_json(&output)["error"]["code"], "config_read_failed");

    let file = fixtures().join("configs/capability-config.json");
    let output = fabric(&[
        "validate",
        file.to_str().unwrap(),
        "--base-dir",
        "/srv/job",
        "--config-only",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let printed = stdout_json(&output);
    assert_eq!(printed["skills"]["paths"][0], "/srv/job/skills/code-review");
    assert_eq!(printed["relay"]["output_dir"], "/srv/job/artifacts/relay");
}

#[test]
fn schema_lists_prints_and_rejects_unknown_names() {
    let output = fabric(&["schema"]);
    assert_eq!(output.status.code(), Some(0));
    let listed: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    let names: Vec<String> = schema::all()
        .into_iter()
        .map(|(n, _)| n.to_owned())
        .collect();
    assert_eq!(listed, names);
    assert!(listed.contains(&"sdk/agent".to_owned()));

    let output = fabric(&["schema", "sdk/agent"]);
    assert_eq!(output.status.code(), Some(0));
    let committed =
        std::fs::read_to_string(fixtures().join("../../schemas/sdk/agent.schema.json")).unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), committed);

    let output = fabric(&["schema", "sdk/does-not-exist"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stdout_json(&output)["error"]["code"], "unknown_schema");
}

/// Unknown keys upstream 0.5.0 tolerates inside Fabric-owned sections validate (exit 0, kept
/// in the canonical form) with one warning each on stderr, with a "did you mean".
#[test]
fn validate_warns_about_tolerated_unknown_keys() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("typo.json");
    std::fs::write(
        &file,
        r#"{"schema_version": "fabric.agent/v1alpha1", "metadata": {"name": "typo"},
            "harness": {"adapter_id": "fabric.scripted"},
            "environment": {"wokspace": "./ws", "shell": "bash"},
            "discovery": {"local_path": ["x"]},
            "models": {"default": {"provider": "openai", "model": "m", "max_tokens": 2.0}}}"#,
    )
    .unwrap();
    let output = fabric(&["validate", file.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0));
    let printed = stdout_json(&output);
    assert_eq!(printed["environment"]["wokspace"], "./ws");
    assert_eq!(printed["models"]["default"]["max_tokens"], 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .collect();
    assert_eq!(warnings.len(), 3, "{stderr}");
    assert!(
        stderr.contains("`discovery.local_path`") && stderr.contains("did you mean `local_paths`?"),
        "{stderr}"
    );
    assert!(stderr.contains("did you mean `workspace`?"), "{stderr}");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("`environment.shell`") && !w.contains("did you mean")),
        "{stderr}"
    );
}

/// A top-level typo gets a "did you mean" (issue 38 item 5), not only the list of keys.
#[test]
fn a_top_level_typo_gets_a_did_you_mean() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("typo.json");
    std::fs::write(
        &file,
        r#"{"schema_version": "fabric.agent/v1alpha1", "metadata": {"name": "typo"},
            "harnes": {"adapter_id": "fabric.scripted"}}"#,
    )
    .unwrap();
    let output = fabric(&["validate", file.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let error = &stdout_json(&output)["error"];
    assert_eq!(error["code"], "unknown_field", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("unknown field `harnes` (did you mean `harness`?)"),
        "{message}"
    );
    // A name close to nothing gets the list only.
    std::fs::write(
        &file,
        r#"{"schema_version": "fabric.agent/v1alpha1", "metadata": {"name": "typo"},
            "zzzzzz": 1}"#,
    )
    .unwrap();
    let output = fabric(&["validate", file.to_str().unwrap()]);
    let message = stdout_json(&output)["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!message.contains("did you mean"), "{message}");
    assert!(message.contains("expected one of"), "{message}");
}

/// JSON syntax errors say what is wrong in words, with line and column (issue 38 item 5).
#[test]
fn json_syntax_errors_are_said_in_words_with_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.json");
    let cases = [
        ("", "the file is empty", (1, 1)),
        ("  \n", "the file is empty", (1, 1)),
        (
            "nope",
            "the only bare words are `true`, `false` and `null`",
            (1, 2),
        ),
        ("{x: 1}", "expected a string key in double quotes", (1, 2)),
        (
            "{\"metadata\": {\"name\": \"a\"},\n}",
            "trailing comma: JSON allows no `,` before `]` or `}`",
            (2, 1),
        ),
        (
            "{\"metadata\": {\"name\": \"a\"}",
            "the text ends inside an object: a `}` is missing",
            (1, 26),
        ),
        (
            "{\"metadata\" {}}",
            "expected a `:` after the object key",
            (1, 13),
        ),
    ];
    for (text, words, (line, column)) in cases {
        std::fs::write(&file, text).unwrap();
        let output = fabric(&["validate", file.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(2), "{text:?}");
        let error = &stdout_json(&output)["error"];
        assert_eq!(error["code"], "invalid_json", "{text:?}: {error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(words), "{text:?}: {message}");
        for parser in [
            "EOF while parsing",
            "expected ident",
            "key must be a string",
        ] {
            assert!(!message.contains(parser), "{text:?}: {message}");
        }
        assert_eq!(error["metadata"]["line"], line, "{text:?}: {error}");
        assert_eq!(error["metadata"]["column"], column, "{text:?}: {error}");
        if !text.trim().is_empty() {
            assert!(
                message.ends_with(&format!("(line {line}, column {column})")),
                "{text:?}: {message}"
            );
        }
    }
}
