//! `fabric run --capture-model-calls` and its budgets.

use crate::support::{fabric, repo_root, stdout_json};

fn hello() -> String {
    repo_root()
        .join("examples/hello/fabric.json")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn budgets_need_capture_model_calls() {
    let output = fabric(&["run", &hello(), "--input", "hi", "--max-model-calls", "1"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let error = &stdout_json(&output)["error"];
    assert_eq!(error["path"], "--max-model-calls", "{error}");
    assert_eq!(error["code"], "invalid_value", "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains("--capture-model-calls"), "{message}");
}

#[test]
fn a_run_with_capture_and_budgets_succeeds() {
    let output = fabric(&[
        "run",
        &hello(),
        "--input",
        "hi",
        "--capture-model-calls",
        "--max-model-calls",
        "1",
        "--max-total-tokens",
        "100",
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let result = stdout_json(&output);
    assert_eq!(result["status"], "succeeded");
    // The example's model has no base_url: nothing to capture, no record.
    assert!(result.get("model_calls").is_none(), "{result}");
}
