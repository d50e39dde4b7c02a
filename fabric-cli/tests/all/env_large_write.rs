//! A 5 MiB `write_file` (above one provider request line) through `fabric_host` on the
//! subprocess and container providers: the host sends it in chunks, and the file in the
//! environment holds the same bytes (compared whole on this machine's side of the
//! environment directory; its size and first 4 MiB from `read_file`); a later small write
//! replaces it.

use std::path::PathBuf;

use crate::env_container;
use crate::support::provider::{config_with, subprocess_descriptor, typed};
use fabric_config::FabricConfig;
use fabric_config::environment_ops::{FileReadRequest, FileWriteRequest, MAX_READ_BYTES};
use fabric_host::{Environment, Fabric, RunOptions};
use serde_json::json;

const SIZE: usize = 5 * 1024 * 1024;

fn write(environment: &Environment, bytes: &[u8]) {
    let request: FileWriteRequest = serde_json::from_value(json!({
        "path": "data/big.bin",
        "content_hex": hex::encode(bytes),
    }))
    .expect("write request");
    environment.write_file(&request).expect("write");
}

/// Writes `SIZE` patterned bytes to `data/big.bin` and checks them.
fn round_trip(environment: &Environment) {
    let bytes: Vec<u8> = (0..SIZE).map(|i| (i % 251) as u8).collect();
    write(environment, &bytes);
    let directory = PathBuf::from(
        json!(environment.reference())["resource"]["directory"]
            .as_str()
            .expect("directory"),
    );
    let on_disk = directory.join("workspace/data/big.bin");
    assert!(
        std::fs::read(&on_disk).expect("file") == bytes,
        "the file differs"
    );
    let read: FileReadRequest =
        serde_json::from_value(json!({"path": "data/big.bin"})).expect("read request");
    let content = environment.read_file(&read).expect("read");
    assert_eq!(content.size, SIZE as u64);
    assert!(content.truncated);
    let prefix = hex::decode(&content.content_hex).expect("hex");
    assert_eq!(prefix.len() as u64, MAX_READ_BYTES);
    assert!(prefix == bytes[..prefix.len()], "the first 4 MiB differ");
    // the first chunk of a write replaces the file
    write(environment, b"small");
    assert_eq!(std::fs::read(&on_disk).expect("file"), b"small");
}

fn prepared(config: &FabricConfig, options: &RunOptions) {
    let fabric = Fabric::new();
    let environment = fabric
        .prepare_environment(config, options)
        .expect("prepare");
    let outcome =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| round_trip(&environment)));
    fabric.release_environment(&environment).expect("release");
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

#[test]
fn a_5_mib_write_reaches_a_subprocess_environment_in_chunks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let descriptor = subprocess_descriptor(dir.path());
    let config = config_with(
        dir.path(),
        "large",
        json!({}),
        "subprocess",
        &descriptor,
        json!({"settings": {"root": dir.path()}}),
    );
    let (config, options) = typed(dir.path(), config);
    prepared(&config, &options);
}

#[test]
fn a_5_mib_write_reaches_a_container_environment_in_chunks() {
    if !env_container::podman_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let settings = env_container::settings(dir.path());
    let (config, options) = env_container::provider_config(dir.path(), settings);
    prepared(&config, &options);
}
