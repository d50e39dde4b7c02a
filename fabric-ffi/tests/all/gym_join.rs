//! `fabric_gym_join_model_calls` through the Rust view of the ABI: references resolved to
//! captured calls, each unresolvable one a gap, and the error of a malformed bundle.

use std::ffi::CString;

use crate::support::call;
use fabric_ffi::{FabricStatus, fabric_gym_join_model_calls};
use serde_json::{Value, json};

fn join(request: &Value) -> (i32, Value) {
    let request = CString::new(request.to_string()).expect("cstring");
    // SAFETY: a valid string and slot.
    call(|out| unsafe { fabric_gym_join_model_calls(request.as_ptr(), out) })
}

fn server() -> Value {
    json!({"type": "responses_api_models", "name": "policy"})
}

fn invocation(id: &str, calls: Value) -> Value {
    json!({"kind": "agent_invocation", "invocation_id": id, "status": "completed",
           "model_calls": calls, "conversation": []})
}

fn gaps(bundle: &Value) -> Vec<(String, String, String)> {
    let text = |v: &Value| v.as_str().unwrap_or("-").to_owned();
    bundle["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                text(&g["code"]),
                text(&g["invocation_id"]),
                text(&g["detail"]),
            )
        })
        .collect()
}

#[test]
fn references_resolve_to_captured_calls_without_guessing() {
    let bundle = json!({"source": "s", "gaps": [
        {"code": "model_call_reference_unmatched", "invocation_id": "root", "detail": "stale"}],
        "records": [
        invocation("root", json!([{"model_call_id": "mc-1"},
                                  {"model_ref": server(), "response_id": "resp-2"},
                                  {"model_call_id": "mc-dup"}, {"model_call_id": "mc-gone"}])),
        invocation("sub", json!([{"model_call_id": "mc-1"}])),
        {"kind": "context_compaction", "invocation_id": "root", "outcome": "completed",
         "model_calls": [{"model_call_id": "mc-1"}, {"model_call_id": "mc-4"}],
         "after_model_call": {"model_call_id": "mc-gone"}},
    ]});
    let calls = json!([
        {"model_call_id": "mc-1", "response_id": "resp-1", "model_ref": server(), "call_index": 0,
         "tokens_in": 12},
        {"model_call_id": "mc-2", "response_id": "resp-2", "model_ref": server(), "call_index": 1},
        {"model_call_id": "mc-dup", "call_index": 2},
        {"model_call_id": "mc-dup", "call_index": 3},
        {"model_call_id": "mc-4", "call_index": 4},
        {"model_call_id": "mc-5", "client_session_id": "sub", "call_index": 5},
        {"response_id": "resp-6", "call_index": 6},
    ]);
    let (status, out) = join(&json!({"bundle": bundle, "calls": calls}));
    assert_eq!(status, FabricStatus::Ok as i32, "{out}");
    let full = |id: &str, response: &str| json!({"model_call_id": id, "model_ref": server(), "response_id": response});
    assert_eq!(
        out["records"][0]["model_calls"],
        json!([full("mc-1", "resp-1"), full("mc-2", "resp-2"),
               {"model_call_id": "mc-dup"}, {"model_call_id": "mc-gone"}])
    );
    // `sub` reports mc-1 too (root owns it) and its session names mc-5, added and owned.
    assert_eq!(
        out["records"][1]["model_calls"],
        json!([{"model_call_id": "mc-1"}, {"model_call_id": "mc-5"}])
    );
    assert_eq!(
        out["records"][2]["model_calls"],
        json!([full("mc-1", "resp-1"), {"model_call_id": "mc-4"}])
    );
    let expected = [
        ("model_call_reference_ambiguous", "root", "mc-dup"),
        ("model_call_reference_unmatched", "root", "mc-gone"),
        ("model_call_reference_conflict", "sub", "mc-1"),
        (
            "model_call_ownership_unavailable",
            "root",
            "model_calls:mc-4",
        ),
        (
            "model_call_reference_unmatched",
            "root",
            "after_model_call:mc-gone",
        ),
        (
            "model_call_ownership_unavailable",
            "-",
            "capture:mc-dup:call_index=2",
        ),
        (
            "model_call_ownership_unavailable",
            "-",
            "capture:mc-dup:call_index=3",
        ),
        (
            "model_call_ownership_unavailable",
            "-",
            "capture:mc-4:call_index=4",
        ),
        (
            "model_call_ownership_unavailable",
            "-",
            "capture:resp-6:call_index=6",
        ),
    ];
    let expected: Vec<(String, String, String)> = expected
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    assert_eq!(gaps(&out), expected);

    // Joining the output again yields the same records and gaps (a compaction's gap, not a
    // join gap of the input, now comes first).
    let (_, again) = join(&json!({"bundle": out, "calls": calls}));
    assert_eq!(again["records"], out["records"]);
    let (mut first, mut second) = (gaps(&out), gaps(&again));
    first.sort();
    second.sort();
    assert_eq!(first, second);
}

#[test]
fn a_malformed_bundle_is_a_config_error_under_bundle() {
    let bundle = json!({"source": "s", "records": [
        invocation("a", json!([])), invocation("a", json!([]))]});
    let (status, error) = join(&json!({"bundle": bundle, "calls": []}));
    assert_eq!(status, FabricStatus::Config as i32);
    assert_eq!(error["code"], "gym_invocation_id_duplicate");
    assert_eq!(error["metadata"]["path"], "bundle.records[1].invocation_id");

    let (status, error) =
        join(&json!({"bundle": {"source": "s"}, "calls": [{"model_call_id": "x"}]}));
    assert_eq!(status, FabricStatus::Config as i32);
    assert!(
        error["metadata"]["path"]
            .as_str()
            .unwrap()
            .starts_with("calls[0]"),
        "{error}"
    );
}
