//! Replays every committed fuzz input on stable: `fuzz/corpus/<target>/` (the minimized
//! corpus `bench/fuzz.sh` keeps) and `fuzz/regressions/<target>/` (every crash ever found),
//! through the same harness functions the cargo-fuzz targets call.

use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
    let dir = fuzz_dir().join(kind).join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Runs `target` on every corpus and regression file; fails naming each input that panics.
fn replay(target: &str) {
    let corpus = inputs("corpus", target);
    assert!(
        corpus.len() >= 10,
        "fuzz/corpus/{target} should hold the minimized corpus (found {} files)",
        corpus.len()
    );
    let files = corpus.into_iter().chain(inputs("regressions", target));
    let mut failed = Vec::new();
    let mut count = 0;
    for file in files {
        let data = std::fs::read(&file).expect("read a corpus file");
        count += 1;
        let outcome = std::panic::catch_unwind(|| fabric_fuzz::run_target(target, &data));
        if outcome.is_err() {
            failed.push(file.display().to_string());
        }
    }
    assert!(
        failed.is_empty(),
        "{target}: {} of {count} inputs panic: {failed:#?}",
        failed.len()
    );
}

#[test]
fn config_corpus() {
    replay("config");
}

#[test]
fn descriptor_corpus() {
    replay("descriptor");
}

#[test]
fn lifecycle_response_corpus() {
    replay("lifecycle_response");
}

#[test]
fn health_wire_corpus() {
    replay("health_wire");
}

#[test]
fn abi_corpus() {
    replay("abi");
}

#[test]
fn collector_http_corpus() {
    replay("collector_http");
}

#[test]
fn openai_stream_corpus() {
    replay("openai_stream");
}

#[test]
fn runtime_request_corpus() {
    replay("runtime_request");
}

#[test]
fn every_target_has_a_test() {
    let names: Vec<&str> = fabric_fuzz::TARGETS.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "config",
            "descriptor",
            "lifecycle_response",
            "health_wire",
            "abi",
            "collector_http",
            "openai_stream",
            "runtime_request"
        ]
    );
    for name in names {
        let source = fuzz_dir().join("fuzz_targets").join(format!("{name}.rs"));
        assert!(source.is_file(), "missing {}", source.display());
    }
}
