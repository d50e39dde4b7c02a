//! What every environment provider binary of this crate shares (`fabric-env-subprocess`,
//! `fabric-env-container`; docs/sandbox.md, "Environment providers"): the
//! `fabric.environment-provider.v1alpha1` request loop on stdio, the environment directory
//! (mode 0700, `workspace/`, `artifacts/`, the runtime server's socket), the runtime-server
//! client calls, artifact collection, `exec` with a deadline, and the operations every
//! provider answers alike from its environment's directory ([`Environment`],
//! [`answer_shared`]).
//!
//! The provider binaries of `fabric-cli` depend on it as a library.

use std::collections::HashMap;
use std::io::{BufRead, Read, Write};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use crate::bridge::Client;
use fabric_config::bridge::validate_request;
use fabric_config::config::JsonObject;
use fabric_config::handles::EnvironmentReference;
use fabric_config::provider::{
    ArtifactFile, ArtifactsOutput, ExecOutput, MAX_REQUEST_BYTES, PROTOCOL_VERSION,
    ProviderEnvironment, ProviderOperation, ProviderRequest,
};
use serde_json::{Value, json};

/// A provider error: its code and a message (never a secret).
pub type Failure = (&'static str, String);

/// Bytes of one artifact file read (the core's limit is lower: a larger file reaches it
/// and is refused there, never truncated here).
const ARTIFACT_READ_CAP: u64 = 1024 * 1024;
/// Longest unix socket path (`sun_path`, NUL included).
const SOCKET_PATH_MAX: usize = 108;
/// Bytes of one exec stream read (above the core's 3 MiB limit, for the same reason).
const EXEC_READ_CAP: u64 = 4 * 1024 * 1024;
/// The runtime server's socket file name in the environment directory.
pub const SOCKET: &str = "fabric.sock";

/// Serves requests from stdin until it closes: `handle` answers each operation. `name` is
/// the binary's name for diagnostics on stderr.
pub fn serve(
    name: &str,
    mut handle: impl FnMut(ProviderOperation) -> Result<Value, Failure>,
) -> ExitCode {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    loop {
        let mut line = Vec::new();
        match (&mut input)
            .take(MAX_REQUEST_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
        {
            Ok(0) | Err(_) => return ExitCode::SUCCESS,
            Ok(_) => {}
        }
        let request: ProviderRequest = match serde_json::from_slice(&line) {
            Ok(request) => request,
            Err(error) => {
                eprintln!("{name}: invalid request line: {error}");
                return ExitCode::FAILURE;
            }
        };
        let outcome = if request.protocol_version == PROTOCOL_VERSION {
            handle(request.operation)
        } else {
            Err(("protocol_unsupported", format!("only {PROTOCOL_VERSION}")))
        };
        let response = match outcome {
            Ok(output) => {
                json!({"request_id": request.request_id, "status": "succeeded", "output": output})
            }
            Err((code, message)) => {
                json!({"request_id": request.request_id, "status": "failed", "error": {"code": code, "message": message}})
            }
        };
        let mut stdout = std::io::stdout().lock();
        if writeln!(stdout, "{response}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return ExitCode::FAILURE;
        }
    }
}

/// What the shared operations need of one environment a provider prepared or attached.
pub trait Environment {
    /// The environment directory on this machine: it holds the runtime server's socket
    /// ([`SOCKET`]) and `artifacts/`.
    fn dir(&self) -> &Path;
    /// Its `prepare` / `attach` / `inspect` output (see [`describe`]).
    fn describe(&self, id: &str) -> Value;
    /// Whether this process prepared it (`release` deletes it) rather than attached it.
    fn owned(&self) -> bool;
    /// Stops what runs in an owned environment before `release` deletes its directory.
    fn stop(&mut self) -> Result<(), Failure>;
}

/// The environment `id`, or `environment_not_found`.
pub fn find<'a, E>(environments: &'a HashMap<String, E>, id: &str) -> Result<&'a E, Failure> {
    environments
        .get(id)
        .ok_or_else(|| ("environment_not_found", format!("no environment `{id}`")))
}

/// Answers the operations every provider answers alike from the environment's directory:
/// `inspect`, `runtime_control` (the directory's socket), `collect_artifacts` (its
/// `artifacts/`) and `release` (an owned environment is stopped and its directory deleted;
/// an attached one only forgotten). Any other operation is the provider's own and fails
/// here with `operation_unsupported`.
pub fn answer_shared<E: Environment>(
    environments: &mut HashMap<String, E>,
    operation: ProviderOperation,
) -> Result<Value, Failure> {
    match operation {
        ProviderOperation::Release { environment_id } => {
            let Some(mut env) = environments.remove(&environment_id) else {
                return Err((
                    "environment_not_found",
                    format!("no environment `{environment_id}`"),
                ));
            };
            if env.owned() {
                env.stop()?;
                std::fs::remove_dir_all(env.dir()).map_err(|error| {
                    (
                        "release_failed",
                        format!("cannot delete `{}`: {error}", env.dir().display()),
                    )
                })?;
            }
            Ok(json!({"deleted": env.owned()}))
        }
        ProviderOperation::Inspect { environment_id } => {
            Ok(find(environments, &environment_id)?.describe(&environment_id))
        }
        ProviderOperation::RuntimeControl {
            environment_id,
            request,
        } => {
            let env = find(environments, &environment_id)?;
            runtime_control(&env.dir().join(SOCKET), &request)
        }
        ProviderOperation::CollectArtifacts {
            environment_id,
            paths,
        } => {
            let env = find(environments, &environment_id)?;
            collect(&env.dir().join("artifacts"), &paths)
        }
        other => Err((
            "operation_unsupported",
            format!("`{}` is not a shared operation", other.name()),
        )),
    }
}

/// `settings.root`: the directory new environments are created in (default: the system
/// temporary directory).
pub fn settings_root(settings: &JsonObject) -> Result<PathBuf, Failure> {
    match settings.get("root") {
        Some(Value::String(root)) => Ok(PathBuf::from(root)),
        Some(_) => Err((
            "invalid_settings",
            "`settings.root` must be a directory path".into(),
        )),
        None => Ok(std::env::temp_dir()),
    }
}

/// `resource.directory` of a reference.
pub fn reference_directory(reference: &EnvironmentReference) -> Result<PathBuf, Failure> {
    match reference.resource.get("directory") {
        Some(Value::String(dir)) => Ok(PathBuf::from(dir)),
        _ => Err((
            "invalid_reference",
            "`resource.directory` must be the environment directory".into(),
        )),
    }
}

/// Creates a new environment directory `fabric-env-<unique>` under `root` (mode 0700) with
/// `workspace/` and `artifacts/`; returns its id (the directory name) and path. Refuses a
/// root whose socket path would exceed the unix limit.
pub fn create_environment_dir(root: &Path) -> Result<(String, PathBuf), Failure> {
    let id = format!("fabric-env-{}", unique_suffix());
    let dir = root.join(&id);
    let socket = dir.join(SOCKET);
    if socket.as_os_str().len() >= SOCKET_PATH_MAX {
        return Err((
            "socket_path_too_long",
            format!(
                "the runtime server socket `{}` would exceed the {SOCKET_PATH_MAX}-byte unix socket path limit; choose a shorter `settings.root`",
                socket.display()
            ),
        ));
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.mode(0o700);
    for path in [dir.clone(), dir.join("workspace"), dir.join("artifacts")] {
        builder.create(&path).map_err(|error| {
            (
                "prepare_failed",
                format!("cannot create `{}`: {error}", path.display()),
            )
        })?;
    }
    Ok((id, dir))
}

/// The environment id of a directory (its name).
pub fn environment_id(dir: &Path) -> String {
    dir.file_name().map_or_else(
        || "environment".into(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// A `prepare` / `attach` / `inspect` output.
pub fn describe(
    provider: &str,
    id: &str,
    resource: JsonObject,
    workspace: String,
    artifacts: String,
    connection: JsonObject,
) -> Value {
    let environment = ProviderEnvironment {
        environment_id: id.to_owned(),
        reference: EnvironmentReference {
            provider: provider.into(),
            resource,
        },
        workspace: Some(workspace),
        artifacts: Some(artifacts),
        connection,
    };
    serde_json::to_value(environment).unwrap_or(Value::Null)
}

/// A unique suffix without a random-number dependency: pid, time and a counter.
fn unique_suffix() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{:x}{:x}{:x}",
        std::process::id(),
        nanos & 0xffff_ffff,
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Whether the runtime server on `socket` answers a server `check`.
pub fn server_check(socket: &Path) -> Result<(), String> {
    let mut client = Client::new(socket);
    client.set_timeout(Duration::from_secs(5));
    let request = validate_request(&json!({
        "interface_version": fabric_config::bridge::INTERFACE_VERSION,
        "operation": "check"
    }))
    .map_err(|failure| failure.message())?;
    let response = client.call(&request);
    match response.error {
        None => Ok(()),
        Some(error) => Err(format!("{}: {}", error.code, error.message)),
    }
}

/// Polls [`server_check`] until it passes, `alive` says the server is gone, or `deadline`
/// passes (the last check's message).
pub fn wait_for_server(
    socket: &Path,
    deadline: Duration,
    mut alive: impl FnMut() -> bool,
) -> Result<(), String> {
    let began = Instant::now();
    loop {
        match server_check(socket) {
            Ok(()) => return Ok(()),
            Err(message) if began.elapsed() > deadline || !alive() => return Err(message),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// A `runtime_control` output: the runtime server's response to one bridge request.
pub fn runtime_control(socket: &Path, request: &Value) -> Result<Value, Failure> {
    let request =
        validate_request(request).map_err(|failure| ("invalid_request", failure.message()))?;
    let mut client = Client::new(socket);
    client.set_timeout(Duration::from_secs(fabric_config::bridge::CALL_SECONDS));
    Ok(json!({"response": client.call(&request)}))
}

/// A `collect_artifacts` output: the files of `paths` under `root` (missing ones left out).
pub fn collect(root: &Path, paths: &[String]) -> Result<Value, Failure> {
    let mut files = Vec::new();
    for path in paths {
        let relative = Path::new(path);
        if path.is_empty()
            || relative
                .components()
                .any(|c| !matches!(c, Component::Normal(_)))
        {
            return Err((
                "invalid_path",
                format!("`{path}` is not a relative path inside the artifact root"),
            ));
        }
        let Ok(file) = std::fs::File::open(root.join(relative)) else {
            continue;
        };
        let mut bytes = Vec::new();
        file.take(ARTIFACT_READ_CAP)
            .read_to_end(&mut bytes)
            .map_err(|error| ("read_failed", format!("cannot read `{path}`: {error}")))?;
        files.push(ArtifactFile {
            path: path.clone(),
            content_hex: hex::encode(bytes),
        });
    }
    serde_json::to_value(ArtifactsOutput { files }).map_err(|error| ("internal", error.to_string()))
}

/// Splits an `exec` argv into program and arguments.
pub fn split_argv(argv: &[String]) -> Result<(&String, &[String]), Failure> {
    argv.split_first()
        .ok_or(("invalid_argv", "`argv` is empty".to_owned()))
}

/// An `exec` output: runs `command` (stdin closed), killing it after `timeout`.
pub fn exec(mut command: Command, timeout: Duration) -> Result<Value, Failure> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| {
            (
                "exec_failed",
                format!(
                    "cannot run `{}`: {error}",
                    command.get_program().to_string_lossy()
                ),
            )
        })?;
    let read = |stream: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(stream) = stream {
                let _ = stream.take(EXEC_READ_CAP).read_to_end(&mut bytes);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = read(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let stderr = read(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let began = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if began.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(error) => return Err(("exec_failed", error.to_string())),
        }
    };
    let output = ExecOutput {
        exit_code: status.and_then(|s| s.code()),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    };
    serde_json::to_value(output).map_err(|error| ("internal", error.to_string()))
}
