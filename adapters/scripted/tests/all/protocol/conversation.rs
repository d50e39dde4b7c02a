//! Echo state, runtimes, scripted results and artifacts.

use serde_json::{Value, json};

use super::adapter::{
    Adapter, context, invoke_msg, scratch_dir, start_msg, started, stop_msg, succeeded_output,
};

#[test]
fn echo_keeps_conversation_state_and_stop_exits() {
    let mut a = started(json!({
        "harness": {"settings": {"replies": ["first: {input}", "second: {input}, before: {previous_input}"]}},
        "instructions": {"system": {"content": "Be brief.", "mode": "append"}},
        "runtime": {"max_turns": 4}
    }));
    let one = a.request(invoke_msg("R1", json!("alpha"), json!({})));
    assert_eq!(one["operation"], "invoke");
    let result = succeeded_output(&one);
    assert_eq!(result["status"], "succeeded");
    assert_eq!(result["output"]["response"], "first: alpha");
    assert_eq!(result["output"]["turn"], 1);
    assert_eq!(result["output"]["history"], 0);
    let meta = &result["output"]["metadata"];
    assert_eq!(
        meta["system_instruction"],
        json!({"content": "Be brief.", "mode": "append"})
    );
    assert_eq!(meta["max_turns"], 4);

    let two = a.request(invoke_msg("R1", json!({"text": "beta"}), json!({})));
    let result = succeeded_output(&two);
    assert_eq!(result["output"]["response"], "second: beta, before: alpha");
    assert_eq!(result["output"]["turn"], 2);
    assert_eq!(result["output"]["history"], 1);

    // Replies cycle by default.
    let three = a.request(invoke_msg("R1", json!("gamma"), json!({})));
    assert_eq!(
        succeeded_output(&three)["output"]["response"],
        "first: gamma"
    );

    let stop = a.request(stop_msg("R1"));
    assert_eq!(stop["operation"], "stop");
    assert_eq!(*succeeded_output(&stop), Value::Null);
    assert!(a.wait_exit().success());
    a.assert_stdout_closed();
}

#[test]
fn default_is_echo() {
    let mut a = started(json!({}));
    let r = a.request(invoke_msg("R1", json!("hello there"), json!({})));
    let result = succeeded_output(&r);
    assert_eq!(result["output"]["response"], "hello there");
    assert_eq!(result["output"]["metadata"]["source"], "echo");
    assert!(result.get("error").is_none());
}

#[test]
fn two_runtimes_do_not_share_state() {
    let mut a = started(json!({"harness": {"settings": {"replies": ["prev={previous_input}"]}}}));
    let mut b = started(json!({"harness": {"settings": {"replies": ["prev={previous_input}"]}}}));
    a.request(invoke_msg("R1", json!("only-in-a"), json!({})));
    let rb = b.request(invoke_msg("R1", json!("b1"), json!({})));
    assert_eq!(succeeded_output(&rb)["output"]["response"], "prev=");
    let ra = a.request(invoke_msg("R1", json!("a2"), json!({})));
    assert_eq!(
        succeeded_output(&ra)["output"]["response"],
        "prev=only-in-a"
    );
}

#[test]
fn fail_directive_returns_failed_result_with_code_and_usage() {
    let mut a = started(json!({}));
    let r = a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {
            "fail": {"code": "tool_error", "message": "the tool broke", "retryable": true},
            "usage": {"input_tokens": 12, "output_tokens": 3, "cost_usd": 0.5}
        }}),
    ));
    let result = succeeded_output(&r);
    assert_eq!(result["status"], "failed");
    assert_eq!(result["output"], Value::Null);
    assert_eq!(
        result["error"],
        json!({"code": "tool_error", "message": "the tool broke", "retryable": true})
    );
    assert_eq!(
        result["usage"],
        json!({"input_tokens": 12, "output_tokens": 3, "cost_usd": 0.5})
    );
    // A failed result is not a lifecycle failure: the runtime keeps serving.
    let next = a.request(invoke_msg("R1", json!("y"), json!({})));
    assert_eq!(succeeded_output(&next)["status"], "succeeded");
}

#[test]
fn directives_in_input_object_work_too() {
    let mut a = started(json!({}));
    let r = a.request(invoke_msg(
        "R1",
        json!({"text": "hi", "scripted": {"fail": {"code": "c", "message": "m"}}}),
        json!({}),
    ));
    assert_eq!(succeeded_output(&r)["error"]["code"], "c");
    let bad = a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"nope": 1}}),
    ));
    let result = succeeded_output(&bad);
    assert_eq!(result["status"], "failed");
    assert_eq!(result["error"]["code"], "scripted_invalid_directive");
}

#[test]
fn artifact_directive_writes_under_the_root_and_returns_a_relative_ref() {
    let scratch = scratch_dir("artifact");
    let root = scratch.path().join("root");
    let mut a = started(json!({}));
    let mut msg = invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"artifact": {"name": "notes/answer.txt", "content": "forty-two", "media_type": "text/plain"}}}),
    );
    msg["payload"]["runtime_context"] = context("R1", Some(&root));
    let r = a.request(msg);
    let result = succeeded_output(&r);
    assert_eq!(
        result["artifacts"],
        json!([{"name": "notes/answer.txt", "kind": "file", "path": "notes/answer.txt", "media_type": "text/plain"}])
    );
    let written = std::fs::read_to_string(root.join("notes/answer.txt")).unwrap();
    assert_eq!(written, "forty-two");
    // Unsafe names never touch the file system.
    let mut msg = invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"artifact": {"name": "../escape.txt", "content": "no"}}}),
    );
    msg["payload"]["runtime_context"] = context("R1", Some(&root));
    let r = a.request(msg);
    assert_eq!(
        succeeded_output(&r)["error"]["code"],
        "scripted_invalid_directive"
    );
    assert!(!scratch.path().join("escape.txt").exists());
}

#[test]
fn artifact_root_falls_back_to_fabric_artifacts() {
    let scratch = scratch_dir("artifact-env");
    let root = scratch.path().to_path_buf();
    let mut a = Adapter::spawn_with_env(&[("FABRIC_ARTIFACTS", &root)]);
    assert_eq!(
        *succeeded_output(&a.request(start_msg("R1", json!({})))),
        Value::Null
    );
    let r = a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"artifact": {"name": "a.txt", "content": "env"}}}),
    ));
    assert_eq!(succeeded_output(&r)["artifacts"][0]["path"], "a.txt");
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "env");
}
