//! Malformed lines, operations out of order, start failures, end of input, and the
//! response bytes.

use serde_json::json;

use super::adapter::{
    Adapter, DEADLINE, invoke_msg, lifecycle_code, start_msg, started, stop_msg, succeeded_output,
};

#[test]
fn malformed_lines_are_answered_and_do_not_exit() {
    let mut a = started(json!({}));
    a.send_raw(b"{not json\n");
    assert_eq!(lifecycle_code(&a.recv()), "lifecycle_invalid_request");
    a.send_raw(b"[1, 2]\n");
    assert_eq!(lifecycle_code(&a.recv()), "lifecycle_invalid_request");
    a.send_raw(b"\xff\xfe\n");
    assert_eq!(lifecycle_code(&a.recv()), "lifecycle_invalid_request");
    let r = a.request(json!({"operation": "dance", "payload": {}}));
    assert_eq!(r["operation"], "dance");
    assert_eq!(lifecycle_code(&r), "lifecycle_invalid_operation");
    let r = a.request(json!({"operation": "invoke", "payload": []}));
    assert_eq!(lifecycle_code(&r), "lifecycle_invalid_payload");
    let r = a.request(json!({"operation": "invoke", "payload": {"runtime_context": {}}}));
    assert_eq!(lifecycle_code(&r), "lifecycle_invalid_runtime");
    let mut typed = invoke_msg("R1", json!("x"), json!({}));
    typed["payload"]["request"]["surprise"] = json!(1);
    assert_eq!(
        lifecycle_code(&a.request(typed)),
        "lifecycle_invalid_request"
    );
    // Still serving.
    let r = a.request(invoke_msg("R1", json!("still here"), json!({})));
    assert_eq!(succeeded_output(&r)["output"]["response"], "still here");
}

#[test]
fn invoke_before_start_and_stop_before_start() {
    let mut a = Adapter::spawn();
    let r = a.request(invoke_msg("R1", json!("x"), json!({})));
    assert_eq!(r["operation"], "invoke");
    assert_eq!(lifecycle_code(&r), "lifecycle_not_started");
    assert_eq!(r["outcome"]["error"]["stage"], "invoke");
    // A failed stop ends the host, as upstream's does.
    let r = a.request(stop_msg("R1"));
    assert_eq!(lifecycle_code(&r), "lifecycle_not_started");
    assert!(a.wait_exit().success());
}

#[test]
fn runtime_mismatch() {
    let mut a = started(json!({}));
    let r = a.request(invoke_msg("R2", json!("x"), json!({})));
    assert_eq!(lifecycle_code(&r), "lifecycle_runtime_mismatch");
    let r = a.request(invoke_msg("R1", json!("x"), json!({})));
    assert_eq!(succeeded_output(&r)["status"], "succeeded");
}

#[test]
fn second_start_fails_and_exits() {
    let mut a = started(json!({}));
    let r = a.request(start_msg("R1", json!({})));
    assert_eq!(lifecycle_code(&r), "lifecycle_already_started");
    assert!(a.wait_exit().success());
}

#[test]
fn invalid_config_and_settings_fail_start_and_exit() {
    let mut a = Adapter::spawn();
    let r = a.request(start_msg(
        "R1",
        json!({"harness": {"settings": {}}, "surprise": true}),
    ));
    assert_eq!(lifecycle_code(&r), "lifecycle_invalid_config");
    assert!(a.wait_exit().success());

    let mut a = Adapter::spawn();
    let r = a.request(start_msg(
        "R1",
        json!({"harness": {"settings": {"replies": [{"turns": 0}]}}}),
    ));
    assert_eq!(lifecycle_code(&r), "invalid_settings");
    assert_eq!(
        r["outcome"]["error"]["metadata"]["path"],
        "harness.settings.replies[0].turns"
    );
    assert!(a.wait_exit().success());

    let mut a = Adapter::spawn();
    let r = a.request(start_msg(
        "R1",
        json!({"harness": {"settings": {"start_fail": {"code": "warmup_failed", "message": "no", "retryable": true}}}}),
    ));
    assert_eq!(lifecycle_code(&r), "warmup_failed");
    assert_eq!(r["outcome"]["error"]["retryable"], true);
    assert!(a.wait_exit().success());
}

#[test]
fn eof_stops_and_exits_zero() {
    let mut a = started(json!({}));
    a.request(invoke_msg("R1", json!("x"), json!({})));
    a.close_stdin();
    assert!(a.wait_exit().success());
    a.assert_stdout_closed();
}

#[test]
fn eof_before_start_exits_zero() {
    let mut a = Adapter::spawn();
    a.close_stdin();
    assert!(a.wait_exit().success());
    a.assert_stdout_closed();
}

#[test]
fn responses_match_python_json_dumps_bytes() {
    let mut a = started(json!({}));
    a.send(invoke_msg("R1", json!("é"), json!({})));
    let raw = a.lines.recv_timeout(DEADLINE).unwrap();
    let text = String::from_utf8(raw).unwrap();
    assert!(text.starts_with(r#"{"operation": "invoke", "outcome": {"output": {"output": {"history": 0, "metadata": {"adapter_id": "fabric.scripted""#), "{text}");
    assert!(text.contains(r#""response": "\u00e9""#), "{text}");
    assert!(
        text.ends_with("\"status\": \"succeeded\"}, \"status\": \"succeeded\"}}\n"),
        "{text}"
    );
}
