//! The options object (`options_json`) through the Rust view of the ABI: `base_dir`
//! anchors discovery, `expected_descriptor_sha256` is enforced by the core, keys are
//! strict. Planning only: no adapter process is started.

use std::ffi::CString;

use crate::support::{call, repo_root};
use fabric_ffi::{
    FabricStatus, fabric_check, fabric_doctor, fabric_environment_prepare, fabric_plan, fabric_run,
    fabric_runtime_start, fabric_validate,
};
use serde_json::{Value, json};

/// A scripted-adapter config whose discovery path is relative to the repository root.
fn config() -> CString {
    let config = json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "ffi-options"},
        "harness": {"adapter_id": "fabric.scripted"},
        "discovery": {"local_paths": ["adapters/scripted"]}
    });
    CString::new(config.to_string()).expect("cstring")
}

fn options(value: Value) -> CString {
    CString::new(value.to_string()).expect("cstring")
}

fn root_str() -> String {
    repo_root().to_str().expect("utf8 root").to_owned()
}

fn plan(options: Option<&CString>) -> (i32, Value) {
    let config = config();
    let options = options.map_or(std::ptr::null(), |o| o.as_ptr());
    // SAFETY: valid strings and slot.
    call(|out| unsafe { fabric_plan(config.as_ptr(), options, out) })
}

#[test]
fn base_dir_anchors_the_plan() {
    let (status, plan_json) = plan(Some(&options(json!({"base_dir": root_str()}))));
    assert_eq!(status, FabricStatus::Ok as i32, "{plan_json}");
    assert_eq!(
        plan_json["adapter_descriptor"]["descriptor"]["adapter_id"],
        "fabric.scripted"
    );
    assert_eq!(plan_json["base_dir"], root_str());
    // Without base_dir, `adapters/scripted` is looked up under the current directory
    // (fabric-ffi/ when cargo runs this test), where it does not exist.
    let (status, error) = plan(Some(&options(json!({}))));
    assert_eq!(status, FabricStatus::Config as i32, "{error}");
    let missing = std::env::current_dir()
        .expect("cwd")
        .join("adapters/scripted");
    assert_eq!(error["metadata"]["file"], missing.to_str().expect("utf8"));
}

#[test]
fn expected_descriptor_sha256_is_enforced_by_the_core() {
    let (_, plan_json) = plan(Some(&options(json!({"base_dir": root_str()}))));
    let sha = plan_json["descriptor_sha256"]
        .as_str()
        .expect("sha")
        .to_owned();

    let matching = options(json!({"base_dir": root_str(), "expected_descriptor_sha256": sha}));
    let (status, pinned) = plan(Some(&matching));
    assert_eq!(status, FabricStatus::Ok as i32, "{pinned}");
    assert_eq!(pinned["descriptor_sha256"], sha.as_str());

    let other = "0".repeat(64);
    let mismatch = options(json!({"base_dir": root_str(), "expected_descriptor_sha256": other}));
    let (status, error) = plan(Some(&mismatch));
    assert_eq!(status, FabricStatus::Config as i32, "{error}");
    assert_eq!(error["code"], "descriptor_mismatch");
    assert_eq!(error["stage"], "plan");
    assert_eq!(error["metadata"]["expected_sha256"], other.as_str());
    assert_eq!(error["metadata"]["actual_sha256"], sha.as_str());

    // Every planning entry point enforces it before anything starts.
    let config = config();
    // SAFETY: valid strings and slot.
    let (status, error) = call(|out| unsafe {
        fabric_run(config.as_ptr(), std::ptr::null(), mismatch.as_ptr(), out)
    });
    assert_eq!(
        (status, &error["code"]),
        (FabricStatus::Config as i32, &json!("descriptor_mismatch"))
    );
    let mut handle = 0u64;
    // SAFETY: valid strings and slots.
    let (status, error) = call(|out| unsafe {
        fabric_runtime_start(config.as_ptr(), mismatch.as_ptr(), &mut handle, out)
    });
    assert_eq!(
        (status, &error["code"]),
        (FabricStatus::Config as i32, &json!("descriptor_mismatch"))
    );
    assert_eq!(handle, 0);
    // SAFETY: valid strings and slots.
    let (status, error) = call(|out| unsafe {
        fabric_environment_prepare(config.as_ptr(), mismatch.as_ptr(), &mut handle, out)
    });
    assert_eq!(
        (status, &error["code"]),
        (FabricStatus::Config as i32, &json!("descriptor_mismatch"))
    );
    assert_eq!(handle, 0);

    // doctor collects it as a failing check instead.
    // SAFETY: valid strings and slot.
    let (status, report) =
        call(|out| unsafe { fabric_doctor(config.as_ptr(), mismatch.as_ptr(), out) });
    assert_eq!(status, FabricStatus::Ok as i32, "{report}");
    let check = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|check| check["name"] == "descriptor_fingerprint")
        .unwrap_or_else(|| panic!("no descriptor_fingerprint check: {report}"));
    assert_eq!(check["status"], "fail", "{check}");
}

#[test]
fn unknown_option_key_is_a_config_error_naming_the_field() {
    let (status, error) = plan(Some(&options(json!({"base_dir": ".", "timeout_ms": 5}))));
    assert_eq!(status, FabricStatus::Config as i32, "{error}");
    assert_eq!(error["code"], "unknown_field");
    assert_eq!(error["stage"], "config");
    assert_eq!(error["metadata"]["path"], "options.timeout_ms");
    assert_eq!(error["metadata"]["argument"], "options_json");

    let config = config();
    let mistyped = options(json!({"expected_descriptor_sha256": 7}));
    // SAFETY: valid strings and slot.
    let (status, error) =
        call(|out| unsafe { fabric_validate(config.as_ptr(), mistyped.as_ptr(), out) });
    assert_eq!(status, FabricStatus::Config as i32, "{error}");
    assert_eq!(
        error["metadata"]["path"],
        "options.expected_descriptor_sha256"
    );
}

#[test]
fn options_that_are_not_json_are_a_config_error_naming_the_argument() {
    let bad = CString::new("{\"base_dir\": sekrit").expect("cstring");
    let (status, error) = plan(Some(&bad));
    assert_eq!(status, FabricStatus::Config as i32, "{error}");
    assert_eq!(error["code"], "invalid_json");
    assert_eq!(error["metadata"]["argument"], "options_json");
    assert!(!error.to_string().contains("sekrit"), "{error}");
    let (status, error) = plan(Some(&options(json!(["not", "an", "object"]))));
    assert_eq!(status, FabricStatus::Config as i32, "{error}");
    assert_eq!(error["metadata"]["path"], "options");
}

/// Issue 33 item 7: every numeric option of the options document (and the check request's
/// timeout) is range-checked through the C ABI: huge, negative, zero and fractional values
/// are `FABRIC_STATUS_CONFIG` naming the option, before anything starts and never a panic.
#[test]
fn numeric_options_out_of_range_are_config_errors_naming_the_option() {
    let config = config();
    let cases: [(&str, Value, &[&str]); 3] = [
        (
            "start_timeout_seconds",
            json!({}),
            &["0", "-1", "1e300", "1000000001", "-1e300"],
        ),
        (
            "completion_wait_timeout",
            json!({"streaming": true}),
            &["0", "-1", "1e300", "1000000001"],
        ),
        (
            "stderr_log_bytes",
            json!({}),
            &[
                "0",
                "-1",
                "1.5",
                "1e30",
                "1073741825",
                "18446744073709551615",
                "18446744073709551616",
            ],
        ),
    ];
    for (field, base, values) in cases {
        for value in values {
            let mut document = base.clone();
            document["base_dir"] = json!(root_str());
            let text = document.to_string();
            let text = format!("{},\"{field}\": {value}}}", &text[..text.len() - 1]);
            let options = CString::new(text.clone()).expect("cstring");
            let mut handle = 0u64;
            // SAFETY: valid strings and slots.
            let (status, error) = call(|out| unsafe {
                fabric_runtime_start(config.as_ptr(), options.as_ptr(), &mut handle, out)
            });
            assert_eq!(status, FabricStatus::Config as i32, "{text}: {error}");
            assert_eq!(error["stage"], "config", "{text}: {error}");
            assert_eq!(
                error["metadata"]["path"],
                format!("options.{field}"),
                "{text}: {error}"
            );
            assert_eq!(handle, 0, "{text}");
            // SAFETY: valid strings and slot.
            let (status, error) =
                call(|out| unsafe { fabric_validate(config.as_ptr(), options.as_ptr(), out) });
            assert_eq!(status, FabricStatus::Config as i32, "{text}: {error}");
            assert_eq!(error["metadata"]["path"], format!("options.{field}"));
        }
    }
    // The largest accepted values still plan (and convert without overflow).
    let largest = options(json!({
        "base_dir": root_str(),
        "start_timeout_seconds": 1e9,
        "stderr_log_bytes": 1u64 << 30,
    }));
    let (status, plan_json) = plan(Some(&largest));
    assert_eq!(status, FabricStatus::Ok as i32, "{plan_json}");

    for value in ["0", "-1", "1e300", "86401", "1e400"] {
        let request =
            format!(r#"{{"scope": "runtime", "runtime_id": "r", "timeout_seconds": {value}}}"#);
        let request = CString::new(request).expect("cstring");
        // SAFETY: valid string and slot.
        let (status, error) = call(|out| unsafe { fabric_check(0, request.as_ptr(), out) });
        assert_eq!(status, FabricStatus::Config as i32, "{value}: {error}");
        assert_ne!(error["code"], "internal_panic", "{value}");
    }
}
