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
