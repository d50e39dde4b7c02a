//! What planning keeps between calls (parsed descriptors, directory searches, whole plans)
//! never hides a change on disk: through `fabric_plan`, a descriptor edited between two
//! plans — same size, same modification time — and adapter directories added and removed
//! between plans are seen by the next plan.

use std::ffi::CString;
use std::fs::File;
use std::path::{Path, PathBuf};

use fabric_ffi::{FabricStatus, fabric_plan};
use serde_json::{Value, json};

use crate::support::call;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "fabric-ffi-plan-cache-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn descriptor(adapter_id: &str, command: &str) -> String {
    json!({
        "contract_version": "fabric.adapter/v1alpha2",
        "adapter_id": adapter_id,
        "adapter_kind": "process",
        "runner": {"command": command},
        "config": {"accepts": ["models"]}
    })
    .to_string()
}

fn plan(adapter_id: &str, local_path: &Path) -> (i32, Value) {
    let config = json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "plan-cache"},
        "harness": {"adapter_id": adapter_id},
        "models": {"default": {"provider": "openai", "model": "gpt-5"}},
        "discovery": {"local_paths": [local_path]}
    });
    let config = CString::new(config.to_string()).expect("cstring");
    // SAFETY: valid strings and slot; NULL options.
    call(|out| unsafe { fabric_plan(config.as_ptr(), std::ptr::null(), out) })
}

fn command_of(plan: &Value) -> &Value {
    &plan["adapter_descriptor"]["descriptor"]["runner"]["command"]
}

#[test]
fn a_descriptor_rewritten_with_the_same_size_and_modification_time_is_seen() {
    let dir = scratch("same-size");
    let file = dir.join("echo.fabric-adapter.json");
    std::fs::write(&file, descriptor("cache.echo", "echo-adapter")).expect("write");
    // Old enough that only the stamps decide (no re-read of a recently written file).
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    File::options()
        .write(true)
        .open(&file)
        .and_then(|f| f.set_modified(old))
        .expect("backdate");
    for local_path in [&dir, &file] {
        let (status, first) = plan("cache.echo", local_path);
        assert_eq!(status, FabricStatus::Ok as i32, "{first}");
        let (_, again) = plan("cache.echo", local_path);
        assert_eq!(again, first, "an unchanged descriptor plans the same");
    }
    let (_, before) = plan("cache.echo", &dir);
    assert_eq!(command_of(&before), "echo-adapter");

    // Same length, same inode, and the modification time put back: only the change time
    // (and the content) differ.
    std::fs::write(&file, descriptor("cache.echo", "echo-adaptor")).expect("rewrite");
    File::options()
        .write(true)
        .open(&file)
        .and_then(|f| f.set_modified(old))
        .expect("backdate again");
    for local_path in [&dir, &file] {
        let (status, after) = plan("cache.echo", local_path);
        assert_eq!(status, FabricStatus::Ok as i32, "{after}");
        assert_eq!(
            command_of(&after),
            "echo-adaptor",
            "{}",
            local_path.display()
        );
        assert_ne!(after["descriptor_sha256"], before["descriptor_sha256"]);
    }
    std::fs::remove_dir_all(&dir).expect("cleanup");
}

#[test]
fn adapter_directories_added_and_removed_between_plans_are_seen() {
    let root = scratch("dirs");
    let nested = root.join("team").join("agents");
    std::fs::create_dir_all(&nested).expect("nested");
    std::fs::write(
        root.join("one.fabric-adapter.json"),
        descriptor("cache.one", "one"),
    )
    .expect("one");

    let (status, error) = plan("cache.two", &root);
    assert_eq!(status, FabricStatus::Config as i32, "{error}");
    assert_eq!(error["code"], "adapter_not_found", "{error}");

    // A new adapter directory deep below the root: only the innermost directory changes.
    let added = nested.join("two");
    std::fs::create_dir(&added).expect("two");
    std::fs::write(
        added.join("two.fabric-adapter.json"),
        descriptor("cache.two", "two"),
    )
    .expect("write two");
    let (status, found) = plan("cache.two", &root);
    assert_eq!(status, FabricStatus::Ok as i32, "{found}");
    assert_eq!(command_of(&found), "two");

    std::fs::remove_dir_all(&added).expect("remove two");
    let (status, error) = plan("cache.two", &root);
    assert_eq!(status, FabricStatus::Config as i32, "{error}");
    assert_eq!(error["code"], "adapter_not_found", "{error}");

    // The remaining adapter still plans, and a removed descriptor file is missed too.
    let (status, one) = plan("cache.one", &root);
    assert_eq!(status, FabricStatus::Ok as i32, "{one}");
    std::fs::remove_file(root.join("one.fabric-adapter.json")).expect("remove one");
    let (status, error) = plan("cache.one", &root);
    assert_eq!(status, FabricStatus::Config as i32, "{error}");
    std::fs::remove_dir_all(&root).expect("cleanup");
}
