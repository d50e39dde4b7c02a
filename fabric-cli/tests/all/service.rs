//! `fabric service prepare` runs a scripted service until `fabric service release PID`;
//! meanwhile another process (this test, through the Rust facade, as any SDK would)
//! attaches to it with the printed reference and uses its store.

use crate::support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

#[test]
fn prepare_runs_until_released_and_prints_an_attachable_reference() {
    support::ensure_scripted_adapter();
    let dir = tempfile::tempdir().expect("tempdir");
    let config = support::scripted_config(dir.path(), "svc", json!({}));
    let mut child = Command::new(env!("CARGO_BIN_EXE_fabric"))
        .args(["service", "prepare", &config])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn prepare");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let first: Value =
        serde_json::from_str(&lines.next().expect("line").expect("read")).expect("json");
    let pid = first["pid"].as_u64().expect("pid");
    assert_eq!(pid, u64::from(child.id()));
    assert_eq!(first["service"]["status"], "active");
    let reference = &first["reference"];
    assert_eq!(reference["service_type"], "scripted_kv");
    let store = reference["connection"]["store"]
        .as_str()
        .expect("store")
        .to_owned();
    assert!(std::path::Path::new(&store).is_file());

    // Another process attaches through the reference and writes to the shared store.
    let config_value: fabric_config::FabricConfig =
        serde_json::from_str(&std::fs::read_to_string(&config).expect("config")).expect("decode");
    let options = fabric_host::RunOptions::with_base_dir(dir.path());
    let fabric = fabric_host::Fabric::new();
    let attached = fabric
        .attach_service(
            &config_value,
            serde_json::from_value(reference.clone()).expect("reference"),
            &options,
        )
        .expect("attach");
    let runtime = fabric
        .start_runtime_on(&config_value, &attached, &options)
        .expect("start");
    let mut request = fabric_config::RunRequest::new("kv");
    request.context.insert(
        "scripted_kv".into(),
        json!({"op": "set", "key": "from", "value": "attached"}),
    );
    let result = runtime.invoke(request).expect("invoke");
    assert_eq!(result.output["response"], "attached");
    runtime.stop();
    attached.release().expect("detach");
    assert!(
        std::fs::read_to_string(&store)
            .expect("store")
            .contains("attached")
    );

    // Not a prepare process: refused, nothing signalled.
    let refused = support::fabric(&["service", "release", &std::process::id().to_string()]);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        support::stdout_json(&refused)["error"]["code"],
        "invalid_argument"
    );

    let released = support::fabric(&["service", "release", &pid.to_string()]);
    assert_eq!(released.status.code(), Some(0), "{released:?}");
    let last: Value =
        serde_json::from_str(&lines.next().expect("line").expect("read")).expect("json");
    assert_eq!(last["released"]["status"], "released");
    assert!(child.wait().expect("wait").success());
    // The Fabric-owned store went with the service.
    assert!(!std::path::Path::new(&store).exists());
}
