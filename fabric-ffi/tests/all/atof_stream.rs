//! Relay ATOF streaming through the C ABI (Rust view): `fabric_runtime_start` with the
//! `streaming` option, `fabric_runtime_invoke_stream`, the generic `fabric_stream_*`
//! calls, with the test adapter of tests/fixtures/atof-adapter; and the errors.

use crate::support;

use std::ffi::CString;

use crate::support::{call, call_maybe, repo_root, scripted_config_value};
use fabric_ffi::{
    FabricStatus, fabric_runtime_free, fabric_runtime_invoke_stream, fabric_runtime_start,
    fabric_runtime_stop, fabric_stream_free, fabric_stream_next, fabric_stream_next_batch,
    fabric_stream_result,
};
use serde_json::{Value, json};

fn config(dir: &std::path::Path, relay: bool) -> CString {
    let path = repo_root().join("tests/fixtures/atof-adapter/atof.fabric-adapter.json");
    let mut config = json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "ffi-atof"},
        "harness": {"adapter_id": "test.fabric.atof"},
        "discovery": {"local_paths": [path]},
        "environment": {"artifacts": dir.join("artifacts")},
        "runtime": {"timeout_seconds": 60}
    });
    if relay {
        config["telemetry"] = json!({"providers": {"relay": {}}});
    }
    CString::new(config.to_string()).unwrap()
}

fn start(config: &CString, options: Value) -> (i32, u64, Value) {
    let options = CString::new(options.to_string()).unwrap();
    let mut runtime = 0u64;
    // SAFETY: valid strings and slots.
    let (status, info) = call(|out| unsafe {
        fabric_runtime_start(config.as_ptr(), options.as_ptr(), &mut runtime, out)
    });
    (status, runtime, info)
}

fn stop_and_free(runtime: u64) {
    // SAFETY: a live handle and a valid slot.
    let (status, _) = call(|out| unsafe { fabric_runtime_stop(runtime, out) });
    assert_eq!(status, FabricStatus::Ok as i32);
    assert_eq!(fabric_runtime_free(runtime), FabricStatus::Ok as i32);
}

#[test]
fn records_then_the_result_through_the_stream_handle() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), true);
    let (status, runtime, info) = start(&config, json!({"streaming": true}));
    assert_eq!(status, FabricStatus::Ok as i32, "{info}");
    assert_eq!(info["supports_streaming"], true);
    let request = CString::new(json!({"input": "records:4"}).to_string()).unwrap();
    let mut stream = 0u64;
    // SAFETY: valid handle, string and slots.
    let (status, stream_info) = call(|out| unsafe {
        fabric_runtime_invoke_stream(runtime, request.as_ptr(), &mut stream, out)
    });
    assert_eq!(status, FabricStatus::Ok as i32, "{stream_info}");
    assert_eq!(stream_info["kind"], "relay.atof.record");
    assert_eq!(stream_info["handle"], stream);
    let mut records = Vec::new();
    loop {
        // SAFETY: a live stream handle and a valid slot.
        let (status, record) = call_maybe(|out| unsafe { fabric_stream_next(stream, -1, out) });
        if status == FabricStatus::End as i32 {
            break;
        }
        assert_eq!(status, FabricStatus::Ok as i32, "{record}");
        records.push(record);
    }
    // SAFETY: as above.
    let (status, result) = call(|out| unsafe { fabric_stream_result(stream, out) });
    assert_eq!(status, FabricStatus::Ok as i32, "{result}");
    assert_eq!(result["status"], "succeeded");
    assert_eq!(result["invocation_id"], stream_info["invocation_id"]);
    assert_eq!(records.len(), 6);
    assert_eq!(
        records[0]["metadata"]["nemo_fabric_request_id"],
        stream_info["request_id"]
    );
    assert_eq!(fabric_stream_free(stream), FabricStatus::Ok as i32);
    stop_and_free(runtime);
}

#[test]
fn options_and_capability_errors() {
    let dir = tempfile::tempdir().unwrap();
    let with_relay = config(dir.path(), true);
    let (status, _, error) = start(&config(dir.path(), false), json!({"streaming": true}));
    assert_eq!(status, FabricStatus::Config as i32);
    assert_eq!(error["code"], "streaming_requires_relay");
    assert_eq!(error["metadata"]["path"], "options.streaming");
    let (status, _, error) = start(&with_relay, json!({"launch_collector": false}));
    assert_eq!(status, FabricStatus::Config as i32);
    assert_eq!(error["code"], "launch_collector_requires_streaming");
    assert_eq!(error["metadata"]["path"], "options.launch_collector");
    let (status, _, error) = start(
        &with_relay,
        json!({"streaming": true, "completion_wait_timeout": -1}),
    );
    assert_eq!(status, FabricStatus::Config as i32);
    assert_eq!(error["metadata"]["path"], "options.completion_wait_timeout");
    let (status, _, error) = start(
        &with_relay,
        json!({"streaming": true, "collector_memory_budget_bytes": 1024}),
    );
    assert_eq!(status, FabricStatus::Config as i32);
    assert_eq!(
        error["metadata"]["path"],
        "options.collector_memory_budget_bytes"
    );
    // External collector without a nemo-fabric-stream sink.
    let (status, _, error) = start(
        &with_relay,
        json!({"streaming": true, "launch_collector": false}),
    );
    assert_eq!(status, FabricStatus::Config as i32, "{error}");
    assert_eq!(error["code"], "relay_stream_sink_missing");
    let (status, runtime, info) = start(&with_relay, json!({}));
    assert_eq!(status, FabricStatus::Ok as i32, "{info}");
    assert_eq!(info["supports_streaming"], false);
    let mut stream = 0u64;
    // SAFETY: valid handle and slots; NULL request is an empty input.
    let (status, error) = call(|out| unsafe {
        fabric_runtime_invoke_stream(runtime, std::ptr::null(), &mut stream, out)
    });
    assert_eq!(status, FabricStatus::Capability as i32);
    assert_eq!(error["code"], "streaming_unavailable");
    assert_eq!(stream, 0);
    stop_and_free(runtime);
}

/// A batch pull stops adding records at 1 MiB of record text (the first record always
/// comes): 40 marks of 64 KiB read with no item limit arrive in several batches, each at
/// most 1 MiB plus one record, all of them, in order.
#[test]
fn batches_are_capped_by_bytes() {
    let dir = tempfile::tempdir().unwrap();
    support::build_scripted();
    let mut value = scripted_config_value("ffi-atof-batches", json!({}));
    value["telemetry"] = json!({"providers": {"relay": {}}});
    value["environment"] = json!({"artifacts": dir.path().join("artifacts")});
    let config = CString::new(value.to_string()).unwrap();
    let (status, runtime, info) = start(&config, json!({"streaming": true}));
    assert_eq!(status, FabricStatus::Ok as i32, "{info}");
    let marks = 40;
    let request = json!({"input": "big", "context": {"scripted_atof": {"marks": marks, "payload_bytes": 65536}}});
    let request = CString::new(request.to_string()).unwrap();
    let mut stream = 0u64;
    // SAFETY: valid handle, string and slots.
    let (status, stream_info) = call(|out| unsafe {
        fabric_runtime_invoke_stream(runtime, request.as_ptr(), &mut stream, out)
    });
    assert_eq!(status, FabricStatus::Ok as i32, "{stream_info}");
    // The result does not finalize ATOF records: every record is still readable after it.
    // SAFETY: a live stream handle and a valid slot.
    let (status, result) = call(|out| unsafe { fabric_stream_result(stream, out) });
    assert_eq!(status, FabricStatus::Ok as i32, "{result}");
    let mut batches = Vec::new();
    loop {
        // SAFETY: a live stream handle and a valid slot.
        let (status, batch) =
            call_maybe(|out| unsafe { fabric_stream_next_batch(stream, -1, 0, out) });
        if status == FabricStatus::End as i32 {
            break;
        }
        assert_eq!(status, FabricStatus::Ok as i32, "{batch}");
        batches.push(batch.as_array().unwrap().clone());
    }
    let total: usize = batches.iter().map(Vec::len).sum();
    assert_eq!(total, marks + 2, "every record arrives");
    assert!(batches.len() >= 3, "{} batches", batches.len());
    for batch in &batches {
        let sizes: Vec<usize> = batch.iter().map(|r| r.to_string().len()).collect();
        let all_but_last: usize = sizes[..sizes.len() - 1].iter().sum();
        assert!(all_but_last < 1024 * 1024, "batch of {sizes:?}");
    }
    assert_eq!(fabric_stream_free(stream), FabricStatus::Ok as i32);
    stop_and_free(runtime);
}
