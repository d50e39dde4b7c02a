//! `fabric-env-container`: the `container` environment provider on podman (docs/sandbox.md,
//! "The container provider").
//!
//! Speaks `fabric.environment-provider.v1alpha1` on stdio like `fabric-env-subprocess`. An
//! environment is a directory on this machine (mode 0700, `workspace/`, `artifacts/`)
//! bind-mounted at `/sandbox` into a container named after it (`fabric-env-<id>`, label
//! `fabric.environment=<id>`, no network) whose process is `fabric-agent-ctl serve`: its
//! socket `/sandbox/fabric.sock` is the directory's `fabric.sock` on this machine (one
//! kernel), so runtime control goes straight to the socket. The image is pinned by its
//! local image id. A caller's `exec` is one request to that server (the kit's default), which
//! runs the command inside the container beneath `/sandbox/workspace`; `release` removes the
//! container and deletes the directory of an environment this process prepared, and only
//! forgets an attached one.
//!
//! Settings (`environment.settings`): `image` (required: `sha256:<64 hex>`, the local image
//! id, e.g. what `scripts/container-image.sh` prints), `image_name` (optional: a local name
//! that must resolve to that id), `root` (as the subprocess provider's), `oci_runtime`
//! (default `runc`), and the policy: `network` (`none`, the default, `bridge`, `host`, or
//! `{"mode": "loopback", "allow_ports": [...]}`: the host's half of each port's relay runs
//! in the provider process that prepared the environment, until its release),
//! `resources` (`cpus`, `memory_mib`, `pids`, `tmpfs_mib`) and `read_only_root`
//! (`policy.rs`).
//!
//! The protocol, the environment table and the operations every provider answers alike are
//! the provider kit's (`fabric_sandbox::kit`); this file and `podman.rs` hold what is the
//! container provider's own.

#![forbid(unsafe_code)]

mod observe;
mod podman;
mod policy;

use fabric_config::codes;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use fabric_config::config::JsonObject;
use fabric_config::handles::EnvironmentReference;
use fabric_sandbox::kit::relay::{self, LOOPBACK_DIR, Relay};
use fabric_sandbox::kit::{self, Description, Failure, SOCKET};
use serde_json::{Value, json};

/// How long `prepare` waits for the container's server to answer `check`.
const SERVER_READY: Duration = Duration::from_secs(30);
/// Paths of the environment directory inside the container.
const SANDBOX: &str = "/sandbox";

fn main() -> ExitCode {
    kit::run(&Container)
}

/// The provider: environments are directories bind-mounted into a podman container.
struct Container;

/// One environment: its directory and its container.
struct Env {
    dir: PathBuf,
    container: podman::Container,
    engine_version: Option<String>,
    /// When `prepare` or `attach` made it (the observation's wall time).
    since: std::time::Instant,
    /// The host's halves of the loopback relays (an environment this process prepared).
    relays: Vec<Relay>,
}

impl kit::Provider for Container {
    type Env = Env;
    const PROVIDER: &'static str = "container";
    const BINARY: &'static str = "fabric-env-container";

    fn prepare(&self, settings: &JsonObject) -> Result<(String, Env), Failure> {
        let checked = Settings::read(settings, true)?;
        let root = kit::settings_root(settings)?;
        let image = checked.image.clone().unwrap_or_default();
        podman::verify_image(&image, checked.image_name.as_deref())?;
        let (id, dir) = kit::create_environment_dir(&root)?;
        let started = loopback_relays(&dir, &checked.loopback_ports)
            .and_then(|relays| Ok((start(&id, &dir, &image, &checked)?, relays)));
        let (container, relays) = match started {
            Ok(started) => started,
            Err(failure) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(failure);
            }
        };
        let env = Env {
            dir,
            container,
            engine_version: podman::engine_version(),
            since: std::time::Instant::now(),
            relays,
        };
        Ok((id, env))
    }

    fn attach(
        &self,
        reference: &EnvironmentReference,
        settings: &JsonObject,
    ) -> Result<(String, Env), Failure> {
        let checked = Settings::read(settings, false)?;
        let dir = kit::reference_directory(reference)?;
        let Some(Value::String(expected)) = reference.resource.get("container_id") else {
            return Err((
                "invalid_reference",
                "`resource.container_id` must be the container's id".into(),
            ));
        };
        kit::require_workspace(&dir, Self::PROVIDER)?;
        let id = kit::environment_id(&dir);
        let container = podman::inspect(&id)?.ok_or_else(|| {
            (
                codes::ENVIRONMENT_NOT_FOUND,
                format!("no container is named `{id}`"),
            )
        })?;
        if &container.id != expected {
            return Err((
                codes::SANDBOX_IDENTITY_CHANGED,
                format!(
                    "the container named `{id}` is not the one the reference names (`resource.container_id`): it was replaced"
                ),
            ));
        }
        if let Some(image) = &checked.image
            && image != &container.image
        {
            return Err((
                codes::SANDBOX_IMAGE_MISMATCH,
                format!(
                    "the container `{id}` runs image `{}`, not the pinned `settings.image`",
                    container.image
                ),
            ));
        }
        kit::require_server(&dir)?;
        let env = Env {
            dir,
            container,
            engine_version: podman::engine_version(),
            since: std::time::Instant::now(),
            relays: Vec::new(),
        };
        Ok((id, env))
    }
}

impl kit::Environment for Env {
    fn dir(&self) -> &Path {
        &self.dir
    }

    /// Paths inside the container, and the container's identity.
    fn describe(&self, id: &str) -> Description {
        let mut container = json!({"engine": "podman"});
        if let Some(version) = &self.engine_version {
            container["engine_version"] = json!(version);
        }
        let directory = Value::String(self.dir.to_string_lossy().into_owned());
        Description {
            resource: [("container_id".to_owned(), json!(self.container.id))].into(),
            workspace: format!("{SANDBOX}/workspace"),
            artifacts: format!("{SANDBOX}/artifacts"),
            connection: [
                ("directory".to_owned(), directory),
                ("container_id".to_owned(), json!(self.container.id)),
                ("container_name".to_owned(), json!(id)),
                ("image".to_owned(), json!(self.container.image)),
                ("infrastructure".to_owned(), json!({"container": container})),
            ]
            .into(),
        }
    }

    /// The container's cgroup usage (before `stop` removes it) and the wall time since
    /// `prepare`.
    fn observe(&self) -> Option<fabric_config::gym::SandboxObservation> {
        let usage = podman::cgroup_path(&self.container.id)
            .map(|cgroup| observe::read(Path::new("/sys/fs/cgroup"), &cgroup))
            .unwrap_or_default();
        let id = kit::environment_id(&self.dir);
        Some(observe::observation(&id, usage, self.since.elapsed()))
    }

    /// Removes the container (the directory is the kit's to delete).
    fn stop(&mut self) -> Result<(), Failure> {
        let removed = podman::remove(&self.container.id);
        self.relays.iter_mut().for_each(Relay::stop);
        removed
    }
}

/// The provider's own settings (`root` is read by the kit's `settings_root`).
struct Settings {
    /// The pinned image id, `sha256:<64 hex>`.
    image: Option<String>,
    image_name: Option<String>,
    oci_runtime: String,
    /// `podman run` options of `network`, `resources` and `read_only_root`.
    policy: Vec<String>,
    /// The host loopback ports relayed into the container.
    loopback_ports: Vec<u16>,
}

impl Settings {
    /// Reads and checks the settings; `image` is required when `require_image`.
    fn read(settings: &JsonObject, require_image: bool) -> Result<Settings, Failure> {
        let string = |key: &str| -> Result<Option<String>, Failure> {
            match settings.get(key) {
                None => Ok(None),
                Some(Value::String(value)) if !value.trim().is_empty() => Ok(Some(value.clone())),
                Some(_) => Err((
                    codes::INVALID_SETTINGS,
                    format!("`settings.{key}` must be a non-empty string"),
                )),
            }
        };
        let image = string("image")?;
        match &image {
            None if require_image => {
                return Err((
                    codes::SANDBOX_IMAGE_UNPINNED,
                    "`settings.image` is required: the image id `sha256:<64 hex digits>`".into(),
                ));
            }
            Some(image) if !is_pinned(image) => {
                return Err((
                    codes::SANDBOX_IMAGE_UNPINNED,
                    "`settings.image` must pin the image by id (`sha256:<64 hex digits>`), not name a tag".into(),
                ));
            }
            _ => {}
        }
        let policy = policy::run_options(settings)?;
        Ok(Settings {
            image,
            image_name: string("image_name")?,
            oci_runtime: string("oci_runtime")?.unwrap_or_else(|| "runc".into()),
            policy: policy.options,
            loopback_ports: policy.loopback_ports,
        })
    }
}

/// The host's half of each loopback port's relay, listening in the environment directory's
/// `loopback/` (the container's half connects there through the bind mount).
fn loopback_relays(dir: &Path, ports: &[u16]) -> Result<Vec<Relay>, Failure> {
    if ports.is_empty() {
        return Ok(Vec::new());
    }
    let sockets = dir.join(LOOPBACK_DIR);
    let unavailable = |error: std::io::Error| {
        (
            codes::PREPARE_FAILED,
            format!("cannot relay `settings.network.allow_ports`: {error}"),
        )
    };
    std::fs::create_dir(&sockets).map_err(unavailable)?;
    ports
        .iter()
        .map(|&port| Relay::unix_to_tcp(&relay::socket_path(&sockets, port), port))
        .collect::<Result<_, _>>()
        .map_err(unavailable)
}

/// `sha256:` followed by 64 lowercase hex digits.
fn is_pinned(image: &str) -> bool {
    image.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Runs the environment's container and waits for its server; removes the container again
/// when the server does not answer.
fn start(
    id: &str,
    dir: &Path,
    image: &str,
    settings: &Settings,
) -> Result<podman::Container, Failure> {
    let container_id = podman::run(&podman::RunSpec {
        name: id,
        directory: dir,
        sandbox: SANDBOX,
        image,
        oci_runtime: &settings.oci_runtime,
        policy: &settings.policy,
    })?;
    let socket = dir.join(SOCKET);
    let ready = kit::wait_for_server(&socket, SERVER_READY, || podman::is_running(&container_id));
    let container = podman::inspect(id).and_then(|found| {
        found.ok_or_else(|| {
            (
                codes::CONTAINER_ENGINE_FAILED,
                format!("the container `{id}` disappeared"),
            )
        })
    });
    match (ready, container) {
        (Ok(()), Ok(container)) if container.id == container_id && container.image == image => {
            Ok(container)
        }
        (Ok(()), Ok(container)) => {
            let _ = podman::remove(&container_id);
            Err((
                codes::SANDBOX_IMAGE_MISMATCH,
                format!(
                    "the started container runs image `{}`, not the pinned `settings.image`",
                    container.image
                ),
            ))
        }
        (Err(message), _) => {
            let logs = podman::logs_tail(&container_id);
            let _ = podman::remove(&container_id);
            Err((
                codes::PREPARE_FAILED,
                format!("the container's runtime server did not answer: {message}; {logs}"),
            ))
        }
        (Ok(()), Err(failure)) => {
            let _ = podman::remove(&container_id);
            Err(failure)
        }
    }
}
