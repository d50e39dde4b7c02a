//! `fabric service prepare CONFIG` and `fabric service release PID`.
//!
//! A service's handle is valid only in the process that created it, and its adapter host
//! is that process's child, so a service cannot outlive the command that prepared it.
//! `prepare` therefore runs until it is told to stop: it prints one JSON line
//! `{"pid", "service": ServiceInfo, "reference": ServiceReference}` as soon as the service
//! is active — other processes attach to it with `attach_service(config, reference)` — and
//! waits for `SIGINT` or `SIGTERM`; then it releases the service (the host gets `stop`),
//! prints `{"released": ServiceInfo}` and exits 0. `release PID` sends `SIGTERM` to such a
//! `prepare` process (only to a `fabric service prepare` of this same executable) and waits
//! until it has exited.
//!
//! Exit codes: 0 ok; 2 invalid config or arguments, or PID is not a `fabric service
//! prepare` process; 3 the service could not be started, or did not end in time.

use fabric_config::codes;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use fabric_config::service::ServiceReference;
use fabric_config::{ErrorInfo, Stage};
use fabric_host::Fabric;
use serde_json::json;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::common::{read_config, runtime_options};
use crate::output::{EXIT_INVALID, EXIT_OK, EXIT_RUNTIME, exit_for, print_error, print_line};

/// How long `release` waits for the `prepare` process to exit.
const RELEASE_WAIT: Duration = Duration::from_secs(15);

/// `fabric service` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Start a Fabric-owned shared service, print `{"pid", "service", "reference"}` and run
    /// until SIGINT/SIGTERM (or `fabric service release PID`), then release it.
    Prepare(PrepareArgs),
    /// Release the service of a running `fabric service prepare` process.
    Release(ReleaseArgs),
}

/// Arguments of `fabric service prepare`.
#[derive(Debug, clap::Args)]
pub struct PrepareArgs {
    #[command(flatten)]
    pub config: crate::ConfigArgs,
    /// Seconds the service host may take to answer `start` (above 0, at most 10^9).
    #[arg(
        long,
        value_name = "SECONDS",
        value_parser = crate::flags::seconds,
        allow_hyphen_values = true,
        default_value_t = crate::flags::Seconds(crate::common::default_start_timeout())
    )]
    pub start_timeout: crate::flags::Seconds,
}

/// Arguments of `fabric service release`.
#[derive(Debug, clap::Args)]
pub struct ReleaseArgs {
    /// The `pid` that `fabric service prepare` printed.
    #[arg(value_name = "PID", value_parser = crate::flags::pid, allow_hyphen_values = true)]
    pub pid: crate::flags::Pid,
}

/// Runs `fabric service ...`.
pub fn run(command: Command) -> ExitCode {
    match command {
        Command::Prepare(args) => prepare(args),
        Command::Release(args) => release(args),
    }
}

fn prepare(args: PrepareArgs) -> ExitCode {
    let config = match read_config(&args.config.config, Stage::Config) {
        Ok(config) => config,
        Err(info) => return print_error(&info, EXIT_INVALID),
    };
    let options = match runtime_options(&args.config, Some(args.start_timeout)) {
        Ok(options) => options,
        Err(info) => return print_error(&info, EXIT_INVALID),
    };
    // Installed before the service starts: a signal during start is seen afterwards.
    let mut signals = match Signals::new([SIGINT, SIGTERM]) {
        Ok(signals) => signals,
        Err(error) => {
            let info = ErrorInfo::new(
                Stage::Prepare,
                codes::SIGNAL_HANDLER_FAILED,
                format!("cannot handle SIGINT/SIGTERM: {error}"),
            );
            return print_error(&info, EXIT_RUNTIME);
        }
    };
    let service = match Fabric::new().prepare_service(&config, &options) {
        Ok(service) => service,
        Err(error) => {
            let exit = exit_for(&error);
            return print_error(&ErrorInfo::from(error), exit);
        }
    };
    let handle = service.handle();
    let reference = ServiceReference {
        adapter_id: handle.adapter_id.clone(),
        service_type: handle.service_type.clone(),
        connection: handle.connection.clone(),
        metadata: handle.metadata.clone(),
    };
    print_line(
        &json!({"pid": std::process::id(), "service": service.info(), "reference": reference})
            .to_string(),
    );
    let _ = signals.forever().next();
    match service.release() {
        Ok(info) => {
            print_line(&json!({"released": info}).to_string());
            ExitCode::from(EXIT_OK)
        }
        Err(error) => {
            let exit = exit_for(&error);
            print_error(&ErrorInfo::from(error), exit)
        }
    }
}

/// Whether `pid` runs `fabric service prepare` of this executable.
fn is_prepare_process(pid: u32) -> bool {
    let proc = PathBuf::from(format!("/proc/{pid}"));
    let same_exe = match (
        std::fs::read_link(proc.join("exe")),
        std::env::current_exe(),
    ) {
        (Ok(theirs), Ok(ours)) => theirs == ours,
        _ => false,
    };
    let args = std::fs::read(proc.join("cmdline")).unwrap_or_default();
    let args: Vec<&[u8]> = args.split(|b| *b == 0).collect();
    same_exe
        && args
            .windows(2)
            .any(|pair| pair[0] == b"service" && pair[1] == b"prepare")
}

fn release(args: ReleaseArgs) -> ExitCode {
    let pid = args.pid.0;
    if !is_prepare_process(pid) {
        let info = ErrorInfo::new(
            Stage::Stop,
            codes::INVALID_ARGUMENT,
            format!("process {pid} is not a running `fabric service prepare`"),
        )
        .with_metadata("path", "pid");
        return print_error(&info, EXIT_INVALID);
    }
    let signalled = i32::try_from(pid)
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))
        .and_then(|pid| fabric_reactor::sys::signal_process(pid, fabric_reactor::sys::SIGTERM));
    if let Err(error) = signalled {
        let info = ErrorInfo::new(
            Stage::Stop,
            codes::INVALID_ARGUMENT,
            format!("cannot signal process {pid}: {error}"),
        )
        .with_metadata("path", "pid");
        return print_error(&info, EXIT_INVALID);
    }
    let began = Instant::now();
    while is_prepare_process(pid) {
        if began.elapsed() > RELEASE_WAIT {
            let info = ErrorInfo::new(
                Stage::Stop,
                codes::TIMEOUT,
                format!("`fabric service prepare` (pid {pid}) did not exit in time"),
            );
            return print_error(&info, EXIT_RUNTIME);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    print_line(&json!({"released_pid": pid}).to_string());
    ExitCode::from(EXIT_OK)
}
