//! `fabric check CONFIG [--base-dir DIR] [--level live|active|ready] [--timeout SECONDS]`:
//! starts a runtime, checks its health, prints the CheckReport JSON (pretty) and stops it.
//!
//! `fabric check CONFIG --environment REF [--runtime-id ID [--level L]] [--timeout S]`
//! starts nothing: it attaches to the existing environment the EnvironmentReference file
//! `REF` (`-`: stdin) names, checks its runtime server (no `--runtime-id`) or the runtime
//! `ID` running there (selected by the config's `metadata.name`), prints the report and
//! detaches (docs/health.md, "Checks in provider environments").
//!
//! Exit codes: 0 the check passed; 1 it did not (`failed`, `unknown` or `unsupported`: the
//! report says why); 2 invalid config, flags, level, timeout or reference
//! (`{"error": {...}}`, nothing started); 3 the runtime could not be started, or the
//! environment not attached (`{"error": {...}}`).

use std::process::ExitCode;

use std::path::PathBuf;

use fabric_config::codes;
use fabric_config::health::{
    CheckReport, CheckRequest, DEFAULT_CHECK_TIMEOUT_SECONDS, HealthLevel,
};
use fabric_config::{ErrorInfo, FabricConfig, Stage};
use fabric_host::{Fabric, HostError, RunOptions};

use crate::common::{parse_level, read_config, runtime_options};
use crate::flags::{self, Seconds};
use crate::output::{EXIT_FAILED, EXIT_INVALID, EXIT_OK, exit_for, print_error, print_json};

/// Arguments of `fabric check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub config: crate::ConfigArgs,
    /// Level to check; earlier levels are checked first (live → active → ready). Default:
    /// live.
    #[arg(long, value_parser = parse_level)]
    pub level: Option<HealthLevel>,
    /// Check inside the existing environment this EnvironmentReference file (`-`: stdin)
    /// names, instead of starting a runtime: its runtime server, or `--runtime-id`.
    #[arg(long, value_name = "REF")]
    pub environment: Option<PathBuf>,
    /// With `--environment`: the runtime to check there (started with the config's agent).
    #[arg(long, value_name = "ID", requires = "environment")]
    pub runtime_id: Option<String>,
    /// The whole check's budget in seconds (above 0, at most 86400).
    #[arg(
        long,
        value_name = "SECONDS",
        value_parser = flags::check_seconds,
        allow_hyphen_values = true,
        default_value_t = Seconds(DEFAULT_CHECK_TIMEOUT_SECONDS)
    )]
    pub timeout: Seconds,
    /// Seconds the adapter host may take to answer `start` (above 0, at most 10^9).
    #[arg(
        long,
        value_name = "SECONDS",
        value_parser = crate::flags::seconds,
        allow_hyphen_values = true,
        default_value_t = crate::flags::Seconds(crate::common::default_start_timeout())
    )]
    pub start_timeout: crate::flags::Seconds,
}

/// Runs `fabric check`.
pub fn run(args: Args) -> ExitCode {
    let config = match read_config(&args.config.config, Stage::Config) {
        Ok(config) => config,
        Err(info) => return print_error(&info, EXIT_INVALID),
    };
    let level = args.level.unwrap_or_default();
    // Validate the request before starting anything (the runtime id is filled in later).
    let mut request = match (&args.environment, &args.runtime_id) {
        (Some(_), None) if args.level.is_some() => {
            let info = ErrorInfo::new(
                Stage::Config,
                codes::INVALID_CHECK_REQUEST,
                "`--level` needs `--runtime-id`: a check of the environment's runtime server has no level",
            )
            .with_metadata("path", "--level");
            return print_error(&info, EXIT_INVALID);
        }
        (Some(_), None) => CheckRequest::server(),
        (_, Some(id)) => CheckRequest::runtime(id.clone()).with_level(level),
        (None, None) => CheckRequest::runtime("runtime-pending").with_level(level),
    };
    request.timeout_seconds = Some(args.timeout.0);
    if let Err(mut info) = request.validate() {
        let flag = match info.path() {
            Some("timeout_seconds") => Some("--timeout"),
            Some("runtime_id") => Some("--runtime-id"),
            _ => None,
        };
        if let Some(flag) = flag {
            info = ErrorInfo::new(Stage::Config, info.code.clone(), info.message.clone())
                .with_metadata("path", flag);
        }
        return print_error(&info, EXIT_INVALID);
    }
    let options = match runtime_options(&args.config, Some(args.start_timeout)) {
        Ok(options) => options,
        Err(info) => return print_error(&info, EXIT_INVALID),
    };
    let fabric = Fabric::new();
    if let Some(reference) = &args.environment {
        return match in_environment(&fabric, &config, &options, reference, &request) {
            Ok(report) => print_report(&report),
            Err((info, exit)) => print_error(&info, exit),
        };
    }
    let runtime = match fabric.start_runtime(&config, &options) {
        Ok(runtime) => runtime,
        Err(error) => {
            let exit = exit_for(&error);
            return print_error(&ErrorInfo::from(error), exit);
        }
    };
    request.runtime_id = Some(runtime.runtime_id().to_owned());
    let outcome = fabric.check(None, &request);
    runtime.stop();
    match outcome {
        Ok(report) => print_report(&report),
        Err(error) => {
            let exit = exit_for(&error);
            print_error(&ErrorInfo::from(error), exit)
        }
    }
}

fn print_report(report: &CheckReport) -> ExitCode {
    print_json(&serde_json::to_value(report).unwrap_or_default());
    ExitCode::from(if report.passed() {
        EXIT_OK
    } else {
        EXIT_FAILED
    })
}

/// Attaches to the environment `reference` names, checks through it and detaches.
fn in_environment(
    fabric: &Fabric,
    config: &FabricConfig,
    options: &RunOptions,
    reference: &PathBuf,
    request: &CheckRequest,
) -> Result<CheckReport, (ErrorInfo, u8)> {
    let host_error = |error: HostError| {
        let exit = exit_for(&error);
        (ErrorInfo::from(error), exit)
    };
    let reference = crate::cmd_env::read_reference(reference, "--environment")
        .map_err(|info| (info, EXIT_INVALID))?;
    let environment = fabric
        .attach_environment(config, &reference, options)
        .map_err(host_error)?;
    let report = fabric.check(Some(&environment), request);
    // Attached: release only detaches (the environment and its runtimes stay).
    let _ = fabric.release_environment(&environment);
    report.map_err(host_error)
}
