//! Shared helpers of the fabric-ffi integration tests: the repository root, the scripted
//! adapter's config, and the out-slot call that decodes and frees the result.

#![allow(dead_code)]

/// The one rule for a missing dependency (`tests/dependency.rs` at the workspace root).
#[path = "../../../../tests/dependency.rs"]
pub mod dependency;

use std::ffi::{CStr, CString, c_char};
use std::path::{Path, PathBuf};
use std::sync::Once;

use serde_json::{Value, json};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// Builds the scripted adapter once per test binary.
pub fn build_scripted() {
    static BUILD: Once = Once::new();
    BUILD.call_once(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let status = std::process::Command::new(cargo)
            .args(["build", "-q", "-p", "fabric-adapter-scripted"])
            .current_dir(repo_root())
            .status()
            .expect("cargo build");
        assert!(status.success());
    });
}

/// A config named `name` selecting the scripted adapter with `settings` (found through an
/// absolute discovery path; the adapter is not built).
pub fn scripted_config_value(name: &str, settings: Value) -> Value {
    let descriptor = repo_root().join("adapters/scripted/scripted.fabric-adapter.json");
    json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": name},
        "harness": {"adapter_id": "fabric.scripted", "settings": settings},
        "discovery": {"local_paths": [descriptor.to_str().expect("utf8")]}
    })
}

/// [`scripted_config_value`] as a C string, with the adapter built.
pub fn scripted_config(name: &str, settings: Value) -> CString {
    build_scripted();
    CString::new(scripted_config_value(name, settings).to_string()).expect("cstring")
}

/// Calls `f` with an out slot; returns the status and the decoded JSON (freed), or
/// `Value::Null` when nothing was written.
pub fn call_maybe(f: impl FnOnce(*mut *mut c_char) -> i32) -> (i32, Value) {
    let mut out: *mut c_char = std::ptr::null_mut();
    let status = f(&mut out);
    if out.is_null() {
        return (status, Value::Null);
    }
    // SAFETY: written by the library, freed once below.
    let text = unsafe { CStr::from_ptr(out) }
        .to_str()
        .expect("utf8")
        .to_owned();
    // SAFETY: as above.
    unsafe { fabric_ffi::fabric_string_free(out) };
    (status, serde_json::from_str(&text).expect("json"))
}

/// [`call_maybe`] that requires `*out` to be written.
pub fn call(f: impl FnOnce(*mut *mut c_char) -> i32) -> (i32, Value) {
    let (status, value) = call_maybe(f);
    assert!(!value.is_null(), "out written (status {status})");
    (status, value)
}
