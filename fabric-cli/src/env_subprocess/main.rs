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

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use fabric_config::provider::ProviderOperation;
use fabric_sandbox::kit::{self as provider_kit, Environment as _, Failure, SOCKET};
use serde_json::Value;

/// The provider name.
const PROVIDER: &str = "subprocess";
/// How long `prepare` waits for the new server to answer `check`.
const SERVER_READY: Duration = Duration::from_secs(20);
/// How long `release` waits for the server to exit after `SIGTERM`.
const SERVER_EXIT: Duration = Duration::from_secs(10);

struct Env {
    dir: PathBuf,
    owned: bool,
    server: Option<Child>,
}

fn main() -> ExitCode {
    let mut environments: HashMap<String, Env> = HashMap::new();
    provider_kit::serve("fabric-env-subprocess", |operation| {
        handle(&mut environments, operation)
    })
}

fn handle(
    environments: &mut HashMap<String, Env>,
    operation: ProviderOperation,
) -> Result<Value, Failure> {
    match operation {
        ProviderOperation::Prepare { settings, .. } => {
            let root = provider_kit::settings_root(&settings)?;
            let (id, env) = prepare(&root)?;
            let output = env.describe(&id);
            environments.insert(id, env);
            Ok(output)
        }
        ProviderOperation::Attach { reference, .. } => {
            let dir = provider_kit::reference_directory(&reference)?;
            if !dir.join("workspace").is_dir() {
                return Err((
                    "environment_not_found",
                    format!("`{}` is not a subprocess environment", dir.display()),
                ));
            }
            provider_kit::server_check(&dir.join(SOCKET))
                .map_err(|message| ("environment_not_found", message))?;
            let id = provider_kit::environment_id(&dir);
            let env = Env {
                dir,
                owned: false,
                server: None,
            };
            let output = env.describe(&id);
            environments.insert(id, env);
            Ok(output)
        }
        ProviderOperation::Exec {
            environment_id,
            argv,
            timeout_ms,
        } => {
            let env = provider_kit::find(environments, &environment_id)?;
            let (program, args) = provider_kit::split_argv(&argv)?;
            let mut command = Command::new(program);
            command.args(args).current_dir(env.dir.join("workspace"));
            provider_kit::exec(command, Duration::from_millis(timeout_ms))
        }
        shared => provider_kit::answer_shared(environments, shared),
    }
}

impl provider_kit::Environment for Env {
    fn dir(&self) -> &Path {
        &self.dir
    }

    fn owned(&self) -> bool {
        self.owned
    }

    fn stop(&mut self) -> Result<(), Failure> {
        if let Some(server) = self.server.as_mut() {
            stop_server(server);
        }
        Ok(())
    }

    fn describe(&self, id: &str) -> Value {
        let path = |p: PathBuf| Value::String(p.to_string_lossy().into_owned());
        provider_kit::describe(
            PROVIDER,
            id,
            [("directory".to_owned(), path(self.dir.clone()))].into(),
            self.dir.join("workspace").to_string_lossy().into_owned(),
            self.dir.join("artifacts").to_string_lossy().into_owned(),
            [
                ("socket".to_owned(), path(self.dir.join(SOCKET))),
                ("owned".to_owned(), Value::Bool(self.owned)),
            ]
            .into(),
        )
    }
}

fn prepare(root: &Path) -> Result<(String, Env), Failure> {
    let (id, dir) = provider_kit::create_environment_dir(root)?;
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
        .env("FABRIC_HOST_SOCKET", dir.join(SOCKET))
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
    match provider_kit::wait_for_server(&env.dir.join(SOCKET), SERVER_READY, || true) {
        Ok(()) => Ok((id, env)),
        Err(message) => {
            if let Some(server) = env.server.as_mut() {
                stop_server(server);
            }
            let _ = std::fs::remove_dir_all(&env.dir);
            Err((
                "prepare_failed",
                format!("the runtime server did not answer: {message}"),
            ))
        }
    }
}

/// `fabric-agent-ctl` next to this executable, else on `PATH`.
fn agent_ctl() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("fabric-agent-ctl")))
        .filter(|path| path.is_file())
        .unwrap_or_else(|| PathBuf::from("fabric-agent-ctl"))
}

fn stop_server(server: &mut Child) {
    let _ = i32::try_from(server.id())
        .map(|pid| fabric_reactor::sys::signal_process(pid, fabric_reactor::sys::SIGTERM));
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
