//! `fabric validate CONFIG [--base-dir DIR] [--config-only]`: decode and validate a
//! FabricConfig JSON file, plan it as `run` would, and print its canonical JSON (exit 0), or
//! `{"error": {...}}` (exit 2): stage `config` for a file that cannot be read or decoded or
//! breaks a config rule, stage `plan` for what planning rejects (no descriptor for the
//! adapter, a field the adapter cannot implement, with "did you mean ..." for a near-miss
//! extension key). `validate`, `plan`, `doctor` and `run` give one verdict
//! ([`crate::common::verdict`]). `--config-only` skips planning: the config's own rules
//! only, for a config written for an adapter that is not installed here.
//!
//! Unknown keys that upstream tolerates inside Fabric-owned sections (`environment`,
//! `discovery`, `telemetry`, `relay`) do not fail validation: each is reported on stderr as
//! `warning: <path>: ... (did you mean ...)`, and the canonical JSON keeps them.
//!
//! Relative paths are printed as written unless `--base-dir` is given, in which case they are
//! anchored at that directory (skills, workspace, artifacts, discovery paths, relay output).
//! Planning anchors them at `--base-dir`, else at the config file's directory.

use std::path::PathBuf;
use std::process::ExitCode;

use fabric_config::{ErrorInfo, Stage};

use crate::common::{config_dir, read_config, verdict};
use crate::output::{EXIT_INVALID, EXIT_OK, print_error, print_json};

/// Arguments of `fabric validate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Path to a FabricConfig JSON file.
    pub config: PathBuf,
    /// Anchor the printed config's relative paths at this directory (planning uses it too).
    /// Default: print them as written, and plan from the config file's directory.
    #[arg(long)]
    pub base_dir: Option<PathBuf>,
    /// Check the config's own rules only: no discovery, no adapter compatibility (for a
    /// config written for an adapter that is not installed here).
    #[arg(long)]
    pub config_only: bool,
}

/// Runs `fabric validate`.
pub fn run(args: Args) -> ExitCode {
    let config = match read_config(&args.config, Stage::Config) {
        Ok(config) => config,
        Err(info) => return print_error(&info, EXIT_INVALID),
    };
    if !args.config_only {
        let base_dir = args
            .base_dir
            .clone()
            .unwrap_or_else(|| config_dir(&args.config));
        if let Err(info) = verdict(&config, &base_dir) {
            return print_error(&info, EXIT_INVALID);
        }
    }
    let config = match &args.base_dir {
        Some(base_dir) => match fabric_plan::resolve_base_dir(base_dir) {
            // Anchored as given (a relative --base-dir prints relative paths).
            Ok(_) => config.resolve_paths(base_dir),
            Err(error) => {
                let mut info = ErrorInfo::from(error).with_metadata("path", "--base-dir");
                info.stage = Stage::Config;
                return print_error(&info, EXIT_INVALID);
            }
        },
        None => config,
    };
    for key in config.tolerated_unknown_keys() {
        eprintln!("warning: {}", key.message());
    }
    print_json(&config.to_canonical_value());
    ExitCode::from(EXIT_OK)
}
