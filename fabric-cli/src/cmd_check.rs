//! `fabric check CONFIG [--base-dir DIR] [--level live|active|ready] [--timeout SECONDS]`:
//! starts a runtime, checks its health, prints the CheckReport JSON (pretty) and stops it.
//!
//! Exit codes: 0 the check passed; 1 it did not (`failed`, `unknown` or `unsupported`: the
//! report says why); 2 invalid config, level or timeout (`{"error": {...}}`, nothing
//! started); 3 the runtime could not be started (`{"error": {...}}`).

use std::process::ExitCode;

use fabric_config::health::{CheckRequest, DEFAULT_CHECK_TIMEOUT_SECONDS, HealthLevel};
use fabric_config::{ErrorInfo, Stage};
use fabric_host::Fabric;

use crate::common::{parse_level, read_config, runtime_options};
use crate::flags::{self, Seconds};
use crate::output::{EXIT_FAILED, EXIT_INVALID, EXIT_OK, exit_for, print_error, print_json};

/// Arguments of `fabric check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub config: crate::ConfigArgs,
    /// Level to check; earlier levels are checked first (live → active → ready).
    #[arg(long, default_value = "live", value_parser = parse_level)]
    pub level: HealthLevel,
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
    // Validate the request before starting anything (the runtime id is filled in later).
    let mut request = CheckRequest::runtime("runtime-pending").with_level(args.level);
    request.timeout_seconds = Some(args.timeout.0);
    if let Err(mut info) = request.validate() {
        if info.path() == Some("timeout_seconds") {
            info = ErrorInfo::new(Stage::Config, info.code.clone(), info.message.clone())
                .with_metadata("path", "--timeout");
        }
        return print_error(&info, EXIT_INVALID);
    }
    let options = match runtime_options(&args.config, Some(args.start_timeout)) {
        Ok(options) => options,
        Err(info) => return print_error(&info, EXIT_INVALID),
    };
    let fabric = Fabric::new();
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
        Ok(report) => {
            print_json(&serde_json::to_value(&report).unwrap_or_default());
            ExitCode::from(if report.passed() {
                EXIT_OK
            } else {
                EXIT_FAILED
            })
        }
        Err(error) => {
            let exit = exit_for(&error);
            print_error(&ErrorInfo::from(error), exit)
        }
    }
}
