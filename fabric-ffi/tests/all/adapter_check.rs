//! `fabric_adapter_check` through the Rust view of the ABI: a report for a config-selected
//! adapter, and the error statuses and codes of bad input.

use std::ffi::CString;

use crate::support::{build_scripted, call, scripted_config_value};
use fabric_ffi::{FabricStatus, fabric_adapter_check};
use serde_json::{Value, json};

fn check(request: &str) -> (i32, Value) {
    let request = CString::new(request).expect("cstring");
    // SAFETY: a valid string and slot.
    call(|out| unsafe { fabric_adapter_check(request.as_ptr(), out) })
}

#[test]
fn checks_the_adapter_a_config_selects() {
    build_scripted();
    let config = scripted_config_value("conformance", json!({}));
    let request = json!({"adapter_id": "fabric.scripted", "config": config,
                         "only": ["descriptor", "configs", "lifecycle"]});
    let (status, report) = check(&request.to_string());
    assert_eq!(status, FabricStatus::Ok as i32, "{report}");
    assert_eq!(report["summary"]["failed"], 0, "{report:#}");
    assert_eq!(report["adapter"]["adapter_id"], "fabric.scripted");
    let groups: std::collections::BTreeSet<&str> = report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| c["group"].as_str().expect("group"))
        .collect();
    assert_eq!(
        groups.into_iter().collect::<Vec<_>>(),
        ["configs", "descriptor", "lifecycle"]
    );
}

#[test]
fn bad_input_is_an_error_status_naming_it() {
    let (status, error) = check("{");
    assert_eq!(status, FabricStatus::Config as i32, "{error}");
    assert_eq!(error["metadata"]["argument"], "request_json");
    let (status, error) = check(r#"{"adapter": "x"}"#);
    assert_eq!(status, FabricStatus::Config as i32, "{error}");
    let (status, error) = check("{}");
    assert_eq!(status, FabricStatus::InvalidArgument as i32, "{error}");
    let (status, error) = check(r#"{"adapter_id": "no.such.adapter"}"#);
    assert_eq!(status, FabricStatus::Config as i32, "{error}");
    assert_eq!(error["code"], "adapter_not_found");
    // SAFETY: NULL request, valid slot.
    let (status, error) = call(|out| unsafe { fabric_adapter_check(std::ptr::null(), out) });
    assert_eq!(status, FabricStatus::InvalidArgument as i32, "{error}");
}
