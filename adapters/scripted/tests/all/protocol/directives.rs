//! Turn limits, replies, latches, crashes, OpenAI streaming and protocol faults on demand.

use std::time::Duration;

use serde_json::{Value, json};

use super::adapter::{
    DEADLINE, decode_line, invoke_msg, lifecycle_code, started, stop_msg, succeeded_output,
};

#[test]
fn max_turns_is_enforced_on_claimed_turns() {
    let mut a = started(json!({
        "harness": {"settings": {"replies": [{"response": "ok", "turns": 2}, {"response": "too long", "turns": 3}]}},
        "runtime": {"max_turns": 2}
    }));
    let r = a.request(invoke_msg("R1", json!("x"), json!({})));
    assert_eq!(succeeded_output(&r)["output"]["metadata"]["turns_used"], 2);
    assert!(succeeded_output(&r).get("extensions").is_none());
    let r = a.request(invoke_msg("R1", json!("x"), json!({})));
    let result = succeeded_output(&r);
    assert_eq!(result["status"], "failed");
    assert_eq!(result["error"]["code"], "max_turns_exceeded");
    // The turn limit is the iteration limit: the core-owned stop-reason extension says so.
    assert_eq!(
        result["extensions"],
        json!({"nemo_fabric.stop_reason": "max_iterations"})
    );
    let r = a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"turns": 5}}),
    ));
    assert_eq!(succeeded_output(&r)["error"]["code"], "max_turns_exceeded");
}

#[test]
fn exhausted_replies_can_fail() {
    let mut a =
        started(json!({"harness": {"settings": {"replies": ["one"], "when_exhausted": "fail"}}}));
    a.request(invoke_msg("R1", json!("x"), json!({})));
    let r = a.request(invoke_msg("R1", json!("x"), json!({})));
    assert_eq!(
        succeeded_output(&r)["error"]["code"],
        "scripted_replies_exhausted"
    );
}

#[test]
fn raise_latches_the_runtime() {
    let mut a = started(json!({}));
    let r = a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"raise": {"code": "adapter_broke", "message": "m"}}}),
    ));
    assert_eq!(lifecycle_code(&r), "adapter_broke");
    let r = a.request(invoke_msg("R1", json!("x"), json!({})));
    assert_eq!(lifecycle_code(&r), "lifecycle_runtime_failed");
    let r = a.request(stop_msg("R1"));
    assert_eq!(*succeeded_output(&r), Value::Null);
    assert!(a.wait_exit().success());
}

#[test]
fn crash_exits_without_answering() {
    let mut a = started(json!({}));
    a.send(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"crash": true}}),
    ));
    let status = a.wait_exit();
    assert_eq!(status.code(), Some(70));
    a.assert_stdout_closed();
}

#[test]
fn openai_stream_can_be_switched_off() {
    let mut a = started(json!({"harness": {"settings": {"stream": {"implemented": false}}}}));
    let mut msg = invoke_msg("R1", json!("x"), json!({}));
    msg["operation"] = json!("invoke_openai_stream");
    let r = a.request(msg);
    assert_eq!(r["operation"], "invoke_openai_stream");
    assert_eq!(lifecycle_code(&r), "lifecycle_openai_stream_unsupported");
    assert_eq!(r["outcome"]["error"]["stage"], "invoke");
}

#[test]
fn openai_stream_without_a_sink_is_refused() {
    let mut a = started(json!({}));
    let mut msg = invoke_msg("R1", json!("x"), json!({}));
    msg["operation"] = json!("invoke_openai_stream");
    let r = a.request(msg.clone());
    assert_eq!(lifecycle_code(&r), "lifecycle_invalid_stream_sink");
    msg["payload"]["stream"] = json!({"protocol_version": "fabric.openai_stream/v1alpha1",
        "profile": "openai.chat_completions.chunk/v1", "host": "127.0.0.1", "port": 1,
        "token": "t", "runtime_id": "R1", "invocation_id": "other", "request_id": "x"});
    let r = a.request(msg);
    assert_eq!(lifecycle_code(&r), "lifecycle_invalid_stream_sink");
    assert!(
        r["outcome"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("identity")
    );
}

#[test]
fn protocol_faults_on_demand() {
    let mut a = started(json!({}));
    a.send(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"protocol_fault": "non_json"}}),
    ));
    let raw = a.lines.recv_timeout(DEADLINE).unwrap();
    assert!(serde_json::from_slice::<Value>(&raw).is_err());
    a.send(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"protocol_fault": "invalid_utf8"}}),
    ));
    let raw = a.lines.recv_timeout(DEADLINE).unwrap();
    assert!(std::str::from_utf8(&raw).is_err());
    let r = a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"protocol_fault": "wrong_operation"}}),
    ));
    assert_eq!(r["operation"], "stop");
    let r = a.request(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"protocol_fault": "invalid_result"}}),
    ));
    assert_eq!(succeeded_output(&r)["status"], "bogus");
    a.send(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"protocol_fault": "oversized", "oversized_bytes": 100000}}),
    ));
    let raw = a.lines.recv_timeout(DEADLINE).unwrap();
    assert_eq!(raw.len(), 100000);
    decode_line(&raw);
    a.send(invoke_msg(
        "R1",
        json!("x"),
        json!({"scripted": {"protocol_fault": "silent"}}),
    ));
    let r = a.request(invoke_msg("R1", json!("after silence"), json!({})));
    assert_eq!(succeeded_output(&r)["output"]["response"], "after silence");
}

#[test]
fn exit_delay_answers_stop_then_keeps_running_for_the_delay() {
    let mut a = started(json!({"harness": {"settings": {"exit_delay_ms": 400}}}));
    let r = a.request(stop_msg("R1"));
    assert_eq!(r["outcome"]["status"], "succeeded", "{r}");
    std::thread::sleep(Duration::from_millis(150));
    assert!(
        a.child.try_wait().unwrap().is_none(),
        "exited before its delay"
    );
    let began = std::time::Instant::now();
    let status = a.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(began.elapsed() < Duration::from_secs(5));
}

#[test]
fn ignore_stop_never_answers() {
    let mut a = started(json!({"harness": {"settings": {"ignore_stop": true}}}));
    a.send(stop_msg("R1"));
    a.assert_silent(Duration::from_millis(300));
    assert!(
        a.child.try_wait().unwrap().is_none(),
        "host must keep running"
    );
}
