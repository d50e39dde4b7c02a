//! The `container` environment provider (`fabric-env-container`) on podman, through
//! `fabric_host`'s public API: a scripted runtime started, invoked twice and stopped inside
//! the container through `runtime_control`, an artifact collected (and links, FIFOs and
//! oversized files in its artifacts refused one by one), release leaving neither
//! container nor directory; `sandbox_image_mismatch`, `sandbox_identity_changed` and an
//! unpinned image. The image comes from `scripts/container-image.sh` (once per process; the
//! script caches by the binaries' hash). Without podman these tests fail, naming what to
//! install, unless `FABRIC_ALLOW_SKIPS=1` (`tests/dependency.rs`).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::support::provider::{config_with, container_descriptor, provider_code, typed};
use fabric_config::FabricConfig;
use fabric_host::{Environment, Fabric, RunOptions};
use serde_json::{Value, json};

/// Whether podman can be used; `false` only when `FABRIC_ALLOW_SKIPS=1` allowed the skip
/// (`tests/dependency.rs`).
pub(crate) fn podman_available() -> bool {
    let found = Command::new("podman")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    if !found {
        support::dependency::missing("podman", "apt-get install podman runc (scripts/setup.sh)");
    }
    found
}

/// The sandbox image id, built once from this checkout's binaries.
pub(crate) fn image() -> &'static str {
    static IMAGE: OnceLock<String> = OnceLock::new();
    IMAGE.get_or_init(|| {
        support::ensure_scripted_adapter();
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| support::repo_root().join("target"));
        let output = Command::new("bash")
            .arg(support::repo_root().join("scripts/container-image.sh"))
            .env(
                "FABRIC_AGENT_CTL_BIN",
                env!("CARGO_BIN_EXE_fabric-agent-ctl"),
            )
            .env(
                "FABRIC_ADAPTER_SCRIPTED_BIN",
                target.join("debug/fabric-adapter-scripted"),
            )
            .output()
            .expect("container-image.sh");
        assert!(output.status.success(), "{output:?}");
        let id = String::from_utf8(output.stdout).expect("utf-8");
        id.trim().to_owned()
    })
}

fn podman(args: &[&str]) -> String {
    let output = Command::new("podman").args(args).output().expect("podman");
    assert!(output.status.success(), "podman {args:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// Containers and images a test created, removed by id when it ends (also on failure).
#[derive(Default)]
pub(super) struct Created {
    pub(super) containers: Vec<String>,
    images: Vec<String>,
}

impl Drop for Created {
    fn drop(&mut self) {
        for id in &self.containers {
            let _ = Command::new("podman").args(["rm", "-f", id]).output();
        }
        for id in &self.images {
            let _ = Command::new("podman").args(["rmi", "-f", id]).output();
        }
    }
}

/// Prepares a container environment and records its container in `created`; returns it
/// with the container id.
pub(super) fn prepare(
    fabric: &Fabric,
    config: &FabricConfig,
    options: &RunOptions,
    created: &mut Created,
) -> (Arc<Environment>, String) {
    let environment = fabric
        .prepare_environment(config, options)
        .expect("prepare");
    let container = environment.reference().resource["container_id"]
        .as_str()
        .expect("container_id")
        .to_owned();
    created.containers.push(container.clone());
    (environment, container)
}

/// A container environment prepared for one test: the test's directory (its config and the
/// environments' root), the config and options it was prepared with, the `Fabric`, the
/// environment and its container. Dropping it releases the environment (a no-op after an
/// explicit release) and then removes the containers in `created` by id, so a failing test
/// leaves nothing behind either.
pub(crate) struct Prepared {
    pub(crate) environment: Arc<Environment>,
    pub(crate) container: String,
    pub(crate) fabric: Fabric,
    pub(crate) config: FabricConfig,
    pub(crate) options: RunOptions,
    pub(super) created: Created,
    pub(crate) dir: tempfile::TempDir,
}

impl Prepared {
    /// Prepares a container environment whose settings are [`settings`] changed by `edit`;
    /// `None` only when podman is missing and `FABRIC_ALLOW_SKIPS=1` allowed the skip.
    pub(crate) fn new(edit: impl FnOnce(&mut Value)) -> Option<Prepared> {
        if !podman_available() {
            return None;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let mut settings = settings(dir.path());
        edit(&mut settings);
        let (config, options) = provider_config(dir.path(), settings);
        let fabric = Fabric::new();
        let mut created = Created::default();
        let (environment, container) = prepare(&fabric, &config, &options, &mut created);
        Some(Prepared {
            environment,
            container,
            fabric,
            config,
            options,
            created,
            dir,
        })
    }

    /// Releases the environment, which must succeed.
    pub(crate) fn release(&self) {
        self.fabric
            .release_environment(&self.environment)
            .expect("release");
    }

    /// The environment directory on this machine (`resource.directory`).
    pub(crate) fn directory(&self) -> PathBuf {
        let reference = self.environment.reference();
        PathBuf::from(reference.resource["directory"].as_str().expect("directory"))
    }
}

impl Drop for Prepared {
    fn drop(&mut self) {
        let _ = self.fabric.release_environment(&self.environment);
    }
}

/// The ids of every container labelled with the environment id.
fn labelled(environment_id: &str) -> String {
    podman(&[
        "ps",
        "-a",
        "--filter",
        &format!("label=fabric.environment={environment_id}"),
        "--format",
        "{{.ID}}",
    ])
}

/// A scripted config whose environment is the `container` provider (found through an
/// explicit descriptor) with `settings`.
pub(crate) fn provider_config(dir: &Path, settings: Value) -> (FabricConfig, RunOptions) {
    let descriptor = container_descriptor(dir);
    let environment = json!({"settings": settings});
    let config = config_with(
        dir,
        "contained",
        json!({}),
        "container",
        &descriptor,
        environment,
    );
    typed(dir, config)
}

/// Settings with the built image and a root under `dir`.
pub(crate) fn settings(dir: &Path) -> Value {
    let root = dir.join("envs");
    std::fs::create_dir_all(&root).expect("mkdir");
    json!({"image": image(), "root": root})
}

pub(super) fn bridge(operation: &str, members: Value) -> Value {
    let mut request = json!({"interface_version": 2, "operation": operation});
    for (key, value) in members.as_object().expect("members") {
        request[key] = value.clone();
    }
    request
}

#[test]
fn a_scripted_runtime_runs_inside_the_container_and_release_leaves_nothing() {
    let Some(prepared) = Prepared::new(|_| {}) else {
        return;
    };
    let Prepared {
        environment,
        container,
        fabric,
        config,
        options,
        ..
    } = &prepared;
    let reference = environment.reference();
    let id = environment.inspect().expect("inspect").environment_id;
    assert_eq!(labelled(&id), container[..12]);
    let info = environment.info();
    assert_eq!(info.workspace.as_deref(), Some("/sandbox/workspace"));
    let connection = environment.inspect().expect("inspect").connection;
    assert_eq!(connection["image"], image());
    assert_eq!(
        connection["infrastructure"]["container"]["engine_version"],
        podman(&["version", "--format", "{{.Server.Version}}"])
    );

    // exec runs in the container: its workspace, not this machine's files
    let output = environment
        .exec(
            &[
                "sh".into(),
                "-c".into(),
                "pwd; test -e /usr/bin/podman && echo host || echo sandbox".into(),
            ],
            Duration::from_secs(20),
        )
        .expect("exec");
    assert_eq!(output.stdout, "/sandbox/workspace\nsandbox\n", "{output:?}");

    // a scripted runtime inside the container, driven through its runtime server
    let agent = json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "inside"},
        "harness": {"adapter_id": "fabric.scripted", "settings": {"replies": [
            "Hello! You said: {input}",
            "Turn {turn}. Just before this you said: {previous_input}",
        ]}},
        "discovery": {"local_paths": ["/opt/fabric/adapters/scripted/scripted.fabric-adapter.json"]},
        // relative to the server's base directory, /sandbox: the environment's artifacts/
        "runtime": {"artifacts": "artifacts"},
    });
    let call = |request: Value| {
        environment
            .runtime_control(request, Duration::from_secs(60))
            .expect("runtime_control")
    };
    let started = call(bridge("start", json!({"agent": "inside", "config": agent})));
    assert_eq!(started["status"], "succeeded", "{started}");
    let runtime = started["result"]["runtime_id"].clone();
    let first = call(bridge(
        "invoke",
        json!({"agent": "inside", "runtime_id": runtime, "input": "Hi, I am Ada."}),
    ));
    assert_eq!(
        first["result"]["output"]["response"], "Hello! You said: Hi, I am Ada.",
        "{first}"
    );
    let second = call(bridge(
        "invoke",
        json!({"agent": "inside", "runtime_id": runtime, "request": {
            "input": "What did I say?",
            "context": {"scripted": {"artifact": {"name": "note.txt", "content": "written inside"}}},
        }}),
    ));
    assert_eq!(
        second["result"]["output"]["response"], "Turn 2. Just before this you said: Hi, I am Ada.",
        "{second}"
    );
    let stopped = call(bridge(
        "stop",
        json!({"agent": "inside", "runtime_id": runtime}),
    ));
    assert_eq!(stopped["status"], "succeeded", "{stopped}");

    // the adapter wrote its artifact in the container's artifact root: collect it
    let host_artifacts = prepared.directory().join("artifacts");
    let relative = find_file(&host_artifacts, "note.txt").expect("note.txt in the artifacts");
    let files = environment
        .collect_artifacts(std::slice::from_ref(&relative))
        .expect("collect")
        .files;
    assert_eq!(files, vec![(relative, b"written inside".to_vec())]);

    // links, FIFOs and oversized files in the bind-mounted artifacts/ are refused one by
    // one on the host side (the container has no `ln`: they are planted from here, in the
    // same directory code inside the container writes)
    support::provider::assert_artifact_escapes_refused(environment, &host_artifacts);

    // attach: the caller's; release only detaches
    let attached = fabric
        .attach_environment(config, &reference, options)
        .expect("attach");
    assert!(attached.info().attached);
    fabric.release_environment(&attached).expect("detach");
    assert_eq!(labelled(&id), container[..12], "detach keeps the container");

    // release removes the container and the directory
    let directory = prepared.directory();
    prepared.release();
    assert_eq!(labelled(&id), "", "no container is left");
    assert!(!directory.exists(), "no directory is left");
}

/// The path of a file named `name` below `root`, relative to it.
fn find_file(root: &Path, name: &str) -> Option<String> {
    for entry in std::fs::read_dir(root).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = find_file(&path, name) {
                let prefix = entry.file_name().to_string_lossy().into_owned();
                return Some(format!("{prefix}/{found}"));
            }
        } else if entry.file_name() == name {
            return Some(name.to_owned());
        }
    }
    None
}

#[test]
fn an_image_that_is_not_the_pinned_one_is_refused() {
    if !podman_available() {
        return;
    }
    let mut created = Created::default();
    let dir = tempfile::tempdir().expect("tempdir");
    // another image under a name of this test
    let rootfs = dir.path().join("other");
    std::fs::create_dir(&rootfs).expect("mkdir");
    std::fs::write(rootfs.join("marker"), "other").expect("write");
    let tar = dir.path().join("other.tar");
    let status = Command::new("tar")
        .arg("-C")
        .arg(&rootfs)
        .arg("-cf")
        .arg(&tar)
        .arg(".")
        .status()
        .expect("tar");
    assert!(status.success());
    let name = format!("localhost/fabric-test-mismatch:{}", std::process::id());
    let other = podman(&["import", "-q", tar.to_str().expect("utf-8"), &name]);
    created.images.push(other.clone());
    let fabric = Fabric::new();

    let mut pinned = settings(dir.path());
    pinned["image_name"] = json!(name);
    let absent = json!({"image": format!("sha256:{}", "0".repeat(64)), "root": pinned["root"]});
    for settings in [pinned, absent] {
        let (config, options) = provider_config(dir.path(), settings.clone());
        let (code, provider, message) = provider_code(
            fabric
                .prepare_environment(&config, &options)
                .expect_err("mismatch"),
        );
        assert_eq!(
            (code.as_str(), provider.as_str()),
            ("sandbox_image_mismatch", "sandbox_image_mismatch"),
            "{settings}: {message}"
        );
        assert!(message.contains("settings.image"), "{message}");
    }
    assert_eq!(
        std::fs::read_dir(dir.path().join("envs"))
            .expect("root")
            .count(),
        0,
        "a refused prepare leaves no directory"
    );

    // attaching with another pin than the container's image
    let (config, options) = provider_config(dir.path(), settings(dir.path()));
    let (environment, _) = prepare(&fabric, &config, &options, &mut created);
    let reference = environment.reference();
    let mut elsewhere = settings(dir.path());
    elsewhere["image"] = json!(format!("sha256:{}", other.trim_start_matches("sha256:")));
    let (other_config, _) = provider_config(dir.path(), elsewhere);
    let (code, provider, _) = provider_code(
        fabric
            .attach_environment(&other_config, &reference, &options)
            .expect_err("attach mismatch"),
    );
    assert_eq!(
        (code.as_str(), provider.as_str()),
        ("sandbox_image_mismatch", "sandbox_image_mismatch")
    );
    fabric.release_environment(&environment).expect("release");
}

#[test]
fn a_container_replaced_under_the_same_name_is_not_attached() {
    let Some(mut prepared) = Prepared::new(|_| {}) else {
        return;
    };
    let reference = prepared.environment.reference();
    let name = prepared
        .environment
        .inspect()
        .expect("inspect")
        .environment_id;
    let directory = prepared.directory();
    let directory = directory.to_str().expect("utf-8");

    podman(&["rm", "-f", &prepared.container]);
    let replacement = podman(&[
        "--runtime",
        "runc",
        "run",
        "-d",
        "--name",
        &name,
        "--network",
        "none",
        "--ulimit",
        "nofile=1024:1024",
        "--ulimit",
        "nproc=1024:1024",
        "-v",
        &format!("{directory}:/sandbox"),
        image().trim_start_matches("sha256:"),
        "/usr/local/bin/fabric-agent-ctl",
        "serve",
    ]);
    prepared.created.containers.push(replacement);
    let (code, provider, message) = provider_code(
        prepared
            .fabric
            .attach_environment(&prepared.config, &reference, &prepared.options)
            .expect_err("replaced"),
    );
    assert_eq!(
        (code.as_str(), provider.as_str()),
        ("sandbox_identity_changed", "sandbox_identity_changed"),
        "{message}"
    );
    // releasing the prepared environment still deletes its directory
    prepared.release();
    assert!(!Path::new(directory).exists());
}

#[test]
fn an_unpinned_image_is_refused_naming_the_setting() {
    // no podman call happens before this check: it runs everywhere
    let dir = tempfile::tempdir().expect("tempdir");
    let fabric = Fabric::new();
    for image in [
        json!("localhost/fabric-sandbox:latest"),
        json!("sha256:abc"),
        json!(null),
    ] {
        let mut settings = json!({"root": dir.path()});
        if !image.is_null() {
            settings["image"] = image.clone();
        }
        let (config, options) = provider_config(dir.path(), settings);
        let (code, provider, message) = provider_code(
            fabric
                .prepare_environment(&config, &options)
                .expect_err("unpinned"),
        );
        assert_eq!(
            (code.as_str(), provider.as_str()),
            ("sandbox_image_unpinned", "sandbox_image_unpinned"),
            "{image}"
        );
        assert!(message.contains("settings.image"), "{message}");
    }
}

#[test]
fn the_bundled_descriptor_serves_fabric_env_prepare_and_attach() {
    if !podman_available() {
        return;
    }
    let mut created = Created::default();
    let dir = tempfile::tempdir().expect("tempdir");
    // no providers directory: `container` is found in the repository's bundled adapters/
    let path = support::scripted_config(dir.path(), "contained", json!({}));
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
    config["environment"] = json!({"provider": "container", "settings": settings(dir.path())});
    std::fs::write(&path, config.to_string()).expect("write");

    let prepared = support::fabric(&["env", "prepare", &path]);
    assert!(prepared.status.success(), "{prepared:?}");
    let prepared = support::stdout_json(&prepared);
    let reference = prepared["reference"].clone();
    assert_eq!(reference["provider"], "container");
    let container = reference["resource"]["container_id"]
        .as_str()
        .expect("container_id")
        .to_owned();
    created.containers.push(container.clone());
    let id = prepared["environment"]["connection"]["container_name"]
        .as_str()
        .expect("container_name")
        .to_owned();
    // the environment outlives the `fabric` process that prepared it
    assert_eq!(labelled(&id), container[..12]);

    let file = dir.path().join("reference.json");
    std::fs::write(&file, reference.to_string()).expect("write");
    let attached = support::fabric(&[
        "env",
        "attach",
        &path,
        "--reference",
        file.to_str().expect("utf-8"),
    ]);
    assert!(attached.status.success(), "{attached:?}");
    let attached = support::stdout_json(&attached);
    assert_eq!(attached["environment"]["ownership"], "caller_owned");
}
