//! `fabric export gym` of a RunResult whose model calls were captured
//! (`RunResult.model_calls`): the records are joined into the bundle and, with no Relay
//! trajectory, state the conversation.

use crate::support::{fabric, stdout_json};
use serde_json::{Value, json};

/// A captured Chat Completions call of `invocation`, as the gateway records it.
pub(crate) fn record(invocation: &str, index: u64, messages: Value, answer: Value) -> Value {
    json!({
        "model_call_id": format!("model-call-{index}"), "call_index": index,
        "runtime_id": "runtime-1", "invocation_id": invocation, "client_session_id": invocation,
        "model_role": "default", "model": "m", "dialect": "chat", "method": "POST",
        "path": "/chat/completions",
        "model_ref": {"type": "responses_api_models", "name": "default"},
        "base_url": "http://127.0.0.1:9/v1", "started_at": 1.7e9, "completed_at": 1.7e9 + 0.5,
        "request": {"model": "m", "messages": messages}, "status_code": 200,
        "response": {"id": format!("chatcmpl-{index}"), "choices": [{"message": answer}]},
        "streamed": false, "chunks": 1, "latency_total_ms": 500.0,
        "response_id": format!("chatcmpl-{index}")
    })
}

#[test]
fn captured_model_calls_are_joined_and_state_the_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let system = json!({"role": "system", "content": "be brief"});
    let user = json!({"role": "user", "content": "list files"});
    let call = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call-1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]});
    let tool = json!({"role": "tool", "tool_call_id": "call-1", "content": "a.txt"});
    let done = json!({"role": "assistant", "content": "a.txt"});
    let records = [
        record("inv-1", 0, json!([system, user]), call.clone()),
        record("inv-1", 1, json!([system, user, call, tool]), done),
    ];
    let calls = dir.path().join("model-calls.jsonl");
    let lines: Vec<String> = records.iter().map(Value::to_string).collect();
    std::fs::write(&calls, lines.join("\n") + "\n").unwrap();
    let result = json!({
        "agent_name": "a", "harness": "h", "adapter_kind": "process", "runtime_id": "runtime-1",
        "invocation_id": "inv-1", "request_id": "request-1", "status": "succeeded",
        "output": {"response": "a.txt"},
        "model_calls": {"count": 2, "path": calls}
    });
    let input = dir.path().join("run.jsonl");
    std::fs::write(&input, result.to_string()).unwrap();

    let output = fabric(&[
        "export",
        "gym",
        input.to_str().unwrap(),
        "--task-id",
        "task-1",
        "--rollout-id",
        "r-0",
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let out = stdout_json(&output);
    let bundle = &out["ng_agent_observations"];
    let codes: Vec<&str> = bundle["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|gap| gap["code"].as_str().unwrap())
        .collect();
    // No Relay: tool calls stay unobserved, but the model calls and the conversation are
    // the captured ones.
    assert!(codes.contains(&"tool_calls_unobserved"), "{codes:?}");
    for code in [
        "model_calls_unobserved",
        "conversation_unavailable",
        "model_call_ownership_unavailable",
    ] {
        assert!(!codes.contains(&code), "{code}: {codes:?}");
    }
    let invocation = &bundle["records"][0];
    let ids: Vec<&str> = invocation["model_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|call| call["model_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["model-call-0", "model-call-1"]);
    assert_eq!(
        invocation["conversation"],
        json!([
            {"type": "message", "role": "system", "content": "be brief"},
            {"type": "message", "role": "user", "content": "list files"},
            {"type": "function_call", "call_id": "call-1", "name": "ls", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call-1", "output": "a.txt"},
            {"type": "message", "role": "assistant", "content": "a.txt"}
        ])
    );
    assert_eq!(
        out["trajectory"]["invocations"][0]["model_calls"],
        invocation["model_calls"]
    );
}

#[test]
fn unreadable_records_leave_the_model_calls_unobserved() {
    let dir = tempfile::tempdir().unwrap();
    let result = json!({
        "agent_name": "a", "harness": "h", "adapter_kind": "process", "runtime_id": "runtime-1",
        "invocation_id": "inv-1", "request_id": "request-1", "status": "succeeded",
        "output": null,
        "model_calls": {"count": 1, "path": dir.path().join("model-calls.jsonl")}
    });
    let input = dir.path().join("run.jsonl");
    std::fs::write(&input, result.to_string()).unwrap();
    let output = fabric(&[
        "export",
        "gym",
        input.to_str().unwrap(),
        "--task-id",
        "task-1",
        "--rollout-id",
        "r-0",
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let gaps = stdout_json(&output)["ng_agent_observations"]["gaps"].clone();
    let unobserved: Vec<&Value> = gaps
        .as_array()
        .unwrap()
        .iter()
        .filter(|gap| gap["code"] == "model_calls_unobserved")
        .collect();
    assert!(
        unobserved
            .iter()
            .any(|gap| gap["detail"] == "model-calls.jsonl: unreadable"),
        "{gaps}"
    );
}
