//! `fabric validate CONFIG [--base-dir DIR]` (owned by the vocabulary work).

use std::process::ExitCode;

/// Arguments of `fabric validate`.
pub type Args = crate::ConfigArgs;

pub fn run(_args: Args) -> ExitCode {
    ExitCode::from(crate::output::EXIT_RUNTIME)
}
