//! `fabric view` of a run whose model calls were captured (`RunResult.model_calls`, no Relay
//! trajectory): each assistant message of the conversation carries its call's latency,
//! tokens and model.

use serde_json::{Value, json};

use crate::export_gym_capture::record;
use crate::support::view::ViewServer;

#[test]
fn captured_calls_put_their_latency_and_tokens_on_the_assistant_messages() {
    let dir = tempfile::tempdir().expect("tempdir");
    let system = json!({"role": "system", "content": "be brief"});
    let user = json!({"role": "user", "content": "list files"});
    let call = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call-1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]});
    let tool = json!({"role": "tool", "tool_call_id": "call-1", "content": "a.txt"});
    let done = json!({"role": "assistant", "content": "a.txt"});
    let mut first = record("inv-1", 0, json!([system, user]), call.clone());
    let mut second = record("inv-1", 1, json!([system, user, call, tool]), done);
    for (record, latency, tokens_in, tokens_out) in
        [(&mut first, 420.4, 100, 7), (&mut second, 96.6, 120, 3)]
    {
        record["latency_total_ms"] = json!(latency);
        record["tokens_in"] = json!(tokens_in);
        record["tokens_out"] = json!(tokens_out);
    }
    let calls = dir.path().join("model-calls.jsonl");
    std::fs::write(&calls, format!("{first}\n{second}\n")).expect("records");
    let result = json!({
        "agent_name": "a", "harness": "h", "adapter_kind": "process", "runtime_id": "runtime-1",
        "invocation_id": "inv-1", "request_id": "request-1", "status": "succeeded",
        "output": {"response": "a.txt"},
        "model_calls": {"count": 2, "path": calls}
    });
    std::fs::write(dir.path().join("result.json"), result.to_string()).expect("result");

    let view = ViewServer::start(&[dir.path()]);
    let index = view.json("/api/index");
    let run = &index["runs"][0];
    let detail = view.json(&format!("/api/runs/{}", run["id"].as_str().expect("id")));
    assert_eq!(detail["conversation_source"], "model_calls", "{detail}");
    let conversation = detail["conversation"].as_array().expect("conversation");
    let roles: Vec<&str> = conversation
        .iter()
        .map(|m| m["role"].as_str().expect("role"))
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "assistant"]);
    let facts: Vec<&Value> = conversation.iter().map(|m| &m["model_call"]).collect();
    assert_eq!(
        facts,
        [
            &Value::Null,
            &Value::Null,
            &json!({"latency_ms": 420, "input_tokens": 100, "output_tokens": 7, "model": "m"}),
            &Value::Null,
            &json!({"latency_ms": 97, "input_tokens": 120, "output_tokens": 3, "model": "m"}),
        ]
    );
}
