//! `fabric validate CONFIG [--base-dir DIR]`: decode and validate a FabricConfig JSON file and
//! print its canonical JSON (exit 0), or `{"error": {...}}` with stage `config` (exit 2).
//!
//! Unknown keys that upstream tolerates inside Fabric-owned sections (`environment`,
//! `discovery`, `telemetry`, `relay`) do not fail validation: each is reported on stderr as
//! `warning: <path>: ... (did you mean ...)`, and the canonical JSON keeps them.
//!
//! Relative paths are printed as written unless `--base-dir` is given, in which case they are
//! anchored at that directory (skills, workspace, artifacts, discovery paths, relay output).

use std::path::PathBuf;
use std::process::ExitCode;

use fabric_config::{ErrorInfo, Stage};

use crate::common::read_config;
use crate::output::{EXIT_INVALID, EXIT_OK, print_error, print_json};

/// Arguments of `fabric validate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Path to a FabricConfig JSON file.
    pub config: PathBuf,
    /// Anchor the printed config's relative paths at this directory. Default: print them as
    /// written.
    #[arg(long)]
    pub base_dir: Option<PathBuf>,
}

/// Runs `fabric validate`.
pub fn run(args: Args) -> ExitCode {
    let config = match read_config(&args.config, Stage::Config) {
        Ok(config) => config,
        Err(info) => return print_error(&info, EXIT_INVALID),
    };
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
