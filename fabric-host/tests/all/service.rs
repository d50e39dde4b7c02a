//! Shared services through the Rust facade: prepare, attach, connect, release and their
//! rules, with the test-only python adapter `tests/fixtures/service-adapter` (a key-value
//! store the service owns, on nemo_fabric_adapters.common). Needs FABRIC_TEST_PYTHON
//! (a failure without it, tests/dependency.rs).

use crate::support;

use std::path::Path;

use fabric_config::health::{CheckOutcome, CheckRequest};
use fabric_config::service::{ServiceOwnership, ServiceReference, ServiceStatus};
use fabric_config::{FabricConfig, RunRequest};
use fabric_host::{Fabric, RunOptions};
use serde_json::{Value, json};

fn config(extra: Value) -> FabricConfig {
    let root = support::repo_root();
    let fixture = root.join("tests/fixtures/service-adapter");
    let mut value = json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "kv"},
        "harness": {"adapter_id": "test.fabric.service-kv"},
        "discovery": {"local_paths": [fixture]},
        "environment": {"env": {"PYTHONPATH": fixture}}
    });
    for (key, item) in extra.as_object().expect("object") {
        value[key] = item.clone();
    }
    serde_json::from_value(value).expect("config")
}

fn options(dir: &Path, python: std::ffi::OsString) -> RunOptions {
    let mut options = RunOptions::with_base_dir(dir);
    options.runtime.python_interpreter = Some(python.into());
    options
}

fn output(runtime: &fabric_host::Runtime, input: &str) -> Value {
    let result = runtime.invoke(RunRequest::new(input)).expect("invoke");
    result.output["response"].clone()
}

#[test]
fn two_runtimes_share_one_prepared_service_and_release_follows_the_rules() {
    let Some(python) = support::test_python() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let options = options(dir.path(), python);
    let fabric = Fabric::new();
    let config = config(json!({}));
    let service = fabric.prepare_service(&config, &options).expect("prepare");
    let handle = service.handle().clone();
    assert_eq!(handle.ownership, ServiceOwnership::FabricOwned);
    assert_eq!(handle.service_type, "kv_store");
    assert!(handle.service_id.starts_with("service-"));
    assert!(
        handle
            .service_binding
            .starts_with("fabric-service-binding-")
    );
    let first = fabric
        .start_runtime_on(&config, &service, &options)
        .expect("first");
    let second = fabric
        .start_runtime_on(&config, &service, &options)
        .expect("second");
    assert_eq!(
        first.info().service_id.as_deref(),
        Some(handle.service_id.as_str())
    );
    assert_eq!(output(&first, "incr:n"), json!(1));
    assert_eq!(output(&second, "incr:n"), json!(2));
    // The state outlives a runtime's stop.
    first.stop();
    let third = fabric
        .start_runtime_on(&config, &service, &options)
        .expect("third");
    assert_eq!(output(&third, "get:n"), json!(2));
    // Release while runtimes are alive: service_in_use at stage stop, still active.
    let error = service.release().expect_err("in use");
    assert_eq!(error.code(), "service_in_use");
    assert_eq!(error.stage().as_str(), "stop");
    let info = fabric_config::ErrorInfo::from(error);
    assert_eq!(info.metadata["fields"].as_array().map(Vec::len), Some(2));
    assert_eq!(service.status(), ServiceStatus::Active);
    // A service check is a real check of the service host (the fixture declares no health
    // levels, so the adapter is unsupported) while active, unavailable after release.
    let check = CheckRequest::service(handle.service_id.clone());
    let report = fabric.check(None, &check).expect("check");
    assert_eq!(report.outcome, CheckOutcome::Unsupported);
    second.stop();
    third.stop();
    let released = service.release().expect("release");
    assert_eq!(released.status, ServiceStatus::Released);
    assert_eq!(
        service.release().expect("again").status,
        ServiceStatus::Released
    );
    support::assert_group_gone(released.host_pid);
    let report = fabric.check(None, &check).expect("check");
    assert_eq!(report.outcome, CheckOutcome::Unknown);
    assert_eq!(report.reason.as_deref(), Some("service_unavailable"));
    let error = fabric
        .start_runtime_on(&config, &service, &options)
        .expect_err("released");
    assert_eq!(error.code(), "service_not_active");
    assert!(error.to_string().contains("service must be active"));
    assert_eq!(error.class(), fabric_host::ErrorClass::Config);
}

#[test]
fn a_runtime_must_share_the_services_plan() {
    let Some(python) = support::test_python() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let options = options(dir.path(), python);
    let fabric = Fabric::new();
    let base = config(json!({}));
    let service = fabric.prepare_service(&base, &options).expect("prepare");
    let fixture = support::repo_root().join("tests/fixtures/service-adapter");
    let cases = [
        (json!({"metadata": {"name": "other"}}), "metadata.name"),
        (
            json!({"environment": {"env": {"PYTHONPATH": fixture, "SECRET": "s3cr3t-value"}}}),
            "environment",
        ),
        (
            json!({"runtime": {"timeout_seconds": 5}}),
            "runtime.timeout_seconds",
        ),
    ];
    for (change, field) in cases {
        let error = fabric
            .start_runtime_on(&config(change), &service, &options)
            .expect_err(field);
        assert_eq!(error.code(), "service_binding_mismatch", "{field}");
        assert_eq!(error.class(), fabric_host::ErrorClass::Config);
        let info = fabric_config::ErrorInfo::from(error);
        assert_eq!(info.metadata["fields"], json!([field]), "{info:?}");
        assert!(info.message.contains(field));
        assert!(!info.message.contains("s3cr3t"));
    }
    service.release().expect("release");
}

#[test]
fn attach_passes_the_reference_and_release_detaches() {
    let Some(python) = support::test_python() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let options = options(dir.path(), python);
    let fabric = Fabric::new();
    let config = config(json!({}));
    let owner = fabric.prepare_service(&config, &options).expect("prepare");
    let reference = ServiceReference {
        adapter_id: "test.fabric.service-kv".into(),
        service_type: "kv_store".into(),
        connection: owner.handle().connection.clone(),
        metadata: Default::default(),
    };
    let attached = fabric
        .attach_service(&config, reference.clone(), &options)
        .expect("attach");
    assert_eq!(attached.handle().ownership, ServiceOwnership::CallerOwned);
    assert_ne!(attached.service_id(), owner.service_id());
    let runtime = fabric
        .start_runtime_on(&config, &attached, &options)
        .expect("start");
    assert_eq!(output(&runtime, "set:k=v"), json!("v"));
    runtime.stop();
    attached.release().expect("detach");
    // Detaching left the owner's store alone.
    let reader = fabric
        .start_runtime_on(&config, &owner, &options)
        .expect("reader");
    assert_eq!(output(&reader, "get:k"), json!("v"));
    reader.stop();
    owner.release().expect("release");
    // A reference for another adapter is a config error naming the field.
    let mut wrong = reference;
    wrong.adapter_id = "someone.else".into();
    let error = fabric
        .attach_service(&config, wrong, &options)
        .expect_err("wrong adapter");
    assert_eq!(error.code(), "invalid_service_reference");
}

#[test]
fn the_descriptor_must_claim_the_service_capability() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The ATOF fixture's descriptor does not claim `capabilities.service`; nothing starts.
    let fixture = support::repo_root().join("tests/fixtures/atof-adapter");
    let config: FabricConfig = serde_json::from_value(json!({
        "metadata": {"name": "plain"},
        "harness": {"adapter_id": "test.fabric.atof"},
        "discovery": {"local_paths": [fixture]}
    }))
    .expect("config");
    let error = Fabric::new()
        .prepare_service(&config, &RunOptions::with_base_dir(dir.path()))
        .expect_err("unsupported");
    assert_eq!(error.code(), "service_unsupported");
    assert_eq!(error.class(), fabric_host::ErrorClass::Capability);
}
