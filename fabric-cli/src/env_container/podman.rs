//! The podman calls of the container provider. Every container runs with `--runtime
//! <oci_runtime>` (default `runc`) and explicit `nofile` / `nproc` ulimits no higher than
//! this process's hard limits: podman's defaults (`nofile` 1048576) exceed them on hosts
//! without `CAP_SYS_RESOURCE`, where the OCI runtime then fails to set them (docs/sandbox.md,
//! "The container provider").

use fabric_config::codes;
use fabric_reactor::sys::{self, Limit};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use fabric_sandbox::kit::Failure;

/// The engine binary.
const PODMAN: &str = "podman";
/// The label naming the environment id on its container.
const LABEL: &str = "fabric.environment";
/// Upper bound of the `nofile` / `nproc` ulimits a sandbox gets.
const ULIMIT_CAP: u64 = 4096;
/// Bytes of podman's stderr quoted in an error.
const STDERR_TAIL: usize = 600;

/// A container's identity.
pub struct Container {
    /// The full container id.
    pub id: String,
    /// Its image id, `sha256:<hex>`.
    pub image: String,
}

/// What `run` starts.
pub struct RunSpec<'a> {
    pub name: &'a str,
    pub directory: &'a Path,
    pub sandbox: &'a str,
    pub image: &'a str,
    pub oci_runtime: &'a str,
    /// The policy's options (`--network` first; see `policy.rs`).
    pub policy: &'a [String],
}

fn podman(args: &[&str]) -> Result<Output, Failure> {
    Command::new(PODMAN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|error| {
            (
                codes::CONTAINER_ENGINE_FAILED,
                format!("cannot run `{PODMAN}`: {error}"),
            )
        })
}

fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    let start = text
        .char_indices()
        .map(|(i, _)| i)
        .find(|&i| text.len() - i <= STDERR_TAIL)
        .unwrap_or(text.len());
    text[start..].to_owned()
}

fn failed(what: &str, output: &Output) -> Failure {
    (
        codes::CONTAINER_ENGINE_FAILED,
        format!("`podman {what}` failed: {}", tail(&output.stderr)),
    )
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

fn with_prefix(id: &str) -> String {
    if id.starts_with("sha256:") {
        id.to_owned()
    } else {
        format!("sha256:{id}")
    }
}

/// Checks that the local image store has the pinned image id and that `name`, when given,
/// names that same image.
pub fn verify_image(image: &str, name: Option<&str>) -> Result<(), Failure> {
    let hex = image.trim_start_matches("sha256:");
    let found = podman(&[
        "image",
        "inspect",
        "--format",
        "{{.Id}}",
        name.unwrap_or(hex),
    ])?;
    if !found.status.success() {
        return Err(match name {
            Some(name) => (
                codes::SANDBOX_IMAGE_MISMATCH,
                format!("no local image is named `{name}` (`settings.image_name`)"),
            ),
            None => (
                codes::SANDBOX_IMAGE_MISMATCH,
                "no local image has the pinned id `settings.image`".into(),
            ),
        });
    }
    let local = with_prefix(&stdout(&found));
    if local != image {
        return Err((
            codes::SANDBOX_IMAGE_MISMATCH,
            format!(
                "the local image `{}` has id `{local}`, not the pinned `settings.image`",
                name.unwrap_or(hex)
            ),
        ));
    }
    Ok(())
}

/// `getrlimit`'s hard limit of `resource`, capped at [`ULIMIT_CAP`].
fn ulimit(resource: Limit) -> u64 {
    sys::hard_limit(resource).map_or(1024, |limit| limit.min(ULIMIT_CAP))
}

/// Starts the container detached; returns its id.
pub fn run(spec: &RunSpec<'_>) -> Result<String, Failure> {
    let nofile = ulimit(Limit::OpenFiles);
    let nproc = ulimit(Limit::Processes);
    let label = format!("{LABEL}={}", spec.name);
    let volume = format!("{}:{}", spec.directory.display(), spec.sandbox);
    let nofile = format!("nofile={nofile}:{nofile}");
    let nproc = format!("nproc={nproc}:{nproc}");
    let socket = format!("FABRIC_HOST_SOCKET={}/fabric.sock", spec.sandbox);
    let image = spec.image.trim_start_matches("sha256:");
    let mut args: Vec<&str> = vec![
        "--runtime",
        spec.oci_runtime,
        "run",
        "-d",
        "--name",
        spec.name,
        "--label",
        &label,
        "--ulimit",
        &nofile,
        "--ulimit",
        &nproc,
        "-e",
        &socket,
        "-v",
        &volume,
    ];
    args.extend(spec.policy.iter().map(String::as_str));
    args.extend([image, "/usr/local/bin/fabric-agent-ctl", "serve"]);
    let output = podman(&args)?;
    if !output.status.success() {
        // A container that was created but failed to start keeps its name: remove it.
        let _ = podman(&["rm", "-f", spec.name]);
        return Err(failed("run", &output));
    }
    Ok(stdout(&output))
}

/// The container named (or with the id) `name`; `None` when there is none.
pub fn inspect(name: &str) -> Result<Option<Container>, Failure> {
    let output = podman(&[
        "container",
        "inspect",
        "--format",
        "{{.Id}} {{.Image}}",
        name,
    ])?;
    if !output.status.success() {
        let exists = podman(&["container", "exists", name])?;
        return match exists.status.code() {
            Some(1) => Ok(None),
            _ => Err(failed("container inspect", &output)),
        };
    }
    let text = stdout(&output);
    let mut fields = text.split_whitespace();
    match (fields.next(), fields.next()) {
        (Some(id), Some(image)) => Ok(Some(Container {
            id: id.to_owned(),
            image: with_prefix(image),
        })),
        _ => Err((
            codes::CONTAINER_ENGINE_FAILED,
            "`podman container inspect` printed no id and image".into(),
        )),
    }
}

/// Whether the container is running.
pub fn is_running(id: &str) -> bool {
    podman(&["container", "inspect", "--format", "{{.State.Running}}", id])
        .is_ok_and(|output| output.status.success() && stdout(&output) == "true")
}

/// The last lines of the container's output, for an error.
pub fn logs_tail(id: &str) -> String {
    match podman(&["logs", "--tail", "5", id]) {
        Ok(output) => format!(
            "container output: {} {}",
            tail(&output.stdout),
            tail(&output.stderr)
        ),
        Err((_, message)) => message,
    }
}

/// Removes the container (its server gets `SIGTERM`, then `SIGKILL` after 10 s).
pub fn remove(id: &str) -> Result<(), Failure> {
    let output = podman(&["rm", "-f", "-t", "10", id])?;
    if output.status.success() {
        Ok(())
    } else {
        Err(failed("rm", &output))
    }
}

/// The container's cgroup path as podman reports it (`/libpod_parent/libpod-<id>`), when
/// it answers.
pub fn cgroup_path(id: &str) -> Option<String> {
    let output = podman(&[
        "container",
        "inspect",
        "--format",
        "{{.State.CgroupPath}}",
        id,
    ])
    .ok()?;
    let path = stdout(&output);
    (output.status.success() && path.starts_with('/')).then_some(path)
}

/// The engine's server version (`podman version`), when it answers.
pub fn engine_version() -> Option<String> {
    let output = podman(&["version", "--format", "{{.Server.Version}}"]).ok()?;
    let version = stdout(&output);
    (output.status.success() && !version.is_empty()).then_some(version)
}
