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
//! in (default: the system temporary directory); `network: "none"`: the server in a network
//! namespace of its own (`netns.rs`), and so every `exec`, which the server then runs (the
//! kit's default: one bridge request on the environment's socket; without `network` this
//! process runs the `exec` of an environment it prepared itself). `resources` and other `network`
//! values are refused (`environment_setting_unsupported`): see `refuse_policy`. At release
//! of a prepared environment the server is reaped with `wait4` for its observation.
//!
//! The protocol, the environment table and the operations every provider answers alike are
//! the provider kit's (`fabric_sandbox::kit`); this file holds what is the subprocess
//! provider's own: starting, checking and stopping the server.

#![forbid(unsafe_code)]

mod netns;

use fabric_config::codes;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitCode, Stdio};
use std::time::{Duration, Instant};

use fabric_config::config::JsonObject;
use fabric_config::environment_ops::ExecRequest;
use fabric_config::gym::{SandboxObservation, SandboxOutcome, SandboxRole};
use fabric_config::handles::EnvironmentReference;
use fabric_config::provider::ExecOutput;
use fabric_reactor::sys;
use fabric_sandbox::kit::{self, Description, Failure, SOCKET};

/// How long `prepare` waits for the new server to answer `check`.
const SERVER_READY: Duration = Duration::from_secs(20);
/// How long `release` waits for the server to exit after `SIGTERM`.
const SERVER_EXIT: Duration = Duration::from_secs(10);

fn main() -> ExitCode {
    kit::run(&Subprocess)
}

/// The provider: environments are directories with their own `fabric-agent-ctl serve`.
struct Subprocess;

/// One environment: its directory and, when this process prepared it, its server.
struct Env {
    dir: PathBuf,
    server: Option<Child>,
    /// When `prepare` made it (the observation's wall time).
    since: Instant,
    /// How the server ended and what its tree used, once `stop` reaped it.
    reaped: Option<sys::Reaped>,
    /// A caller's `exec` runs in this process: an environment it prepared with the
    /// machine's network, whose processes run on this machine as this process does.
    exec_here: bool,
}

impl kit::Provider for Subprocess {
    type Env = Env;
    const PROVIDER: &'static str = "subprocess";
    const BINARY: &'static str = "fabric-env-subprocess";

    fn prepare(&self, settings: &JsonObject) -> Result<(String, Env), Failure> {
        let isolated = netns::read(settings)?;
        refuse_policy(settings)?;
        prepare(&kit::settings_root(settings)?, isolated)
    }

    fn attach(
        &self,
        reference: &EnvironmentReference,
        settings: &JsonObject,
    ) -> Result<(String, Env), Failure> {
        // Checked as `prepare` checks it; what an attached server runs in is its own.
        netns::read(settings)?;
        let dir = kit::reference_directory(reference)?;
        kit::require_workspace(&dir, Self::PROVIDER)?;
        kit::require_server(&dir)?;
        let id = kit::environment_id(&dir);
        let env = Env {
            dir,
            server: None,
            since: Instant::now(),
            reaped: None,
            exec_here: false,
        };
        Ok((id, env))
    }
}

impl kit::Environment for Env {
    fn dir(&self) -> &Path {
        &self.dir
    }

    /// Host paths: the environment's processes run on this machine.
    fn describe(&self, _id: &str) -> Description {
        Description {
            resource: JsonObject::new(),
            workspace: self.dir.join("workspace").to_string_lossy().into_owned(),
            artifacts: self.dir.join("artifacts").to_string_lossy().into_owned(),
            connection: JsonObject::new(),
        }
    }

    /// A caller's `exec`: run by this process in an environment it prepared with the
    /// machine's network (the same processes' view, one hop fewer: about a millisecond on a
    /// loaded machine); else by the runtime server (the kit's default), which runs it
    /// inside the namespaces of `network: "none"`, or as whoever prepared an attached one.
    fn exec(&self, request: &ExecRequest) -> Result<ExecOutput, Failure> {
        if !self.exec_here {
            return kit::server_exec(&self.dir.join(SOCKET), request);
        }
        let no_variables: [(&str, &str); 0] = [];
        kit::exec_beneath(&self.dir, Path::new("workspace"), request, no_variables)
    }

    /// The wall time since `prepare`; the rest is known once `stop` reaped the server.
    fn observe(&self) -> Option<SandboxObservation> {
        Some(SandboxObservation {
            role: SandboxRole::Agent,
            provider: Some("subprocess".to_owned()),
            sandbox_id: Some(kit::environment_id(&self.dir)),
            outcome: SandboxOutcome::Unknown,
            exit_code: None,
            wall_time_s: Some(self.since.elapsed().as_secs_f64()),
            cpu_time_s: None,
            peak_memory_mib: None,
            resource_usage_source: None,
            error_type: None,
        })
    }

    /// The server's `wait4` usage: CPU time of the server and every process of its tree it
    /// reaped (runtimes, adapters), the largest resident set among them, its exit code.
    fn observe_stopped(&mut self, observation: &mut SandboxObservation) {
        let Some(reaped) = self.reaped else {
            return;
        };
        observation.outcome = match (reaped.exit_code, reaped.signal) {
            (Some(0), _) => SandboxOutcome::Completed,
            (_, Some(_)) => SandboxOutcome::Cancelled,
            _ => SandboxOutcome::Failed,
        };
        observation.exit_code = reaped.exit_code.map(i64::from);
        observation.cpu_time_s = Some(reaped.cpu_seconds);
        observation.peak_memory_mib = Some(reaped.max_rss_kib as f64 / 1024.0);
        observation.resource_usage_source = Some("rusage:wait4(runtime server)".to_owned());
    }

    fn stop(&mut self) -> Result<(), Failure> {
        if let Some(server) = self.server.as_mut() {
            self.reaped = stop_server(server);
        }
        Ok(())
    }
}

/// Creates an environment directory under `root` and starts its server there; when the
/// server does not answer, stops it and deletes the directory.
fn prepare(root: &Path, isolated: bool) -> Result<(String, Env), Failure> {
    let (id, dir) = kit::create_environment_dir(root)?;
    let log = std::fs::File::create(dir.join("server.log")).map_err(|error| {
        (
            codes::PREPARE_FAILED,
            format!("cannot create the server log: {error}"),
        )
    })?;
    let log_err = log.try_clone().map_err(|error| {
        (
            codes::PREPARE_FAILED,
            format!("cannot create the server log: {error}"),
        )
    })?;
    let server = netns::command(isolated, &agent_ctl())
        .arg("serve")
        .env("FABRIC_HOST_SOCKET", dir.join(SOCKET))
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .spawn()
        .map_err(|error| {
            (
                codes::PREPARE_FAILED,
                format!("cannot start fabric-agent-ctl serve: {error}"),
            )
        })?;
    let _ = std::fs::write(dir.join("server.pid"), server.id().to_string());
    let mut env = Env {
        dir,
        server: Some(server),
        since: Instant::now(),
        reaped: None,
        exec_here: !isolated,
    };
    match kit::wait_for_server(&env.dir.join(SOCKET), SERVER_READY, || true) {
        Ok(()) => Ok((id, env)),
        Err(message) => {
            if let Some(server) = env.server.as_mut() {
                stop_server(server);
            }
            let _ = std::fs::remove_dir_all(&env.dir);
            Err((
                codes::PREPARE_FAILED,
                format!("the runtime server did not answer: {message}"),
            ))
        }
    }
}

/// Refuses the policy settings this provider cannot apply (`environment_setting_unsupported`
/// naming the setting): `resources` (its environments get no cgroup of their own; `network`
/// is `netns.rs`'s).
fn refuse_policy(settings: &JsonObject) -> Result<(), Failure> {
    for (key, reason) in [(
        "resources",
        "its environments run in the caller's cgroup (no delegated cgroup v2 sub-group is used)",
    )] {
        if settings.contains_key(key) {
            return Err((
                codes::ENVIRONMENT_SETTING_UNSUPPORTED,
                format!(
                    "`settings.{key}` is not supported by the subprocess provider: {reason}; use the container provider"
                ),
            ));
        }
    }
    Ok(())
}

/// `fabric-agent-ctl` next to this executable, else on `PATH`.
fn agent_ctl() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("fabric-agent-ctl")))
        .filter(|path| path.is_file())
        .unwrap_or_else(|| PathBuf::from("fabric-agent-ctl"))
}

/// `SIGTERM`, then `SIGKILL` after [`SERVER_EXIT`]; reaps the server with `wait4` (its
/// status and usage, `None` when that failed).
fn stop_server(server: &mut Child) -> Option<sys::Reaped> {
    let Ok(pid) = i32::try_from(server.id()) else {
        let _ = server.kill();
        let _ = server.wait();
        return None;
    };
    let _ = sys::signal_process(pid, sys::SIGTERM);
    let began = Instant::now();
    while began.elapsed() < SERVER_EXIT && !sys::has_exited(pid).unwrap_or(true) {
        std::thread::sleep(Duration::from_millis(20));
    }
    if !sys::has_exited(pid).unwrap_or(true) {
        let _ = server.kill();
    }
    sys::reap_with_usage(pid).ok()
}
