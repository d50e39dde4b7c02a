//! Unit tests of the Gym mapping rules and identity validation.

use serde_json::{Value, json};

use super::*;
use fabric_config::gym::*;

fn result(invocation: &str, status: &str, code: Option<&str>) -> Value {
    let mut value = json!({
        "agent_name": "agent", "harness": "scripted", "adapter_kind": "process",
        "runtime_id": "runtime-1", "invocation_id": invocation,
        "request_id": format!("request-{invocation}"), "status": status,
        "output": {"response": "hi"},
        "events": [
            {"event_id": "e1", "timestamp_millis": 1_700_000_000_000u64, "kind": "invocation_start", "message": ""},
            {"event_id": "e2", "timestamp_millis": 1_700_000_000_250u64, "kind": "invocation_end", "message": ""}
        ]
    });
    if let Some(code) = code {
        value["error"] = json!({"stage": "invoke", "code": code, "message": "m"});
    }
    value
}

fn scope(uuid: &str, parent: Option<&str>, category: &str, phase: &str, at: &str) -> Value {
    json!({"atof_version": "0.1", "kind": "scope", "scope_category": phase, "name": format!("{category}-{uuid}"),
           "category": category, "category_profile": null, "attributes": [], "data": null,
           "metadata": null, "uuid": uuid, "parent_uuid": parent, "timestamp": at})
}

fn root(invocation: &str) -> Vec<Value> {
    let mut start = scope("root", None, "agent", "start", "2026-01-01T00:00:00Z");
    start["metadata"] = json!({"nemo_fabric_request_id": format!("request-{invocation}")});
    vec![
        start,
        scope("root", None, "agent", "end", "2026-01-01T00:00:09Z"),
    ]
}

fn map(results: Vec<Value>, atof: Vec<Value>) -> Value {
    let request: GymObservationsRequest = serde_json::from_value(json!({
        "task_id": "task", "rollout_id": "rollout", "results": results, "atof": atof
    }))
    .unwrap();
    serde_json::to_value(observations(&request).unwrap()).unwrap()
}

fn records<'a>(out: &'a Value, kind: &str) -> Vec<&'a Value> {
    out["ng_agent_observations"]["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == kind)
        .collect()
}

fn gaps<'a>(out: &'a Value, code: &str) -> Vec<&'a Value> {
    out["ng_agent_observations"]["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["code"] == code)
        .collect()
}

#[test]
fn statuses_map_and_error_type_is_the_code() {
    let out = map(
        vec![
            result("a", "succeeded", None),
            result("b", "failed", Some("adapter_failed")),
            result("c", "cancelled", None),
        ],
        vec![],
    );
    let invocations = records(&out, "agent_invocation");
    let statuses: Vec<&Value> = invocations.iter().map(|r| &r["status"]).collect();
    assert_eq!(
        statuses,
        [&json!("completed"), &json!("failed"), &json!("incomplete")]
    );
    assert_eq!(invocations[1]["error_type"], "adapter_failed");
    assert!(invocations[0].get("error_type").is_none());
    assert_eq!(invocations[0]["duration_ms"], 250.0);
    let turns = out["trajectory"]["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 3);
    assert!(
        turns
            .iter()
            .all(|t| t["turn_no"] == 1 && t["task_id"] == "task")
    );
    assert_eq!(turns[0]["timestamp"], 1_700_000_000.0);
    assert_eq!(turns[0]["answer"], json!({"response": "hi"}));
    assert_eq!(out["trajectory"]["schema_version"], "1.0");
}

#[test]
fn without_atof_tool_and_model_calls_are_gaps() {
    let out = map(vec![result("a", "succeeded", None)], vec![]);
    assert!(records(&out, "tool_call").is_empty());
    for code in [
        "tool_calls_unobserved",
        "model_calls_unobserved",
        "step_count_unavailable",
        "conversation_unavailable",
    ] {
        let found = gaps(&out, code);
        assert_eq!(found.len(), 1, "{code}");
        assert_eq!(found[0]["invocation_id"], "a");
    }
    assert_eq!(out["trajectory"]["turns"][0]["step_count"], 0);
}

#[test]
fn tool_calls_come_from_tool_scopes() {
    let mut atof = root("a");
    let mut start = scope("t1", Some("root"), "tool", "start", "2026-01-01T00:00:01Z");
    start["category_profile"] = json!({"tool_call_id": "call_1"});
    let mut end = scope("t1", Some("root"), "tool", "end", "2026-01-01T00:00:01.5Z");
    end["data"] = json!({"stdout": "ok"});
    let mut failed = scope("t2", Some("root"), "tool", "end", "2026-01-01T00:00:03Z");
    failed["metadata"] = json!({"otel.status_code": "ERROR"});
    atof.extend([
        start,
        end,
        scope("t2", Some("root"), "tool", "start", "2026-01-01T00:00:02Z"),
        failed,
        // Ends before it starts: the end time is dropped and a gap says so.
        scope("t3", Some("root"), "tool", "start", "2026-01-01T00:00:05Z"),
        scope("t3", Some("root"), "tool", "end", "2026-01-01T00:00:04Z"),
        // Never ends.
        scope("t4", Some("root"), "tool", "start", "2026-01-01T00:00:06Z"),
    ]);
    let out = map(vec![result("a", "succeeded", None)], atof);
    let tools = records(&out, "tool_call");
    assert_eq!(tools.len(), 4);
    assert_eq!(tools[0]["tool_call_id"], "call_1");
    assert_eq!(tools[0]["invocation_id"], "a");
    assert_eq!(tools[0]["tool_name"], "tool-t1");
    assert_eq!(tools[0]["started_at"], 1_767_225_601.0);
    assert_eq!(tools[0]["duration_ms"], 500.0);
    assert_eq!(tools[0]["status"], "completed");
    assert_eq!(tools[0]["timing_source"], "harness");
    assert_eq!(
        tools[1]["tool_call_id"], "t2",
        "the scope uuid without a provider id"
    );
    assert_eq!(tools[1]["status"], "failed");
    assert!(tools[2].get("completed_at").is_none() && tools[2].get("duration_ms").is_none());
    assert_eq!(gaps(&out, "tool_call_timing_invalid").len(), 1);
    assert_eq!(tools[3]["status"], "incomplete");
    assert_eq!(
        out["trajectory"]["tool_calls"][0]["output"],
        json!({"stdout": "ok"})
    );
    assert!(gaps(&out, "tool_calls_unobserved").is_empty());
}

#[test]
fn subagent_scopes_become_child_invocations() {
    let mut atof = root("a");
    let mut tool = scope(
        "spawn",
        Some("root"),
        "tool",
        "start",
        "2026-01-01T00:00:01Z",
    );
    tool["category_profile"] = json!({"tool_call_id": "call_task"});
    atof.extend([
        tool,
        scope(
            "sub",
            Some("spawn"),
            "agent",
            "start",
            "2026-01-01T00:00:02Z",
        ),
        scope(
            "inner",
            Some("sub"),
            "tool",
            "start",
            "2026-01-01T00:00:03Z",
        ),
        scope("inner", Some("sub"), "tool", "end", "2026-01-01T00:00:04Z"),
        scope("sub", Some("spawn"), "agent", "end", "2026-01-01T00:00:05Z"),
        scope("spawn", Some("root"), "tool", "end", "2026-01-01T00:00:06Z"),
        scope(
            "subsub",
            Some("sub"),
            "agent",
            "start",
            "2026-01-01T00:00:03Z",
        ),
    ]);
    let out = map(vec![result("a", "succeeded", None)], atof);
    let invocations = records(&out, "agent_invocation");
    assert_eq!(invocations.len(), 3);
    let sub = invocations
        .iter()
        .find(|r| r["invocation_id"] == "sub")
        .unwrap();
    assert_eq!(sub["parent_invocation_id"], "a");
    assert_eq!(sub["spawned_by_tool_call_id"], "call_task");
    assert_eq!(sub["status"], "completed");
    assert_eq!(sub["duration_ms"], 3000.0);
    let subsub = invocations
        .iter()
        .find(|r| r["invocation_id"] == "subsub")
        .unwrap();
    assert_eq!(subsub["parent_invocation_id"], "sub");
    assert_eq!(subsub["status"], "incomplete");
    assert!(subsub.get("spawned_by_tool_call_id").is_none());
    let inner = records(&out, "tool_call")
        .into_iter()
        .find(|t| t["tool_call_id"] == "inner")
        .unwrap();
    assert_eq!(inner["invocation_id"], "sub");
    // Only the root invocation has a turn.
    assert_eq!(out["trajectory"]["turns"].as_array().unwrap().len(), 1);
    assert_eq!(
        out["trajectory"]["invocations"].as_array().unwrap().len(),
        3
    );
}

#[test]
fn model_calls_need_reported_ids_never_guessed() {
    let mut atof = root("a");
    let mut with_id = scope("l1", Some("root"), "llm", "start", "2026-01-01T00:00:01Z");
    with_id["metadata"] = json!({"model_call_id": "mc-1"});
    let mut with_ref = scope("l2", Some("root"), "llm", "end", "2026-01-01T00:00:03Z");
    with_ref["metadata"] = json!({"model_ref": {"type": "responses_api_models", "name": "policy"},
                                  "response_id": "resp-2"});
    // A response id in the payload is not a reported join key.
    let mut payload_only = scope("l3", Some("root"), "llm", "end", "2026-01-01T00:00:05Z");
    payload_only["data"] = json!({"id": "resp-3"});
    payload_only["category_profile"] = json!({"model_name": "m"});
    // A reference without response_id is not a join key either.
    let mut ref_only = scope("l4", Some("root"), "llm", "end", "2026-01-01T00:00:06Z");
    ref_only["metadata"] = json!({"model_ref": {"type": "responses_api_models", "name": "policy"}});
    atof.extend([
        with_id,
        scope("l1", Some("root"), "llm", "end", "2026-01-01T00:00:02Z"),
        scope("l2", Some("root"), "llm", "start", "2026-01-01T00:00:02Z"),
        with_ref,
        scope("l3", Some("root"), "llm", "start", "2026-01-01T00:00:04Z"),
        payload_only,
        ref_only,
    ]);
    let out = map(vec![result("a", "succeeded", None)], atof);
    let invocation = &records(&out, "agent_invocation")[0];
    assert_eq!(
        invocation["model_calls"],
        json!([{"model_call_id": "mc-1"},
               {"model_ref": {"type": "responses_api_models", "name": "policy"}, "response_id": "resp-2"}])
    );
    let unreported = gaps(&out, "model_call_ids_unreported");
    assert_eq!(unreported.len(), 2);
    let calls = out["trajectory"]["model_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 4);
    assert_eq!(calls[0]["model_call_id"], "mc-1");
    assert_eq!(calls[0]["duration_ms"], 1000.0);
    assert!(calls[2].get("model_call_id").is_none());
    assert!(calls[2]["response_metadata"].get("response_id").is_none());
    assert_eq!(calls[2]["response_metadata"]["model"], "m");
    assert_eq!(out["trajectory"]["turns"][0]["step_count"], 4);
    assert_eq!(
        out["trajectory"]["turns"][0]["model_calls"],
        invocation["model_calls"]
    );
}

#[test]
fn a_repeated_model_call_id_is_left_out_with_a_gap() {
    let mut atof = root("a");
    for uuid in ["l1", "l2"] {
        let mut start = scope(uuid, Some("root"), "llm", "start", "2026-01-01T00:00:01Z");
        start["metadata"] = json!({"model_call_id": "same"});
        atof.push(start);
    }
    let out = map(vec![result("a", "succeeded", None)], atof);
    assert_eq!(
        out["trajectory"]["model_calls"].as_array().unwrap().len(),
        1
    );
    assert_eq!(gaps(&out, "model_call_id_duplicate").len(), 1);
}

#[test]
fn context_compaction_marks_are_reported() {
    let mut atof = root("a");
    atof.push(
        json!({"atof_version": "0.1", "kind": "mark", "name": "context_compaction",
        "uuid": "m1", "parent_uuid": "root", "timestamp": "2026-01-01T00:00:02Z",
        "data": {"trigger": "token_limit", "tokens_before": 9000, "tokens_after": 1200,
                 "outcome": "completed", "summary": "s"}}),
    );
    atof.push(
        json!({"atof_version": "0.1", "kind": "mark", "name": "scripted.progress",
        "uuid": "m2", "parent_uuid": "root", "timestamp": "2026-01-01T00:00:02Z", "data": {}}),
    );
    let out = map(vec![result("a", "succeeded", None)], atof);
    let compactions = records(&out, "context_compaction");
    assert_eq!(compactions.len(), 1);
    assert_eq!(
        *compactions[0],
        json!({"kind": "context_compaction", "invocation_id": "a", "observed_at": 1_767_225_602.0,
               "trigger": "token_limit", "tokens_before": 9000, "tokens_after": 1200,
               "outcome": "completed", "summary": "s", "model_calls": []})
    );
}

#[test]
fn uncorrelated_records_are_one_gap() {
    let mut atof = root("a");
    atof.push(scope(
        "x",
        Some("elsewhere"),
        "tool",
        "start",
        "2026-01-01T00:00:01Z",
    ));
    atof.push(json!({"kind": "mark", "uuid": "m", "parent_uuid": null, "name": "n"}));
    let out = map(vec![result("a", "succeeded", None)], atof);
    let found = gaps(&out, "atof_records_uncorrelated");
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0]["detail"],
        "2 ATOF scopes or marks belong to no result"
    );
}

fn stats(cpu_after: f64, cgroup: Option<Value>) -> Value {
    let snapshot = |observed: &str, cpu: f64| {
        json!({"runtime_id": "runtime-1", "started_at": "2026-01-01T00:00:00.000Z",
               "observed_at": observed, "resident_memory_bytes": 1048576, "process_count": 1,
               "cpu_time_seconds": cpu})
    };
    let mut stats = json!({
        "elapsed_seconds": 2.0,
        "before": {"status": "available", "snapshot": snapshot("2026-01-01T00:00:10.000Z", 1.0)},
        "after": {"status": "available", "snapshot": snapshot("2026-01-01T00:00:12.000Z", cpu_after)},
        "cpu_time_seconds_estimate": cpu_after - 1.0
    });
    if let Some(cgroup) = cgroup {
        stats["cgroup"] = cgroup;
    }
    stats
}

fn cgroup(peak: Option<u64>, oom_kills: u64) -> Value {
    let nc = json!({"status": "not_collected"});
    let mut snapshot = json!({"path": "/x", "observed_at": "2026-01-01T00:00:12.000Z",
        "cpu_limit_cores": nc, "cpu_usage_seconds": nc, "cpu_throttled_periods": nc,
        "cpu_throttled_seconds": nc,
        "memory_max_bytes": {"status": "available", "value": 4294967296u64, "source": "/x"},
        "memory_high_bytes": nc, "memory_swap_max_bytes": nc, "memory_current_bytes": nc,
        "memory_peak_bytes": {"status": "unavailable", "reason": "file_missing"},
        "memory_swap_current_bytes": nc, "memory_oom_kills": nc,
        "cpu_pressure_some_seconds": nc, "cpu_pressure_full_seconds": nc,
        "memory_pressure_some_seconds": nc, "memory_pressure_full_seconds": nc,
        "io_pressure_some_seconds": nc, "io_pressure_full_seconds": nc});
    if let Some(peak) = peak {
        snapshot["memory_peak_bytes"] = json!({"status": "available", "value": peak});
    }
    let observation = json!({"status": "available", "snapshot": snapshot});
    json!({"before": observation, "after": observation, "deltas": {
        "cpu_usage_seconds": nc, "cpu_throttled_periods": nc, "cpu_throttled_seconds": nc,
        "memory_oom_kills": {"status": "available", "value": oom_kills}}})
}

#[test]
fn system_stats_become_the_agent_sandbox() {
    let mut first = result("a", "succeeded", None);
    first["system_stats"] = stats(2.0, None);
    let mut last = result("b", "failed", Some("timeout"));
    last["system_stats"] = stats(3.5, Some(cgroup(Some(512 * 1024 * 1024), 0)));
    let out = map(vec![first, last], vec![]);
    let sandboxes = records(&out, "sandbox");
    assert_eq!(sandboxes.len(), 1, "one per runtime");
    assert_eq!(
        *sandboxes[0],
        json!({"kind": "sandbox", "role": "agent", "sandbox_id": "runtime-1", "outcome": "timeout",
               "wall_time_s": 12.0, "cpu_time_s": 3.5, "peak_memory_mib": 512.0,
               "resource_usage_source": "fabric.system_stats.process_tree+cgroup.memory.peak",
               "error_type": "timeout"})
    );
}

#[test]
fn a_results_environment_observation_is_a_sandbox_unless_given_and_a_bad_one_a_gap() {
    let carried = json!({"role": "agent", "provider": "container", "sandbox_id": "fabric-env-1",
                         "outcome": "oom", "wall_time_s": 4.0, "resource_usage_source": "cgroup_v1"});
    let mut ran = result("a", "succeeded", None);
    ran["metadata"] = json!({"sandbox_observation": carried});
    let mut bad = result("b", "succeeded", None);
    bad["metadata"] = json!({"sandbox_observation": {"role": 7}});
    let out = map(vec![ran.clone(), bad], vec![]);
    let mut expected = carried.clone();
    expected["kind"] = json!("sandbox");
    assert_eq!(records(&out, "sandbox"), [&expected]);
    let unreadable = gaps(&out, "sandbox_usage_unavailable");
    assert!(
        unreadable
            .iter()
            .any(|gap| gap["invocation_id"] == "b" && gap["detail"].as_str().is_some()),
        "{out}"
    );
    // the caller's observation of the same sandbox replaces the carried one
    let mut given = carried.clone();
    given["role"] = json!("verifier");
    let request: GymObservationsRequest = serde_json::from_value(json!({
        "task_id": "task", "rollout_id": "rollout", "results": [ran], "sandboxes": [given]
    }))
    .unwrap();
    let out = serde_json::to_value(observations(&request).unwrap()).unwrap();
    let sandboxes = records(&out, "sandbox");
    assert_eq!(sandboxes.len(), 1, "{out}");
    assert_eq!(sandboxes[0]["role"], "verifier");
}

#[test]
fn peak_memory_is_never_a_limit_and_oom_is_seen() {
    let mut only_limit = result("a", "failed", Some("host_crashed"));
    // memory.max is set but memory.peak could not be read: no peak.
    only_limit["system_stats"] = stats(2.0, Some(cgroup(None, 1)));
    let out = map(vec![only_limit], vec![]);
    let sandbox = &records(&out, "sandbox")[0];
    assert!(sandbox.get("peak_memory_mib").is_none());
    assert_eq!(sandbox["outcome"], "oom");
    assert_eq!(
        sandbox["resource_usage_source"],
        "fabric.system_stats.process_tree"
    );
}

#[test]
fn missing_stats_are_a_gap() {
    let out = map(vec![result("a", "cancelled", None)], vec![]);
    assert!(records(&out, "sandbox").is_empty());
    assert_eq!(gaps(&out, "sandbox_usage_unavailable").len(), 1);
}

#[test]
fn request_identity_is_checked() {
    let request = |results: Vec<Value>, task: &str| -> GymObservationsRequest {
        serde_json::from_value(json!({"task_id": task, "rollout_id": "r", "results": results}))
            .unwrap()
    };
    let error = observations(&request(
        vec![
            result("a", "succeeded", None),
            result("a", "succeeded", None),
        ],
        "t",
    ))
    .unwrap_err();
    assert_eq!(error.code(), "gym_invocation_id_duplicate");
    assert_eq!(error.path(), "results[1].invocation_id");
    let error = observations(&request(vec![], " ")).unwrap_err();
    assert_eq!((error.code(), error.path()), ("gym_id_blank", "task_id"));
    let info = fabric_config::ErrorInfo::from(error);
    assert_eq!(info.path(), Some("task_id"));
    // Unknown request members are refused with their path.
    let error = GymObservationsRequest::from_json_str(
        r#"{"task_id":"t","rollout_id":"r","results":[],"extra":1}"#,
    )
    .unwrap_err();
    assert_eq!(error.code(), "unknown_field");
}

fn invocation(id: &str, parent: Option<&str>) -> Value {
    json!({"kind": "agent_invocation", "invocation_id": id, "parent_invocation_id": parent,
           "status": "completed"})
}

fn bundle(records: Vec<Value>) -> AgentObservationBundle {
    serde_json::from_value(json!({"source": "s", "records": records})).unwrap()
}

#[test]
fn bundle_identity_rules() {
    // A parent outside the bundle is allowed.
    bundle(vec![
        invocation("a", Some("outside")),
        invocation("b", Some("a")),
    ])
    .validate_identity()
    .unwrap();
    let error = bundle(vec![invocation("a", None), invocation("a", None)])
        .validate_identity()
        .unwrap_err();
    assert_eq!(
        (error.code(), error.path()),
        ("gym_invocation_id_duplicate", "records[1].invocation_id")
    );
    let error = bundle(vec![
        invocation("a", Some("c")),
        invocation("b", Some("a")),
        invocation("c", Some("b")),
    ])
    .validate_identity()
    .unwrap_err();
    assert_eq!(error.code(), "gym_parent_cycle");
    let error = bundle(vec![invocation("a", Some("a"))])
        .validate_identity()
        .unwrap_err();
    assert_eq!(error.code(), "gym_parent_cycle");
    let mut bad_ref = invocation("a", None);
    bad_ref["model_calls"] = json!([{"response_id": "r"}]);
    let error = bundle(vec![bad_ref]).validate_identity().unwrap_err();
    assert_eq!(
        (error.code(), error.path()),
        ("gym_model_call_ref_invalid", "records[0].model_calls[0]")
    );
    let tool = json!({"kind": "tool_call", "invocation_id": "a", "tool_call_id": "t",
                      "started_at": 2.0, "completed_at": 1.0, "status": "completed"});
    assert_eq!(
        bundle(vec![tool]).validate_identity().unwrap_err().code(),
        "gym_tool_call_timing_invalid"
    );
}

#[test]
fn trajectory_identity_rules() {
    let turn = |invocation: &str, no: u64, task: &str| {
        json!({"invocation_id": invocation, "task_id": task, "rollout_id": "r", "turn_no": no,
               "timestamp": 1.0, "step_count": 0})
    };
    let trajectory = |turns: Vec<Value>, calls: Value| -> TrajectoryRecord {
        serde_json::from_value(
            json!({"task_id": "t", "rollout_id": "r", "turns": turns, "model_calls": calls}),
        )
        .unwrap()
    };
    trajectory(
        vec![turn("a", 1, "t"), turn("a", 2, "t"), turn("b", 1, "t")],
        json!([]),
    )
    .validate_identity()
    .unwrap();
    let error = trajectory(vec![turn("a", 1, "t"), turn("a", 1, "t")], json!([]))
        .validate_identity()
        .unwrap_err();
    assert_eq!(
        (error.code(), error.path()),
        ("gym_turn_invalid", "turns[1].turn_no")
    );
    let error = trajectory(vec![turn("a", 0, "t")], json!([]))
        .validate_identity()
        .unwrap_err();
    assert_eq!(error.code(), "gym_turn_invalid");
    let error = trajectory(vec![turn("a", 1, "other")], json!([]))
        .validate_identity()
        .unwrap_err();
    assert_eq!(error.code(), "gym_turn_identity_mismatch");
    let calls = json!([{"model_call_id": "x"}, {"model_call_id": "x"}]);
    let error = trajectory(vec![], calls).validate_identity().unwrap_err();
    assert_eq!(
        (error.code(), error.path()),
        (
            "gym_model_call_id_duplicate",
            "model_calls[1].model_call_id"
        )
    );
}

#[test]
fn extra_fields_are_forbidden_and_kinds_are_tags() {
    let mut extra = invocation("a", None);
    extra["surprise"] = json!(1);
    assert!(
        serde_json::from_value::<AgentObservationBundle>(
            json!({"source": "s", "records": [extra]})
        )
        .is_err()
    );
    assert!(serde_json::from_value::<ObservationGap>(json!({"code": "c", "x": 1})).is_err());
    assert!(
        serde_json::from_value::<TrajectoryRecord>(
            json!({"task_id": "t", "rollout_id": "r", "schema_version": "2.0"})
        )
        .is_err()
    );
    let sandbox = json!({"kind": "sandbox", "role": "agent", "outcome": "completed"});
    let parsed = bundle(vec![sandbox.clone()]);
    assert_eq!(
        serde_json::to_value(&parsed).unwrap()["records"][0],
        sandbox
    );
}
