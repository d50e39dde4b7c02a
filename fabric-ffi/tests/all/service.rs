//! Shared services through the C ABI with the scripted adapter's service mode (a key-value
//! store in the service's FABRIC_HOME): two runtimes share state, state survives a
//! runtime's stop, release is refused while a runtime is connected, starts after release
//! fail, the binding rule names what differs, and service checks route to the service.

use crate::support;

use std::ffi::CString;

use fabric_ffi::*;
use serde_json::{Value, json};

fn cstring(value: &Value) -> CString {
    CString::new(value.to_string()).expect("cstring")
}

fn options(dir: &std::path::Path) -> CString {
    cstring(&json!({"base_dir": dir.to_str().expect("utf8")}))
}

fn kv(runtime: fabric_runtime, op: Value) -> Value {
    let request = cstring(&json!({"input": "kv", "context": {"scripted_kv": op}}));
    // SAFETY: valid strings and out slot for the call.
    let (status, result) =
        support::call(|out| unsafe { fabric_runtime_invoke(runtime, request.as_ptr(), out) });
    assert_eq!(status, 0, "{result}");
    result["output"]["response"].clone()
}

fn start_on(service: fabric_service, config: &CString, options: &CString) -> (i32, u64, Value) {
    let mut runtime: fabric_runtime = 0;
    // SAFETY: valid strings and out slots for the call.
    let (status, info) = support::call(|out| unsafe {
        fabric_service_start_runtime(
            service,
            config.as_ptr(),
            options.as_ptr(),
            &mut runtime,
            out,
        )
    });
    (status, runtime, info)
}

fn stop_and_free(runtime: fabric_runtime) {
    // SAFETY: out slot valid for the call.
    let (status, _) = support::call(|out| unsafe { fabric_runtime_stop(runtime, out) });
    assert_eq!(status, 0);
    assert_eq!(fabric_runtime_free(runtime), 0);
}

#[test]
fn two_runtimes_share_a_scripted_service_through_the_c_abi() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = support::scripted_config("kv", json!({}));
    let options = options(dir.path());
    let mut service: fabric_service = 0;
    // SAFETY: valid strings and out slots for the call.
    let (status, info) = support::call(|out| unsafe {
        fabric_service_prepare(config.as_ptr(), options.as_ptr(), &mut service, out)
    });
    assert_eq!(status, 0, "{info}");
    assert_ne!(service, 0);
    assert_eq!(info["status"], "active");
    assert_eq!(info["service"]["ownership"], "fabric_owned");
    assert_eq!(info["service"]["service_type"], "scripted_kv");
    let service_id = info["service_id"].as_str().expect("id").to_owned();
    assert!(
        info["service"]["service_binding"]
            .as_str()
            .is_some_and(|b| b.starts_with("fabric-service-binding-"))
    );
    let (status, first, first_info) = start_on(service, &config, &options);
    assert_eq!(status, 0, "{first_info}");
    assert_eq!(first_info["service_id"], service_id.as_str());
    let (status, second, _) = start_on(service, &config, &options);
    assert_eq!(status, 0);
    assert_eq!(kv(first, json!({"op": "incr", "key": "n"})), json!(1));
    assert_eq!(kv(second, json!({"op": "incr", "key": "n"})), json!(2));
    kv(
        second,
        json!({"op": "set", "key": "who", "value": "second"}),
    );
    stop_and_free(second);
    assert_eq!(
        kv(first, json!({"op": "get", "key": "who"})),
        json!("second")
    );

    // A service check reaches the service host (the scripted adapter serves health).
    let check = cstring(&json!({"scope": "service", "service_id": service_id, "level": "live"}));
    // SAFETY: valid strings and out slot for the call.
    let (status, report) = support::call(|out| unsafe { fabric_check(0, check.as_ptr(), out) });
    assert_eq!(status, 0);
    assert_eq!(report["outcome"], "passed", "{report}");

    // Release while `first` runs: refused, the service stays active.
    // SAFETY: out slot valid for the call.
    let (status, error) = support::call(|out| unsafe { fabric_service_release(service, out) });
    assert_eq!(status, 3, "{error}");
    assert_eq!(error["code"], "service_in_use");
    assert_eq!(error["stage"], "stop");
    // SAFETY: out slot valid for the call.
    let (_, now) = support::call(|out| unsafe { fabric_service_info(service, out) });
    assert_eq!(now["status"], "active");

    // A config that differs from the service's is refused, naming the section.
    let other = support::scripted_config("other-name", json!({}));
    let (status, _, error) = start_on(service, &other, &options);
    assert_eq!(status, 1, "{error}");
    assert_eq!(error["code"], "service_binding_mismatch");
    assert_eq!(error["metadata"]["fields"], json!(["metadata.name"]));

    stop_and_free(first);
    // SAFETY: out slot valid for the call.
    let (status, released) = support::call(|out| unsafe { fabric_service_release(service, out) });
    assert_eq!(status, 0, "{released}");
    assert_eq!(released["status"], "released");
    // SAFETY: valid strings and out slot for the call.
    let (_, report) = support::call(|out| unsafe { fabric_check(0, check.as_ptr(), out) });
    assert_eq!(report["outcome"], "unknown");
    assert_eq!(report["reason"], "service_unavailable");
    let (status, _, error) = start_on(service, &config, &options);
    assert_eq!(status, 1);
    assert_eq!(error["code"], "service_not_active");
    assert_eq!(fabric_service_free(service), 0);
    assert_eq!(fabric_service_free(service), 7);
    assert_eq!(fabric_service_free(0), 0);
}

#[test]
fn attach_uses_the_callers_store_and_a_bad_reference_names_the_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = support::scripted_config("kv", json!({}));
    let options = options(dir.path());
    let mut owner: fabric_service = 0;
    // SAFETY: valid strings and out slots for the call.
    let (status, info) = support::call(|out| unsafe {
        fabric_service_prepare(config.as_ptr(), options.as_ptr(), &mut owner, out)
    });
    assert_eq!(status, 0, "{info}");
    let reference = cstring(&json!({
        "adapter_id": "fabric.scripted",
        "service_type": "scripted_kv",
        "connection": info["service"]["connection"],
    }));
    let mut attached: fabric_service = 0;
    // SAFETY: valid strings and out slots for the call.
    let (status, attached_info) = support::call(|out| unsafe {
        fabric_service_attach(
            config.as_ptr(),
            reference.as_ptr(),
            options.as_ptr(),
            &mut attached,
            out,
        )
    });
    assert_eq!(status, 0, "{attached_info}");
    assert_eq!(attached_info["service"]["ownership"], "caller_owned");
    let (_, writer, _) = start_on(attached, &config, &options);
    kv(writer, json!({"op": "set", "key": "k", "value": 7}));
    stop_and_free(writer);
    // SAFETY: out slot valid for the call.
    let (status, _) = support::call(|out| unsafe { fabric_service_release(attached, out) });
    assert_eq!(status, 0);
    let (_, reader, _) = start_on(owner, &config, &options);
    assert_eq!(kv(reader, json!({"op": "get", "key": "k"})), json!(7));
    stop_and_free(reader);
    // SAFETY: out slot valid for the call.
    let (status, _) = support::call(|out| unsafe { fabric_service_release(owner, out) });
    assert_eq!(status, 0);
    let bad = cstring(&json!({"adapter_id": "fabric.scripted", "service_kind": "x"}));
    let mut unused: fabric_service = 0;
    // SAFETY: valid strings and out slots for the call.
    let (status, error) = support::call(|out| unsafe {
        fabric_service_attach(
            config.as_ptr(),
            bad.as_ptr(),
            options.as_ptr(),
            &mut unused,
            out,
        )
    });
    assert_eq!(status, 1, "{error}");
    assert_eq!(error["code"], "invalid_service_reference");
    assert_eq!(unused, 0);
    for handle in [owner, attached] {
        assert_eq!(fabric_service_free(handle), 0);
    }
}
