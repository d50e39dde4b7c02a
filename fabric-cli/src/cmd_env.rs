//! `fabric env prepare CONFIG`, `fabric env attach CONFIG --reference FILE|-` and
//! `fabric env release CONFIG --reference FILE|-`.
//!
//! An environment handle is valid only in the process that made it, so each command is one
//! call that prints one JSON line and exits:
//!
//! - `prepare` prepares the config's environment and prints `{"environment":
//!   EnvironmentInfo, "reference": EnvironmentReference}`. The local provider's environment
//!   is its workspace directory: nothing keeps running, and the reference names that
//!   directory for any later `attach_environment` (in this CLI or an SDK).
//! - `attach` verifies the reference with the config's provider, prints `{"environment":
//!   EnvironmentInfo}` (`attached: true`, `ownership: "caller_owned"`) and detaches.
//! - `release` attaches to the reference and releases it, printing `{"released":
//!   EnvironmentInfo}`; the resource stays the caller's (local release never deletes).
//!
//! Exit codes: 0 ok; 2 invalid config, arguments or reference (also a reference to a
//! resource that does not exist); 3 the environment could not be prepared (a provider that
//! is not supported, file system).

use fabric_config::codes;
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use fabric_config::handles::EnvironmentReference;
use fabric_config::{ErrorInfo, Stage};
use fabric_host::{Fabric, HostError};
use serde_json::json;

use crate::common::{read_config, runtime_options};
use crate::output::{EXIT_INVALID, EXIT_OK, exit_for, print_error, print_line};

/// Largest reference document read from a file or stdin.
const MAX_REFERENCE_BYTES: u64 = 256 * 1024;

/// `fabric env` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Prepare the config's environment; print `{"environment", "reference"}`.
    Prepare(PrepareArgs),
    /// Verify an existing environment (`--reference`); print `{"environment"}` and detach.
    Attach(ReferenceArgs),
    /// Let go of an existing environment (`--reference`): Fabric detaches from it, and the
    /// environment stays its owner's; print `{"released"}`.
    Release(ReferenceArgs),
    /// Run a command in an existing environment (`--reference`); print an ExecResult.
    Exec(crate::cmd_env_ops::ExecArgs),
    /// Write a file beneath the environment's workspace; print `{"path"}`.
    Write(crate::cmd_env_ops::WriteArgs),
    /// Read a file beneath the environment's workspace; print a FileContent.
    Read(crate::cmd_env_ops::ReadArgs),
    /// List a directory beneath the environment's workspace; print a FileListing.
    List(crate::cmd_env_ops::ListArgs),
}

/// Arguments of `fabric env prepare`.
#[derive(Debug, clap::Args)]
pub struct PrepareArgs {
    #[command(flatten)]
    pub config: crate::ConfigArgs,
}

/// Arguments of `fabric env attach` and `fabric env release`.
#[derive(Debug, clap::Args)]
pub struct ReferenceArgs {
    #[command(flatten)]
    pub config: crate::ConfigArgs,
    /// An EnvironmentReference JSON file (`-`: stdin), for example the `reference` that
    /// `fabric env prepare` printed.
    #[arg(long, value_name = "FILE")]
    pub reference: PathBuf,
}

/// Runs `fabric env ...`.
pub fn run(command: Command) -> ExitCode {
    let outcome = match command {
        Command::Prepare(args) => prepare(&args),
        Command::Attach(args) => attach(&args, false),
        Command::Release(args) => attach(&args, true),
        Command::Exec(args) => crate::cmd_env_ops::exec(&args),
        Command::Write(args) => crate::cmd_env_ops::write(&args),
        Command::List(args) => crate::cmd_env_ops::list(&args),
        Command::Read(args) => match crate::cmd_env_ops::read(&args) {
            Ok(Some(line)) => Ok(line),
            Ok(None) => return ExitCode::from(EXIT_OK),
            Err(error) => Err(error),
        },
    };
    match outcome {
        Ok(line) => {
            print_line(&line);
            ExitCode::from(EXIT_OK)
        }
        Err((info, exit)) => print_error(&info, exit),
    }
}

pub(crate) type Outcome = Result<String, (ErrorInfo, u8)>;

pub(crate) fn host_error(error: HostError) -> (ErrorInfo, u8) {
    let exit = exit_for(&error);
    (ErrorInfo::from(error), exit)
}

fn prepare(args: &PrepareArgs) -> Outcome {
    let config = read_config(&args.config.config, Stage::Config).map_err(invalid)?;
    let options = runtime_options(&args.config, None).map_err(invalid)?;
    let fabric = Fabric::new();
    let environment = fabric
        .prepare_environment(&config, &options)
        .map_err(host_error)?;
    Ok(
        json!({"environment": environment.info(), "reference": environment.reference()})
            .to_string(),
    )
}

/// Attaches to `args`' reference, runs `operation` on the environment and detaches (also
/// when the operation failed).
pub(crate) fn with_attached(
    args: &ReferenceArgs,
    operation: impl FnOnce(&fabric_host::Environment) -> Result<String, HostError>,
) -> Outcome {
    let config = read_config(&args.config.config, Stage::Config).map_err(invalid)?;
    let options = runtime_options(&args.config, None).map_err(invalid)?;
    let reference = read_reference(&args.reference, "--reference").map_err(invalid)?;
    let fabric = Fabric::new();
    let environment = fabric
        .attach_environment(&config, &reference, &options)
        .map_err(host_error)?;
    let outcome = operation(&environment).map_err(host_error);
    let detached = fabric.release_environment(&environment).map_err(host_error);
    let line = outcome?;
    detached?;
    Ok(line)
}

fn attach(args: &ReferenceArgs, release: bool) -> Outcome {
    let config = read_config(&args.config.config, Stage::Config).map_err(invalid)?;
    let options = runtime_options(&args.config, None).map_err(invalid)?;
    let reference = read_reference(&args.reference, "--reference").map_err(invalid)?;
    let fabric = Fabric::new();
    let environment = fabric
        .attach_environment(&config, &reference, &options)
        .map_err(host_error)?;
    if release {
        fabric
            .release_environment(&environment)
            .map_err(host_error)?;
        return Ok(json!({"released": environment.info()}).to_string());
    }
    let info = environment.info();
    fabric
        .release_environment(&environment)
        .map_err(host_error)?;
    Ok(json!({"environment": info}).to_string())
}

pub(crate) fn invalid(info: ErrorInfo) -> (ErrorInfo, u8) {
    (info, EXIT_INVALID)
}

/// Reads the EnvironmentReference file (`-`: stdin) given with `flag` (errors name it).
pub(crate) fn read_reference(
    path: &PathBuf,
    flag: &str,
) -> Result<EnvironmentReference, ErrorInfo> {
    let unreadable = |reason: String| {
        ErrorInfo::new(
            Stage::Config,
            codes::INVALID_ENVIRONMENT_REFERENCE,
            format!("`{flag}`: {reason}"),
        )
        .with_metadata("path", flag)
    };
    let mut text = String::new();
    let read = if path.as_os_str() == "-" {
        std::io::stdin()
            .take(MAX_REFERENCE_BYTES + 1)
            .read_to_string(&mut text)
    } else {
        std::fs::File::open(path)
            .and_then(|file| file.take(MAX_REFERENCE_BYTES + 1).read_to_string(&mut text))
    };
    read.map_err(|error| unreadable(format!("cannot read `{}`: {error}", path.display())))?;
    if text.len() as u64 > MAX_REFERENCE_BYTES {
        return Err(unreadable(format!(
            "the reference exceeds {MAX_REFERENCE_BYTES} bytes"
        )));
    }
    serde_json::from_str(&text)
        .map_err(|error| unreadable(format!("not an EnvironmentReference: {error}")))
}
