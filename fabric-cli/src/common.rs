//! Inputs every command shares: the config file, the directory that anchors its relative
//! paths, and the health-level argument.

use fabric_config::codes;
use std::path::{Path, PathBuf};

use fabric_config::health::HealthLevel;
use fabric_config::plan::RunPlan;
use fabric_config::{CallOptions, ErrorInfo, FabricConfig, Stage};
use fabric_host::RunOptions;
use fabric_plan::PlanOptions;

/// What [`read_config`] checks beyond decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rules {
    /// The first rule violation is the error (every command but `doctor`).
    Enforce,
    /// Rule violations are left to the caller's report (`doctor` lists them all as checks).
    Report,
}

/// Reads, decodes and (with [`Rules::Enforce`]) validates the config file at `path`: every
/// command that acts on a config sees only configs that pass every rule. Errors carry
/// `stage` (`config` for validate, run and check; `plan` for plan, doctor, inspect and
/// adapters) and name the file in `metadata.file`: `config_read_failed`, the decode error,
/// or the first rule violation (its code and path).
pub fn read_config(path: &Path, stage: Stage) -> Result<FabricConfig, ErrorInfo> {
    read_config_with(path, stage, Rules::Enforce)
}

/// [`read_config`] with an explicit rule policy.
pub fn read_config_with(
    path: &Path,
    stage: Stage,
    rules: Rules,
) -> Result<FabricConfig, ErrorInfo> {
    let file = || path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|error| {
        ErrorInfo::new(
            stage,
            codes::CONFIG_READ_FAILED,
            format!("cannot read config `{}`: {error}", path.display()),
        )
        .with_metadata("file", file())
    })?;
    if text.trim().is_empty() {
        return Err(ErrorInfo::new(
            stage,
            codes::INVALID_JSON,
            format!(
                "config `{}` is not valid JSON: the file is empty (expected a FabricConfig JSON object)",
                path.display()
            ),
        )
        .with_metadata("file", file())
        .with_metadata("line", 1)
        .with_metadata("column", 1));
    }
    let decoded = match rules {
        Rules::Enforce => FabricConfig::parse(&text),
        Rules::Report => FabricConfig::from_json_str(&text),
    };
    decoded.map_err(|error| {
        let mut info = ErrorInfo::from(error);
        info.stage = stage;
        info.with_metadata("file", file())
    })
}

/// The one verdict on a config that `validate`, `plan`, `doctor`, `run` and `check` give:
/// every config rule, then planning against the descriptors discovery finds from
/// `base_dir` (`fabric_plan::plan`, the call every start makes before anything runs, so a
/// config one command accepts is not rejected by another). Errors keep the planner's code,
/// path and hint ("did you mean `max_turns`?").
pub fn verdict(config: &FabricConfig, base_dir: &Path) -> Result<RunPlan, ErrorInfo> {
    fabric_plan::plan(config, base_dir, &PlanOptions::default()).map_err(ErrorInfo::from)
}

/// The directory of `config`, or `.` when it has none.
pub fn config_dir(config: &Path) -> PathBuf {
    config
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// `--base-dir`, else the config file's directory.
pub fn base_dir(args: &crate::ConfigArgs) -> PathBuf {
    match &args.base_dir {
        Some(dir) => dir.clone(),
        None => config_dir(&args.config),
    }
}

/// The options of a command that starts a runtime: `--base-dir` (else the config file's
/// directory) and `--start-timeout` (the C ABI's `start_timeout_seconds`; its range is
/// checked by [`crate::flags::seconds`], the same rule).
pub fn runtime_options(
    args: &crate::ConfigArgs,
    start_timeout: Option<crate::flags::Seconds>,
) -> Result<RunOptions, ErrorInfo> {
    let call = CallOptions {
        start_timeout_seconds: start_timeout.map(|seconds| seconds.0),
        ..CallOptions::default()
    };
    call.validate().map_err(|error| {
        let info = ErrorInfo::from(error);
        ErrorInfo::new(
            Stage::Config,
            info.code,
            "`--start-timeout`: must be a finite number of seconds greater than 0",
        )
        .with_metadata("path", "--start-timeout")
    })?;
    let mut options = RunOptions::from_call_options(&call);
    options.base_dir = Some(base_dir(args));
    Ok(options)
}

/// The default of `--start-timeout`: the host's own (`RuntimeOptions::host_timeout`), in
/// seconds, shown by `--help` as `[default: 90]`.
pub fn default_start_timeout() -> f64 {
    fabric_host::RuntimeOptions::default()
        .host_timeout
        .as_secs_f64()
}

/// Parses `live`, `active` or `ready` (`fabric check --level`, `fabric run --check-level`).
pub fn parse_level(text: &str) -> Result<HealthLevel, String> {
    HealthLevel::parse(text).ok_or_else(|| "expected one of: live, active, ready".to_owned())
}
