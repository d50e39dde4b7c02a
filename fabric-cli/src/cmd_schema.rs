//! `fabric schema [NAME]` (owned by the vocabulary work).

use std::process::ExitCode;

/// Arguments of `fabric schema`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Schema name, for example `sdk/agent`; omit to list them.
    pub name: Option<String>,
}

pub fn run(_args: Args) -> ExitCode {
    ExitCode::from(crate::output::EXIT_RUNTIME)
}
