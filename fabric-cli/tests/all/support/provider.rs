//! Helpers of the environment-provider tests (`env_provider.rs`, `env_runtime.rs`,
//! `env_container.rs`): provider descriptors, scripted configs whose environment is a
//! provider, a prepared environment's directory, fake providers (shell scripts) and the
//! codes of an error.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use fabric_config::FabricConfig;
use fabric_host::{Environment, Fabric, HostError, RunOptions};
use serde_json::{Value, json};

/// Writes a descriptor for `provider` running `command` into `dir/providers/` and returns
/// its path.
pub fn descriptor(dir: &Path, provider: &str, command: Value, attach: bool) -> PathBuf {
    let providers = dir.join("providers");
    std::fs::create_dir_all(&providers).expect("mkdir");
    let path = providers.join(format!("{provider}.fabric-environment-provider.json"));
    let descriptor = json!({
        "schema_version": "fabric.environment-provider-descriptor/v1alpha1",
        "provider": provider,
        "protocol_version": "fabric.environment-provider.v1alpha1",
        "command": command,
        "attach": attach,
    });
    std::fs::write(&path, descriptor.to_string()).expect("write descriptor");
    path
}

/// The descriptor of this crate's `fabric-env-subprocess` in `dir/providers/`.
pub fn subprocess_descriptor(dir: &Path) -> PathBuf {
    descriptor(
        dir,
        "subprocess",
        json!([env!("CARGO_BIN_EXE_fabric-env-subprocess")]),
        true,
    )
}

/// The descriptor of this crate's `fabric-env-container` in `dir/providers/`.
pub fn container_descriptor(dir: &Path) -> PathBuf {
    descriptor(
        dir,
        "container",
        json!([env!("CARGO_BIN_EXE_fabric-env-container")]),
        true,
    )
}

/// A scripted config (agent `name`, harness `settings`) written to `dir/fabric.json`, whose
/// discovery also finds `descriptor` and whose `environment` is `environment` with
/// `provider` set to `provider`. Returns the config document.
pub fn config_with(
    dir: &Path,
    name: &str,
    settings: Value,
    provider: &str,
    descriptor: &Path,
    mut environment: Value,
) -> Value {
    let path = super::scripted_config(dir, name, settings);
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
    config["discovery"]["local_paths"]
        .as_array_mut()
        .expect("local_paths")
        .push(json!(descriptor.parent().expect("providers dir")));
    environment["provider"] = json!(provider);
    config["environment"] = environment;
    std::fs::write(&path, config.to_string()).expect("write config");
    config
}

/// The typed config and options with `dir` as base directory.
pub fn typed(dir: &Path, config: Value) -> (FabricConfig, RunOptions) {
    (
        serde_json::from_value(config).expect("config"),
        RunOptions::with_base_dir(dir),
    )
}

/// Prepares the environment and returns it with its directory (`resource.directory` of
/// its reference: the subprocess and container providers' environments).
pub fn prepared(
    fabric: &Fabric,
    config: &FabricConfig,
    options: &RunOptions,
) -> (Arc<Environment>, PathBuf) {
    let environment = fabric
        .prepare_environment(config, options)
        .expect("prepare");
    let directory = PathBuf::from(
        environment.reference().resource["directory"]
            .as_str()
            .expect("directory"),
    );
    (environment, directory)
}

/// A fake provider: answers `prepare` with an environment, then each later request with
/// `$BEHAVIOUR` (`garbage`, `other`, `fail`, `silent`, `exit`).
const FAKE: &str = r#"
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed 's/.*"request_id":"\([^"]*\)".*/\1/')
  case "$line" in
    *'"operation":"prepare"'*)
      printf '{"request_id":"%s","status":"succeeded","output":{"environment_id":"e","reference":{"provider":"fake"}}}\n' "$id"
      continue ;;
  esac
  echo "fake provider: $BEHAVIOUR" >&2
  case "$BEHAVIOUR" in
    garbage) echo 'not json' ;;
    other) printf '{"request_id":"someone-else","status":"succeeded","output":{}}\n' ;;
    fail) printf '{"request_id":"%s","status":"failed","error":{"code":"quota","message":"no room"}}\n' "$id" ;;
    silent) sleep 30 ;;
    exit) exit 3 ;;
  esac
done
"#;

/// The descriptor of a fake provider `fake` (see [`FAKE`]) behaving as `behaviour`.
pub fn fake_descriptor(dir: &Path, behaviour: &str, attach: bool) -> PathBuf {
    let script = dir.join("fake.sh");
    std::fs::write(&script, FAKE.replace("$BEHAVIOUR", behaviour)).expect("write");
    descriptor(dir, "fake", json!(["sh", script]), attach)
}

/// The error's code.
pub fn code(error: HostError) -> String {
    error.code().to_owned()
}

/// The error's code, `metadata.provider_code` (empty when absent) and message.
pub fn provider_code(error: HostError) -> (String, String, String) {
    let info = fabric_config::ErrorInfo::from(error);
    (
        info.code,
        info.metadata["provider_code"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        info.message,
    )
}

/// The escape of issue 33 item 1 against a prepared environment whose `artifacts/` is
/// `artifacts` on this machine: a link to a secret file (`loot.txt`), a link to a secret
/// directory (`dirlink/`), a FIFO and a file above the per-file limit are each refused with
/// `path_refused` (at once: the FIFO never blocks), an ordinary file is still collected, and
/// the secret is never read. Then `artifacts` itself becomes a link: refused too.
pub fn assert_artifact_escapes_refused(environment: &Environment, artifacts: &Path) {
    use std::os::unix::fs::symlink;
    let secrets = tempfile::tempdir().expect("secrets");
    let secret = secrets.path().join("id_rsa");
    std::fs::write(&secret, "PRIVATE KEY 7d1c").expect("secret");
    std::fs::create_dir_all(artifacts).expect("artifacts");
    std::fs::write(artifacts.join("ok.txt"), "fine").expect("write");
    symlink(&secret, artifacts.join("loot.txt")).expect("symlink");
    symlink(secrets.path(), artifacts.join("dirlink")).expect("symlink");
    let fifo = std::process::Command::new("mkfifo")
        .arg(artifacts.join("fifo"))
        .status()
        .expect("mkfifo");
    assert!(fifo.success());
    std::fs::write(artifacts.join("huge.bin"), vec![0u8; 300 * 1024]).expect("write");
    let started = std::time::Instant::now();
    let paths: Vec<String> = [
        "ok.txt",
        "loot.txt",
        "dirlink/id_rsa",
        "fifo",
        "huge.bin",
        "gone",
    ]
    .map(String::from)
    .to_vec();
    let collected = environment.collect_artifacts(&paths).expect("collect");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "the FIFO blocked the provider: {:?}",
        started.elapsed()
    );
    assert_eq!(
        collected.files,
        vec![("ok.txt".to_owned(), b"fine".to_vec())]
    );
    let refused: Vec<(&str, &str, &str)> = collected
        .refused
        .iter()
        .map(|r| (r.path.as_str(), r.code.as_str(), r.reason.as_str()))
        .collect();
    assert_eq!(
        refused,
        [
            ("loot.txt", "path_refused", "symlink"),
            ("dirlink/id_rsa", "path_refused", "symlink"),
            ("fifo", "path_refused", "not_regular"),
            ("huge.bin", "path_refused", "too_large"),
        ]
    );
    for refusal in &collected.refused {
        assert!(refusal.message.contains(&refusal.path), "{refusal:?}");
        assert!(!refusal.message.contains("PRIVATE"), "{refusal:?}");
    }

    // `artifacts` itself swapped for a link to the secret directory
    let moved = artifacts.with_file_name("artifacts.moved");
    std::fs::rename(artifacts, &moved).expect("rename");
    symlink(secrets.path(), artifacts).expect("symlink");
    let collected = environment
        .collect_artifacts(&["id_rsa".to_owned()])
        .expect("collect");
    assert!(collected.files.is_empty(), "{:?}", collected.files);
    assert_eq!(collected.refused.len(), 1);
    assert_eq!(collected.refused[0].reason, "symlink");
    std::fs::remove_file(artifacts).expect("unlink");
    std::fs::rename(&moved, artifacts).expect("rename back");
}
