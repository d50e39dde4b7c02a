//! `fabric_gym_join_assistant_messages` through the Rust view of the ABI, on the shared
//! rollout of tests/fixtures/gym-join-assistant.json: one rule per turn or call (see
//! docs/gym.md), a second join of the output, and the errors of malformed input.

use std::ffi::CString;

use crate::support::{call, repo_root};
use fabric_ffi::{FabricStatus, fabric_gym_join_assistant_messages};
use serde_json::{Value, json};

fn join(request: &Value) -> (i32, Value) {
    let request = CString::new(request.to_string()).expect("cstring");
    // SAFETY: a valid string and slot.
    call(|out| unsafe { fabric_gym_join_assistant_messages(request.as_ptr(), out) })
}

fn fixture() -> Value {
    let path = repo_root().join("tests/fixtures/gym-join-assistant.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("json")
}

fn request(fixture: &Value) -> Value {
    json!({"bundle": fixture["bundle"], "trajectory": fixture["trajectory"],
           "calls": fixture["calls"]})
}

/// The `model_call_id`s of a list of references.
fn ids(references: &Value) -> Vec<&str> {
    let list = references.as_array().expect("model_calls");
    list.iter()
        .map(|r| r["model_call_id"].as_str().unwrap())
        .collect()
}

fn has_gap(document: &Value, code: &str, invocation: &str, detail: &str) -> bool {
    let gaps = document["gaps"].as_array().expect("gaps");
    gaps.iter()
        .any(|g| g["code"] == code && g["invocation_id"] == invocation && g["detail"] == detail)
}

#[test]
fn declared_messages_join_their_attempts_and_nothing_is_guessed() {
    let fixture = fixture();
    let (status, out) = join(&request(&fixture));
    assert_eq!(status, FabricStatus::Ok as i32, "{out}");
    assert_eq!(out, fixture["joined"]);
    let (bundle, trajectory) = (&out["bundle"], &out["trajectory"]);
    let turn = |invocation: &str, no: u64| {
        let turns = trajectory["turns"].as_array().unwrap();
        turns
            .iter()
            .find(|t| t["invocation_id"] == invocation && t["turn_no"] == no)
            .unwrap()
            .clone()
    };
    // A message with two HTTP attempts, a message with one, and a subagent's message.
    assert_eq!(
        ids(&turn("root", 1)["model_calls"]),
        ["mc-retry-1", "mc-retry-2"]
    );
    assert_eq!(ids(&turn("root", 2)["model_calls"]), ["mc-one"]);
    assert_eq!(ids(&turn("sub", 1)["model_calls"]), ["mc-sub"]);
    // The summary attempt belongs to the compaction that declares its message.
    assert_eq!(ids(&bundle["records"][2]["model_calls"]), ["mc-summary"]);
    // The title call (no saved message) stays with its invocation only, without a gap.
    assert!(ids(&bundle["records"][1]["model_calls"]).contains(&"mc-title"));
    let all_turn_calls: Vec<&str> = trajectory["turns"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| ids(&t["model_calls"]))
        .collect();
    assert!(!all_turn_calls.contains(&"mc-title"));
    assert!(!all_turn_calls.contains(&"mc-summary"));
    // Two turns declaring one message: ambiguous, neither joined, the reported refs kept.
    let twice = "source_message_id:msg-twice";
    assert!(has_gap(
        bundle,
        "model_call_reference_ambiguous",
        "root",
        twice
    ));
    assert_eq!(ids(&turn("root", 3)["model_calls"]), ["mc-reported"]);
    assert_eq!(ids(&turn("root", 4)["model_calls"]), Vec::<&str>::new());
    // Another model server than the declared source_model_ref.
    let judged = "source_message_id:msg-judged:mc-judged";
    assert!(has_gap(
        bundle,
        "message_model_ref_mismatch",
        "root",
        judged
    ));
    assert_eq!(ids(&turn("root", 5)["model_calls"]), Vec::<&str>::new());
    // The call of the message is owned by another invocation (sub reported it first).
    let owned = "source_message_id:msg-sub-owned:mc-x";
    assert!(has_gap(
        bundle,
        "model_call_reference_conflict",
        "root",
        owned
    ));
    // A declared message without a captured call; a captured message nobody declared.
    let lost = "source_message_id:msg-lost";
    assert!(has_gap(
        bundle,
        "model_call_reference_unmatched",
        "root",
        lost
    ));
    let undeclared = "client_assistant_message_id:msg-undeclared";
    assert!(has_gap(
        bundle,
        "assistant_message_undeclared",
        "root",
        undeclared
    ));
    // A turn that declares no message keeps what was reported.
    assert_eq!(ids(&turn("root", 8)["model_calls"]), ["mc-reported-8"]);
    // The trajectory carries the joined invocations and the same join gaps; the stale
    // join gap of the input is gone.
    assert_eq!(
        trajectory["invocations"][1]["model_calls"],
        bundle["records"][1]["model_calls"]
    );
    assert_eq!(trajectory["gaps"], bundle["gaps"]);
    assert!(!has_gap(
        bundle,
        "assistant_message_undeclared",
        "root",
        "client_assistant_message_id:stale"
    ));

    // Joining the output again changes nothing.
    let again = json!({"bundle": bundle, "trajectory": trajectory, "calls": fixture["calls"]});
    let (status, second) = join(&again);
    assert_eq!(status, FabricStatus::Ok as i32, "{second}");
    assert_eq!(second, out);
}

#[test]
fn without_a_trajectory_only_compactions_are_joined() {
    let fixture = fixture();
    let (status, out) = join(&json!({"bundle": fixture["bundle"], "calls": fixture["calls"]}));
    assert_eq!(status, FabricStatus::Ok as i32, "{out}");
    assert!(out.get("trajectory").is_none(), "{out}");
    assert_eq!(
        ids(&out["bundle"]["records"][2]["model_calls"]),
        ["mc-summary"]
    );
    let gaps = out["bundle"]["gaps"].as_array().unwrap();
    assert!(
        gaps.iter()
            .all(|g| g["code"] != "assistant_message_undeclared"),
        "{out}"
    );
}

#[test]
fn malformed_input_is_a_config_error_naming_the_path() {
    let fixture = fixture();
    let mut bad = request(&fixture);
    bad["trajectory"]["turns"][1]["turn_no"] = json!(1);
    let (status, error) = join(&bad);
    assert_eq!(status, FabricStatus::Config as i32, "{error}");
    assert_eq!(error["code"], "gym_turn_invalid");
    assert!(
        error["metadata"]["path"]
            .as_str()
            .unwrap()
            .starts_with("trajectory.turns[1]"),
        "{error}"
    );
    let mut bad = request(&fixture);
    bad["calls"][0]["client_assistant_message_id"] = json!(7);
    let (status, error) = join(&bad);
    assert_eq!(status, FabricStatus::Config as i32, "{error}");
    assert_eq!(
        error["metadata"]["path"],
        "calls[0].client_assistant_message_id"
    );
}
