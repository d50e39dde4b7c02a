//! `fabric plan|doctor|inspect|adapters` (owned by the planning work).
//!
//! - `fabric plan CONFIG [--base-dir DIR]`: RunPlan JSON, exit 0; an invalid or incompatible
//!   config prints `{"error": {"code", "stage": "plan", "message", "path"}}` and exits 2.
//! - `fabric doctor CONFIG [--base-dir DIR] [--json]`: the DoctorReport listing every finding,
//!   config rule violations included — a readable summary on a terminal, JSON when piped or
//!   with `--json`; exit 2 when the config cannot be read or decoded or is invalid (the
//!   verdict `validate`, `plan` and `run` give), else 1 when a check failed, else 0.
//! - `fabric inspect CONFIG [--descriptor FILE] [--target-descriptor FILE]`: the capability
//!   profile JSON; exit 2 when admission fails. Without `--descriptor` (or
//!   `--target-descriptor`) the descriptors are found as `plan` finds them, so the profile
//!   always comes from a real descriptor; none found is `adapter_not_found` (exit 2).
//! - `fabric adapters [list] [--config CONFIG]`: every discovered adapter and target with id, kind,
//!   source, path and fingerprint; exit 2 when CONFIG cannot be read, decoded or validated.
//!
//! The base directory defaults to the config file's directory.

use fabric_config::codes;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use fabric_config::descriptor::{AdapterDescriptor, TargetDescriptor};
use fabric_config::{ErrorInfo, FabricConfig, Stage};
use fabric_plan::{DiscoveryOptions, PlanError};
use serde_json::{Value, json};

use crate::common::{Rules, base_dir, config_dir, read_config, read_config_with, verdict};
use crate::output::{EXIT_FAILED, EXIT_INVALID, EXIT_OK, print_error, print_json, print_line};

/// Arguments of `fabric plan`.
pub type PlanArgs = crate::ConfigArgs;

/// Arguments of `fabric doctor`.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub config: crate::ConfigArgs,
    /// Print the DoctorReport JSON even on a terminal (piped output is always JSON).
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `fabric inspect`.
#[derive(Debug, clap::Args)]
pub struct InspectArgs {
    #[command(flatten)]
    pub config: crate::ConfigArgs,
    /// Adapter descriptor JSON file. Default: the descriptor discovery finds for the config's
    /// adapter (as `plan` does).
    #[arg(long)]
    pub descriptor: Option<PathBuf>,
    /// Target descriptor JSON file for a registered workflow. Default: the one discovery
    /// finds for `workflow.target_id`.
    #[arg(long)]
    pub target_descriptor: Option<PathBuf>,
}

/// Arguments of `fabric adapters` (without a subcommand: `list`).
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct AdaptersArgs {
    #[command(subcommand)]
    pub command: Option<AdaptersCommand>,
    #[command(flatten)]
    pub list: ListArgs,
}

/// `fabric adapters list|check`.
#[derive(Debug, clap::Subcommand)]
pub enum AdaptersCommand {
    /// List discovered adapters with id, kind, source path and fingerprint (the default).
    List(ListArgs),
    /// Run the adapter conformance checks and print the report.
    Check(crate::cmd_adapters_check::Args),
}

/// Arguments of `fabric adapters list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Also search this config's `discovery.local_paths`.
    #[arg(long)]
    pub config: Option<PathBuf>,
}

fn plan_error(error: &PlanError) -> ErrorInfo {
    ErrorInfo::from(error)
}

fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

pub fn plan(args: PlanArgs) -> ExitCode {
    let config = match read_config(&args.config, Stage::Plan) {
        Ok(config) => config,
        Err(info) => return print_error(&info, EXIT_INVALID),
    };
    match verdict(&config, &base_dir(&args)) {
        Ok(plan) => {
            print_json(&to_json(&plan));
            ExitCode::from(EXIT_OK)
        }
        Err(info) => print_error(&info, EXIT_INVALID),
    }
}

/// `fabric doctor`: the report (readable on a terminal, JSON when piped or with `--json`);
/// exit 2 when the config is invalid — the verdict `validate`, `plan` and `run` give
/// ([`verdict`]) — else 1 when a check failed, else 0.
pub fn doctor(args: DoctorArgs) -> ExitCode {
    let human = !args.json && std::io::stdout().is_terminal();
    let config = match read_config_with(&args.config.config, Stage::Plan, Rules::Report) {
        Ok(config) => config,
        Err(info) if human => {
            print_line(&crate::human::error(&info));
            return ExitCode::from(EXIT_INVALID);
        }
        Err(info) => return print_error(&info, EXIT_INVALID),
    };
    let base = base_dir(&args.config);
    let report = fabric_plan::doctor(&config, &base);
    let exit = if verdict(&config, &base).is_err() {
        EXIT_INVALID
    } else if report.passed() {
        EXIT_OK
    } else {
        EXIT_FAILED
    };
    if human {
        print_line(&crate::human::doctor(&report));
    } else {
        print_json(&to_json(&report));
    }
    ExitCode::from(exit)
}

pub fn inspect(args: InspectArgs) -> ExitCode {
    let config = match read_config(&args.config.config, Stage::Plan) {
        Ok(config) => config,
        Err(info) => return print_error(&info, EXIT_INVALID),
    };
    let descriptor = match args
        .descriptor
        .as_deref()
        .map(fabric_plan::load_adapter_descriptor)
        .transpose()
    {
        Ok(descriptor) => descriptor,
        Err(error) => return print_error(&plan_error(&error), EXIT_INVALID),
    };
    let target = match args
        .target_descriptor
        .as_deref()
        .map(fabric_plan::load_target_descriptor)
        .transpose()
    {
        Ok(target) => target,
        Err(error) => return print_error(&plan_error(&error), EXIT_INVALID),
    };
    let (descriptor, target) = match descriptor {
        Some(descriptor) => (descriptor, target),
        None => match discovered(&config, &base_dir(&args.config), target) {
            Ok(found) => found,
            Err(info) => return print_error(&info, EXIT_INVALID),
        },
    };
    match fabric_plan::inspect(&config, Some(&descriptor), target.as_ref()) {
        Ok(profile) => {
            print_json(&to_json(&profile));
            ExitCode::from(EXIT_OK)
        }
        Err(error) => print_error(&plan_error(&error), EXIT_INVALID),
    }
}

/// The adapter descriptor (and, for a workflow without `--target-descriptor`, the target
/// descriptor) that discovery finds for `config`, as planning would.
fn discovered(
    config: &FabricConfig,
    base: &Path,
    target: Option<TargetDescriptor>,
) -> Result<(AdapterDescriptor, Option<TargetDescriptor>), ErrorInfo> {
    let local = config
        .discovery
        .as_ref()
        .map(|discovery| discovery.local_paths.clone())
        .unwrap_or_default();
    let base = fabric_plan::resolve_base_dir(base).map_err(|error| plan_error(&error))?;
    let base = std::fs::canonicalize(&base).unwrap_or(base);
    let catalog = fabric_plan::discovery::discover_all(&DiscoveryOptions::from_env(&local, &base))
        .map_err(|error| plan_error(&error))?;
    let target = match (&config.workflow, target) {
        (Some(workflow), None) => {
            let found = catalog.targets.get(&workflow.target_id).ok_or_else(|| {
                not_found(
                    codes::TARGET_NOT_FOUND,
                    "target",
                    &workflow.target_id,
                    "--target-descriptor",
                )
            })?;
            Some(found.loaded.descriptor.clone())
        }
        (_, target) => target,
    };
    // The planner's selector rule, so a target of another adapter is refused as `plan`
    // refuses it. A target descriptor without a workflow selects nothing (inspect refuses it).
    let adapter_id = config
        .selected_adapter(config.workflow.as_ref().and(target.as_ref()))
        .map_err(|error| plan_error(&PlanError::from(error)))?;
    let found = catalog.adapters.get(adapter_id).ok_or_else(|| {
        not_found(
            codes::ADAPTER_NOT_FOUND,
            "adapter",
            adapter_id,
            "--descriptor",
        )
    })?;
    Ok((found.loaded.descriptor.clone(), target))
}

fn not_found(code: &str, what: &str, id: &str, flag: &str) -> ErrorInfo {
    ErrorInfo::new(
        Stage::Plan,
        code,
        format!(
            "discovery found no {what} descriptor for `{id}`, so its capabilities are unknown; \
             pass {flag} FILE (`fabric adapters` lists what discovery finds)"
        ),
    )
}

pub fn adapters(args: AdaptersArgs) -> ExitCode {
    match args.command {
        None => list(args.list),
        Some(AdaptersCommand::List(list_args)) => list(list_args),
        Some(AdaptersCommand::Check(check)) => crate::cmd_adapters_check::run(check),
    }
}

fn list(args: ListArgs) -> ExitCode {
    let (local, base) = match &args.config {
        None => (Vec::new(), PathBuf::from(".")),
        Some(path) => match read_config(path, Stage::Plan) {
            Ok(config) => {
                let local = config
                    .discovery
                    .map(|discovery| discovery.local_paths)
                    .unwrap_or_default();
                (local, config_dir(path))
            }
            Err(info) => return print_error(&info, EXIT_INVALID),
        },
    };
    let base = match fabric_plan::resolve_base_dir(&base) {
        Ok(base) => std::fs::canonicalize(&base).unwrap_or(base),
        Err(error) => return print_error(&plan_error(&error), EXIT_INVALID),
    };
    let options = DiscoveryOptions::from_env(&local, &base);
    let catalog = match fabric_plan::discovery::discover_all(&options) {
        Ok(catalog) => catalog,
        Err(error) => return print_error(&plan_error(&error), EXIT_INVALID),
    };
    let adapters: Vec<Value> = catalog
        .adapters
        .values()
        .map(|found| {
            let descriptor = &found.loaded.descriptor;
            json!({
                "adapter_id": descriptor.adapter_id,
                "adapter_kind": descriptor.adapter_kind.as_str(),
                "source": found.provenance[0].source.as_str(),
                "path": found.provenance[0].path,
                "descriptor_sha256": found.loaded.sha256,
                "provenance": to_json(&found.provenance),
            })
        })
        .collect();
    let targets: Vec<Value> = catalog
        .targets
        .values()
        .map(|found| {
            let descriptor = &found.loaded.descriptor;
            json!({
                "id": descriptor.id,
                "adapter_id": descriptor.adapter_id,
                "type": descriptor.target_type.as_str(),
                "source": found.provenance[0].source.as_str(),
                "path": found.provenance[0].path,
                "descriptor_sha256": found.loaded.sha256,
            })
        })
        .collect();
    let invalid: Vec<Value> = catalog
        .invalid
        .iter()
        .map(|error| {
            let info = ErrorInfo::from(error);
            json!({
                "file": error.file().map(|file| file.display().to_string()),
                "code": info.code,
                "path": error.path(),
                "message": info.message,
            })
        })
        .collect();
    print_json(&json!({"adapters": adapters, "targets": targets, "invalid": invalid}));
    ExitCode::from(EXIT_OK)
}
