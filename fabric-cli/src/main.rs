//! The `fabric` command-line tool.
//!
//! Exit codes for every command: 0 ok, 1 failed outcome, 2 invalid input or config,
//! 3 runtime failure before a result; `run` and `check` exit 130 on `SIGINT` and 143 on
//! `SIGTERM` after stopping their runtimes (see `interrupt.rs`). Machine-readable JSON goes
//! to stdout; errors are printed as `{"error": {"code", "stage", "message", "path"}}` on
//! stdout as well. `run` and `doctor` on a terminal print readable text instead (see
//! human.rs); `--json` keeps JSON.

#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod builtin;
mod capture_flags;
mod cmd_adapters_check;
mod cmd_batch;
mod cmd_check;
mod cmd_collector;
mod cmd_env;
mod cmd_env_ops;
mod cmd_export;
mod cmd_plan;
mod cmd_run;
mod cmd_schema;
mod cmd_service;
mod cmd_stub_model;
mod cmd_validate;
mod cmd_view;
mod common;
mod flags;
mod human;
mod interrupt;
mod output;
mod stream;

/// Configure, plan, run and observe NeMo Fabric agent harnesses.
#[derive(Debug, Parser)]
#[command(
    name = "fabric",
    version,
    about = "Configure, plan, run and observe NeMo Fabric agent harnesses.",
    after_help = "Exit codes: 0 ok; 1 a failed outcome (failed result, failed check); 2 invalid input or config; 3 a runtime failure before a result.\nOutput: JSON on stdout (errors as {\"error\": {...}}); `fabric run` and `fabric doctor` print readable text instead when stdout is a terminal (`--json` keeps JSON)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Validate a FabricConfig JSON file, plan it as `run` would, and print its canonical
    /// form (warnings on stderr); `--config-only` checks the config's own rules only.
    Validate(cmd_validate::Args),
    /// Print a generated JSON Schema (without NAME: list the available schemas).
    Schema(cmd_schema::Args),
    /// Resolve the adapter and print the RunPlan JSON.
    Plan(cmd_plan::PlanArgs),
    /// Run every preflight check without starting anything and print the report: readable
    /// on a terminal, the DoctorReport JSON when piped or with `--json`; exit 0 when no check
    /// failed (warnings allowed), 1 when one did, 2 when the config cannot be read or decoded
    /// or is invalid (the verdict `validate`, `plan` and `run` give).
    Doctor(cmd_plan::DoctorArgs),
    /// Report the capability profile of a config against its adapter's descriptor (the one
    /// discovery finds, or `--descriptor`).
    Inspect(cmd_plan::InspectArgs),
    /// List discovered adapters with id, kind, source path and fingerprint (`list`, the
    /// default), or check one against the adapter contract (`check`).
    Adapters(cmd_plan::AdaptersArgs),
    /// Start a runtime, invoke it, stop it and print the result: readable on a terminal, the
    /// RunResult JSON when piped or with `--json`.
    Run(cmd_run::Args),
    /// Run a data set of items (JSON lines) through the config: concurrent, retried,
    /// resumable; one result line per item in --output, then a summary.
    Batch(cmd_batch::Args),
    /// Start a runtime, health-check it, print the CheckReport JSON and stop it.
    Check(cmd_check::Args),
    /// The Relay ATOF collector (`fabric collector serve --listen 127.0.0.1:PORT`).
    Collector(cmd_collector::Args),
    /// A loopback stub model server (OpenAI Chat Completions and Responses, Anthropic
    /// Messages) answering scripted replies (`fabric stub-model serve --script FILE`).
    #[command(name = "stub-model")]
    StubModel(cmd_stub_model::Args),
    /// Shared services: `prepare` runs a service until signalled (printing the reference
    /// other processes attach with), `release PID` ends one.
    #[command(subcommand)]
    Service(cmd_service::Command),
    /// Environments: `prepare` prints an EnvironmentReference, `attach --reference` verifies
    /// one (caller owned), `release --reference` detaches it.
    #[command(subcommand)]
    Env(cmd_env::Command),
    /// Export results to another format (`fabric export gym RESULTS.jsonl --task-id T
    /// --rollout-id R`: NeMo Gym rollout observations).
    Export(cmd_export::Args),
    /// A local read-only web page over runs, batches and trajectories under the paths
    /// (`fabric view runs/ --listen 127.0.0.1:0`); prints the URL with its token.
    View(cmd_view::Args),
    /// Serve a compiled-in adapter's host protocol on stdin/stdout (what the bundled
    /// descriptor's runner calls; not for people).
    #[command(name = builtin::COMMAND, hide = true)]
    Adapter {
        /// The adapter.
        #[arg(value_enum)]
        name: builtin::Name,
    },
}

/// Arguments shared by commands that read a config file.
#[derive(Debug, clap::Args)]
pub struct ConfigArgs {
    /// Path to a FabricConfig JSON file.
    pub config: PathBuf,
    /// Directory that anchors the config's relative paths (skills, workspace, artifacts,
    /// discovery). Default: the config file's directory.
    #[arg(long)]
    pub base_dir: Option<PathBuf>,
}

/// How long `fabric run` waits at exit for the stops `run()` left to the background: the
/// default stop policy's whole escalation (grace, `SIGTERM` wait, `SIGKILL` wait).
const SETTLE: std::time::Duration = std::time::Duration::from_secs(4);

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return flags::report(error),
    };
    builtin::register();
    match cli.command {
        Command::Adapter { name } => builtin::serve(name),
        Command::Validate(args) => cmd_validate::run(args),
        Command::Schema(args) => cmd_schema::run(args),
        Command::Plan(args) => cmd_plan::plan(args),
        Command::Doctor(args) => cmd_plan::doctor(args),
        Command::Inspect(args) => cmd_plan::inspect(args),
        Command::Adapters(args) => cmd_plan::adapters(args),
        Command::Run(args) => {
            interrupt::install();
            let code = interrupt::finish(cmd_run::run(args));
            // The host's exit and reap, and its home's removal, finish after run() returned.
            fabric_host::settle(SETTLE);
            code
        }
        Command::Batch(args) => cmd_batch::run(args),
        Command::Collector(args) => cmd_collector::run(args),
        Command::StubModel(args) => cmd_stub_model::run(args),
        Command::Service(command) => cmd_service::run(command),
        Command::Env(command) => cmd_env::run(command),
        Command::Export(args) => cmd_export::run(args),
        Command::View(args) => cmd_view::run(args),
        Command::Check(args) => {
            interrupt::install();
            interrupt::finish(cmd_check::run(args))
        }
    }
}
