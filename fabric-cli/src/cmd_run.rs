//! `fabric run CONFIG (--input TEXT | --request FILE | --inputs FILE.jsonl)` (owned by the hosting work).

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `fabric run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub config: crate::ConfigArgs,
    /// Input text for one invocation.
    #[arg(long, conflicts_with_all = ["request", "inputs"])]
    pub input: Option<String>,
    /// RunRequest JSON file for one invocation.
    #[arg(long, conflicts_with = "inputs")]
    pub request: Option<PathBuf>,
    /// JSON-lines file: one runtime, one invocation per line, one RunResult per output line.
    #[arg(long)]
    pub inputs: Option<PathBuf>,
}

pub fn run(_args: Args) -> ExitCode {
    ExitCode::from(crate::output::EXIT_RUNTIME)
}
