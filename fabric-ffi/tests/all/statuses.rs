//! One status rule for JSON arguments (issue 21 item 9), checked for every entry point and
//! every JSON argument it takes: a document that is not JSON — a syntax error or nesting
//! deeper than the decoder's 128 levels — is `FABRIC_STATUS_CONFIG`, code `invalid_json`,
//! `metadata.argument` naming the parameter, and never echoes the input.
//! `FABRIC_STATUS_INVALID_ARGUMENT` stays for a malformed C call: NULL, invalid UTF-8,
//! bad handles.

use std::ffi::CString;

use crate::support::{build_scripted, call_maybe, scripted_config_value};
use fabric_ffi::{
    FabricStatus, fabric_check, fabric_doctor, fabric_environment_free, fabric_environment_prepare,
    fabric_environment_start_runtime, fabric_inspect, fabric_plan, fabric_run, fabric_runtime_free,
    fabric_runtime_invoke, fabric_runtime_start, fabric_runtime_stop, fabric_validate,
};
use serde_json::{Value, json};

fn config_value() -> Value {
    let mut config = scripted_config_value("ffi-statuses", json!({}));
    config["harness"] = json!({"adapter_id": "fabric.scripted"});
    config
}

fn cstring(text: &str) -> CString {
    CString::new(text).expect("cstring")
}

const SENTINEL: &str = "S3CR3T-NOT-JSON";

fn deep(levels: usize) -> String {
    format!("{}{}", "[".repeat(levels), "]".repeat(levels))
}

/// Bad documents for one argument: not JSON, and too deep (at the root for documents
/// decoded as JSON values first; inside a free-form field for config and request, whose
/// root must be an object).
/// A document of the right shape for `argument`.
fn valid_document(argument: &str) -> String {
    match argument {
        "config_json" => config_value().to_string(),
        "request_json" => r#"{"input": "x"}"#.to_owned(),
        _ => "{}".to_owned(),
    }
}

fn bad_documents(argument: &str) -> Vec<(&'static str, String)> {
    let too_deep = match argument {
        "config_json" => {
            let mut config = config_value();
            config["harness"]["settings"] = json!({"a": "PLACEHOLDER"});
            config.to_string().replace("\"PLACEHOLDER\"", &deep(400))
        }
        "request_json" => format!(r#"{{"input": "x", "context": {{"a": {}}}}}"#, deep(400)),
        _ => deep(400),
    };
    vec![
        ("not JSON", format!("{{{SENTINEL}")),
        (
            "trailing data",
            format!("{} {SENTINEL}", valid_document(argument)),
        ),
        ("too deep", too_deep),
    ]
}

fn assert_invalid_json(entry: &str, argument: &str, case: &str, status: i32, error: &Value) {
    let what = format!("{entry}({argument}) with {case}: {error}");
    assert_eq!(status, FabricStatus::Config as i32, "{what}");
    assert_eq!(error["code"], "invalid_json", "{what}");
    assert_eq!(error["metadata"]["argument"], argument, "{what}");
    assert!(error["metadata"]["line"].is_u64(), "{what}");
    assert!(
        !error.to_string().contains(SENTINEL),
        "{what}: echoed the input"
    );
}

#[test]
fn every_json_argument_of_every_entry_point_follows_one_rule() {
    build_scripted();
    let config = cstring(&config_value().to_string());
    let options = cstring("{}");
    let request = cstring(r#"{"input": "hi"}"#);

    // A live runtime and environment for the entry points that take a handle.
    let mut rt = 0u64;
    // SAFETY: valid strings and slots.
    let (status, info) = call_maybe(|out| unsafe {
        fabric_runtime_start(config.as_ptr(), options.as_ptr(), &mut rt, out)
    });
    assert_eq!(status, 0, "{info}");
    let mut env = 0u64;
    // SAFETY: valid strings and slots.
    let (status, info) = call_maybe(|out| unsafe {
        fabric_environment_prepare(config.as_ptr(), options.as_ptr(), &mut env, out)
    });
    assert_eq!(status, 0, "{info}");

    let mut checked = 0;
    for argument in [
        "config_json",
        "options_json",
        "request_json",
        "descriptor_json",
        "target_json",
    ] {
        for (case, text) in bad_documents(argument) {
            let bad = cstring(&text);
            let pick = |name: &str| {
                if name == argument {
                    bad.as_ptr()
                } else {
                    match name {
                        "config_json" => config.as_ptr(),
                        "options_json" => options.as_ptr(),
                        _ => request.as_ptr(),
                    }
                }
            };
            let mut results: Vec<(&str, i32, Value)> = Vec::new();
            // SAFETY (every call below): valid NUL-terminated strings and out slots.
            if argument == "config_json" || argument == "options_json" {
                let (c, o) = (pick("config_json"), pick("options_json"));
                let (s, e) = call_maybe(|out| unsafe { fabric_validate(c, o, out) });
                results.push(("fabric_validate", s, e));
                let (s, e) = call_maybe(|out| unsafe { fabric_plan(c, o, out) });
                results.push(("fabric_plan", s, e));
                let (s, e) = call_maybe(|out| unsafe { fabric_doctor(c, o, out) });
                results.push(("fabric_doctor", s, e));
                let (s, e) = call_maybe(|out| unsafe { fabric_run(c, request.as_ptr(), o, out) });
                results.push(("fabric_run", s, e));
                let mut none = 0u64;
                let (s, e) =
                    call_maybe(|out| unsafe { fabric_runtime_start(c, o, &mut none, out) });
                assert_eq!(none, 0);
                results.push(("fabric_runtime_start", s, e));
                let mut none = 0u64;
                let (s, e) =
                    call_maybe(|out| unsafe { fabric_environment_prepare(c, o, &mut none, out) });
                assert_eq!(none, 0);
                results.push(("fabric_environment_prepare", s, e));
                let mut none = 0u64;
                let (s, e) = call_maybe(|out| unsafe {
                    fabric_environment_start_runtime(env, c, o, &mut none, out)
                });
                assert_eq!(none, 0);
                results.push(("fabric_environment_start_runtime", s, e));
            }
            if argument == "config_json" {
                let (s, e) = call_maybe(|out| unsafe {
                    fabric_inspect(bad.as_ptr(), std::ptr::null(), std::ptr::null(), out)
                });
                results.push(("fabric_inspect", s, e));
            }
            if argument == "descriptor_json" || argument == "target_json" {
                let (d, t) = if argument == "descriptor_json" {
                    (bad.as_ptr(), std::ptr::null())
                } else {
                    (std::ptr::null(), bad.as_ptr())
                };
                let (s, e) =
                    call_maybe(|out| unsafe { fabric_inspect(config.as_ptr(), d, t, out) });
                results.push(("fabric_inspect", s, e));
            }
            if argument == "request_json" {
                let (s, e) = call_maybe(|out| unsafe {
                    fabric_run(config.as_ptr(), bad.as_ptr(), options.as_ptr(), out)
                });
                results.push(("fabric_run", s, e));
                let (s, e) =
                    call_maybe(|out| unsafe { fabric_runtime_invoke(rt, bad.as_ptr(), out) });
                results.push(("fabric_runtime_invoke", s, e));
                let (s, e) = call_maybe(|out| unsafe { fabric_check(0, bad.as_ptr(), out) });
                results.push(("fabric_check", s, e));
                let (s, e) = call_maybe(|out| unsafe { fabric_check(env, bad.as_ptr(), out) });
                results.push(("fabric_check(environment)", s, e));
            }
            for (entry, status, error) in results {
                assert_invalid_json(entry, argument, case, status, &error);
                checked += 1;
            }
        }
    }
    // 7 entry points × 2 arguments + inspect × 3 + run/invoke/check×2 on requests, × 3 cases.
    assert_eq!(checked, (7 * 2 + 3 + 4) * 3);

    // The runtime was never touched by the refused calls.
    // SAFETY: valid handle, string and slot.
    let (status, result) =
        call_maybe(|out| unsafe { fabric_runtime_invoke(rt, request.as_ptr(), out) });
    assert_eq!(status, 0, "{result}");
    // SAFETY: valid handle and slot.
    let (status, _) = call_maybe(|out| unsafe { fabric_runtime_stop(rt, out) });
    assert_eq!(status, 0);
    assert_eq!(fabric_runtime_free(rt), 0);
    assert_eq!(fabric_environment_free(env), 0);
}
