//! `fabric plan|doctor|inspect|adapters` (owned by the planning work).

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `fabric plan`.
pub type PlanArgs = crate::ConfigArgs;
/// Arguments of `fabric doctor`.
pub type DoctorArgs = crate::ConfigArgs;

/// Arguments of `fabric inspect`.
#[derive(Debug, clap::Args)]
pub struct InspectArgs {
    #[command(flatten)]
    pub config: crate::ConfigArgs,
    /// Adapter descriptor JSON file; omit for the no-descriptor profile.
    #[arg(long)]
    pub descriptor: Option<PathBuf>,
    /// Target descriptor JSON file for a registered workflow.
    #[arg(long)]
    pub target_descriptor: Option<PathBuf>,
}

/// Arguments of `fabric adapters`.
#[derive(Debug, clap::Args)]
pub struct AdaptersArgs {
    /// Also search this config's `discovery.local_paths`.
    #[arg(long)]
    pub config: Option<PathBuf>,
}

pub fn plan(_args: PlanArgs) -> ExitCode {
    ExitCode::from(crate::output::EXIT_RUNTIME)
}
pub fn doctor(_args: DoctorArgs) -> ExitCode {
    ExitCode::from(crate::output::EXIT_RUNTIME)
}
pub fn inspect(_args: InspectArgs) -> ExitCode {
    ExitCode::from(crate::output::EXIT_RUNTIME)
}
pub fn adapters(_args: AdaptersArgs) -> ExitCode {
    ExitCode::from(crate::output::EXIT_RUNTIME)
}
