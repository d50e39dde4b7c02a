//! `fabric-env-subprocess`: the `subprocess` environment provider (docs/sandbox.md,
//! "The subprocess provider").
//!
//! Speaks `fabric.environment-provider.v1alpha1` on stdio: one request line in, one response
//! line out. An environment is a directory on this machine (mode 0700) holding `workspace/`,
//! `artifacts/` and the socket of its own `fabric-agent-ctl serve` process, started in it by
//! `prepare` (the server's base directory is the environment directory). `attach` verifies
//! a directory whose server answers `check`; `release` stops the server and deletes the
//! directory of an environment this process prepared, and only forgets an attached one.
//! When stdin closes the provider exits and leaves every environment as it is.
//!
//! Settings (`environment.settings`): `root`, the directory new environments are created
//! in (default: the system temporary directory).

#[path = "../sys.rs"]
mod sys;

use std::collections::HashMap;
use std::io::{BufRead, Read, Write};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Component, Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use fabric_config::bridge::validate_request;
use fabric_config::handles::EnvironmentReference;
use fabric_config::provider::{
    ArtifactFile, ArtifactsOutput, ExecOutput, MAX_REQUEST_BYTES, PROTOCOL_VERSION,
    ProviderEnvironment, ProviderOperation, ProviderRequest,
};
use fabric_host::bridge::Client;
use serde_json::{Value, json};

/// The provider name.
const PROVIDER: &str = "subprocess";
/// How long `prepare` waits for the new server to answer `check`.
const SERVER_READY: Duration = Duration::from_secs(20);
/// How long `release` waits for the server to exit after `SIGTERM`.
const SERVER_EXIT: Duration = Duration::from_secs(10);
/// Bytes of one artifact file read (the core's limit is lower: a larger file reaches it
/// and is refused there, never truncated here).
const ARTIFACT_READ_CAP: u64 = 1024 * 1024;
/// Longest unix socket path (`sun_path`, NUL included).
const SOCKET_PATH_MAX: usize = 108;
/// Bytes of one exec stream read (above the core's 3 MiB limit, for the same reason).
const EXEC_READ_CAP: u64 = 4 * 1024 * 1024;

struct Env {
    dir: PathBuf,
    owned: bool,
    server: Option<Child>,
}

type Failure = (&'static str, String);

fn main() -> ExitCode {
    let mut environments: HashMap<String, Env> = HashMap::new();
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
                eprintln!("fabric-env-subprocess: invalid request line: {error}");
                return ExitCode::FAILURE;
            }
        };
        let outcome = if request.protocol_version == PROTOCOL_VERSION {
            handle(&mut environments, request.operation)
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

fn handle(
    environments: &mut HashMap<String, Env>,
    operation: ProviderOperation,
) -> Result<Value, Failure> {
    match operation {
        ProviderOperation::Prepare { settings, .. } => {
            let root = match settings.get("root") {
                Some(Value::String(root)) => PathBuf::from(root),
                Some(_) => {
                    return Err((
                        "invalid_settings",
                        "`settings.root` must be a directory path".into(),
                    ));
                }
                None => std::env::temp_dir(),
            };
            let (id, env) = prepare(&root)?;
            let output = describe(&id, &env);
            environments.insert(id, env);
            Ok(output)
        }
        ProviderOperation::Attach { reference, .. } => {
            let dir = match reference.resource.get("directory") {
                Some(Value::String(dir)) => PathBuf::from(dir),
                _ => {
                    return Err((
                        "invalid_reference",
                        "`resource.directory` must be the environment directory".into(),
                    ));
                }
            };
            if !dir.join("workspace").is_dir() {
                return Err((
                    "environment_not_found",
                    format!("`{}` is not a subprocess environment", dir.display()),
                ));
            }
            server_check(&dir).map_err(|message| ("environment_not_found", message))?;
            let id = environment_id(&dir);
            let env = Env {
                dir,
                owned: false,
                server: None,
            };
            let output = describe(&id, &env);
            environments.insert(id, env);
            Ok(output)
        }
        ProviderOperation::Inspect { environment_id } => {
            let env = find(environments, &environment_id)?;
            Ok(describe(&environment_id, env))
        }
        ProviderOperation::RuntimeControl {
            environment_id,
            request,
        } => {
            let env = find(environments, &environment_id)?;
            let request = validate_request(&request)
                .map_err(|failure| ("invalid_request", failure.message()))?;
            let mut client = Client::new(env.dir.join("fabric.sock"));
            client.set_timeout(Duration::from_secs(fabric_config::bridge::CALL_SECONDS));
            Ok(json!({"response": client.call(&request)}))
        }
        ProviderOperation::CollectArtifacts {
            environment_id,
            paths,
        } => {
            let env = find(environments, &environment_id)?;
            collect(&env.dir.join("artifacts"), &paths)
        }
        ProviderOperation::Exec {
            environment_id,
            argv,
            timeout_ms,
        } => {
            let env = find(environments, &environment_id)?;
            exec(
                &env.dir.join("workspace"),
                &argv,
                Duration::from_millis(timeout_ms),
            )
        }
        ProviderOperation::Release { environment_id } => {
            let Some(mut env) = environments.remove(&environment_id) else {
                return Err((
                    "environment_not_found",
                    format!("no environment `{environment_id}`"),
                ));
            };
            if env.owned {
                if let Some(server) = env.server.as_mut() {
                    stop_server(server);
                }
                std::fs::remove_dir_all(&env.dir).map_err(|error| {
                    (
                        "release_failed",
                        format!("cannot delete `{}`: {error}", env.dir.display()),
                    )
                })?;
            }
            Ok(json!({"deleted": env.owned}))
        }
    }
}

fn find<'a>(environments: &'a HashMap<String, Env>, id: &str) -> Result<&'a Env, Failure> {
    environments
        .get(id)
        .ok_or_else(|| ("environment_not_found", format!("no environment `{id}`")))
}

fn environment_id(dir: &Path) -> String {
    dir.file_name().map_or_else(
        || "environment".into(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn describe(id: &str, env: &Env) -> Value {
    let reference = EnvironmentReference {
        provider: PROVIDER.into(),
        resource: [(
            "directory".to_owned(),
            Value::String(env.dir.to_string_lossy().into_owned()),
        )]
        .into(),
    };
    let environment = ProviderEnvironment {
        environment_id: id.to_owned(),
        reference,
        workspace: Some(env.dir.join("workspace").to_string_lossy().into_owned()),
        artifacts: Some(env.dir.join("artifacts").to_string_lossy().into_owned()),
        connection: [
            (
                "socket".to_owned(),
                Value::String(env.dir.join("fabric.sock").to_string_lossy().into_owned()),
            ),
            ("owned".to_owned(), Value::Bool(env.owned)),
        ]
        .into(),
    };
    serde_json::to_value(environment).unwrap_or(Value::Null)
}

fn prepare(root: &Path) -> Result<(String, Env), Failure> {
    let id = format!("fabric-env-{}", uuid_like());
    let dir = root.join(&id);
    let socket = dir.join("fabric.sock");
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
    let log = std::fs::File::create(dir.join("server.log")).map_err(|error| {
        (
            "prepare_failed",
            format!("cannot create the server log: {error}"),
        )
    })?;
    let log_err = log.try_clone().map_err(|error| {
        (
            "prepare_failed",
            format!("cannot create the server log: {error}"),
        )
    })?;
    let server = Command::new(agent_ctl())
        .arg("serve")
        .env("FABRIC_HOST_SOCKET", dir.join("fabric.sock"))
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .spawn()
        .map_err(|error| {
            (
                "prepare_failed",
                format!("cannot start fabric-agent-ctl serve: {error}"),
            )
        })?;
    let _ = std::fs::write(dir.join("server.pid"), server.id().to_string());
    let mut env = Env {
        dir,
        owned: true,
        server: Some(server),
    };
    let began = Instant::now();
    loop {
        match server_check(&env.dir) {
            Ok(()) => return Ok((id, env)),
            Err(message) if began.elapsed() > SERVER_READY => {
                if let Some(server) = env.server.as_mut() {
                    stop_server(server);
                }
                let _ = std::fs::remove_dir_all(&env.dir);
                return Err((
                    "prepare_failed",
                    format!("the runtime server did not answer: {message}"),
                ));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// A unique suffix without a random-number dependency: pid, time and a counter.
fn uuid_like() -> String {
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

/// `fabric-agent-ctl` next to this executable, else on `PATH`.
fn agent_ctl() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("fabric-agent-ctl")))
        .filter(|path| path.is_file())
        .unwrap_or_else(|| PathBuf::from("fabric-agent-ctl"))
}

fn server_check(dir: &Path) -> Result<(), String> {
    let mut client = Client::new(dir.join("fabric.sock"));
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

fn stop_server(server: &mut Child) {
    let _ = sys::terminate(server.id());
    let began = Instant::now();
    while began.elapsed() < SERVER_EXIT {
        if let Ok(Some(_)) = server.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = server.kill();
    let _ = server.wait();
}

fn collect(root: &Path, paths: &[String]) -> Result<Value, Failure> {
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

fn exec(cwd: &Path, argv: &[String], timeout: Duration) -> Result<Value, Failure> {
    let (program, args) = argv
        .split_first()
        .ok_or(("invalid_argv", "`argv` is empty".to_owned()))?;
    let mut child = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| ("exec_failed", format!("cannot run `{program}`: {error}")))?;
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
