//! The adapter conformance kit: every check of `fabric adapters check` (and of the bindings'
//! `check_adapter`), implemented once over the core's own planner and hosts.
//!
//! ```no_run
//! use fabric_conformance::{CheckOptions, check_adapter};
//!
//! let mut options = CheckOptions::default();
//! options.descriptor = Some("adapters/scripted/scripted.fabric-adapter.json".into());
//! let report = check_adapter(&options)?;
//! assert!(report.passed(), "{:?}", report.checks);
//! # Ok::<(), fabric_conformance::ConformanceError>(())
//! ```
//!
//! Groups run in order: `descriptor`, `configs`, `doctor`, `lifecycle`, `streaming`, `relay`. A group whose
//! prerequisite failed is reported as skipped with that reason. A check the kit cannot cause
//! from outside is skipped with its reason, never failed.

#![forbid(unsafe_code)]

mod configs;
mod configs_models;
mod descriptor;
mod doctor;
mod doctor_path;
mod error;
mod lifecycle;
mod partial_start;
mod recorder;
mod relay;
mod streaming;
mod streaming_turn;
pub mod stub_model;
mod target;

use std::path::PathBuf;
use std::time::Instant;

use fabric_config::FabricConfig;
use fabric_config::conformance::ConformanceReport;
use fabric_host::{Fabric, RunOptions};

pub use error::ConformanceError;
pub use lifecycle::STOP_DEADLINE;
use recorder::Recorder;
use stub_model::Script;

/// What to check and how.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// The adapter to check, as discovery finds it. Default: the one `descriptor` names.
    pub adapter_id: Option<String>,
    /// A descriptor file to check (its directory is searched first by discovery).
    pub descriptor: Option<PathBuf>,
    /// The accepted config to start from. Default: built from the descriptor.
    pub config: Option<FabricConfig>,
    /// Anchors the config's relative paths. Default: the current directory.
    pub base_dir: Option<PathBuf>,
    /// Run only these groups (`descriptor`, `configs`, `doctor`, `lifecycle`, `streaming`,
    /// `relay`).
    /// Default: all.
    pub only: Vec<String>,
    /// How long an adapter has to exit after `stop` or EOF (`lifecycle.stop`,
    /// `lifecycle.eof`). Default [`STOP_DEADLINE`] (2 s); an adapter whose interpreter
    /// tears down heavy libraries on a busy machine may need more.
    pub stop_deadline: Option<std::time::Duration>,
    /// Serve the config's models from stub model servers answering this script
    /// ([`stub_model`]): every `models.*.base_url` points at one, and
    /// `lifecycle.target_failure` / `lifecycle.malformed_target_output` run against stubs
    /// answering an error and a malformed body. The config must have models. Default: none
    /// (those checks are skipped).
    pub model_stub: Option<Script>,
}

impl CheckOptions {
    /// Takes a ConformanceRequest's `model_stub` (an inline script; `{}` answers every call
    /// "stub reply") and `stop_deadline_seconds`, checking both.
    pub fn with_request_stub_and_deadline(
        mut self,
        model_stub: Option<Script>,
        stop_deadline_seconds: Option<f64>,
    ) -> Result<CheckOptions, ConformanceError> {
        if let Some(script) = model_stub {
            self.model_stub = Some(
                script
                    .inline()
                    .map_err(|detail| ConformanceError::ModelStubScript { detail })?,
            );
        }
        if let Some(seconds) = stop_deadline_seconds {
            self.stop_deadline = Some(
                fabric_config::seconds::duration(
                    seconds,
                    fabric_config::seconds::MAX_TIMEOUT_SECONDS,
                )
                .ok_or(ConformanceError::StopDeadline)?,
            );
        }
        Ok(self)
    }
}

/// Runs the conformance checks and returns the report. Errors only for bad input: neither
/// an adapter id nor a descriptor, an unreadable descriptor file, an adapter discovery
/// does not find.
pub fn check_adapter(options: &CheckOptions) -> Result<ConformanceReport, ConformanceError> {
    let began = Instant::now();
    for group in &options.only {
        if !GROUPS.contains(&group.as_str()) {
            return Err(ConformanceError::UnknownGroup {
                group: group.clone(),
            });
        }
    }
    let subject = descriptor::Subject::resolve(options)?;
    let mut recorder = Recorder::new(&options.only);
    let fabric = Fabric::new();
    let mut run = RunOptions::with_base_dir(match &options.base_dir {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|_| ConformanceError::BaseDir)?,
    });
    run.runtime.stop_policy =
        lifecycle::stop_policy(options.stop_deadline.unwrap_or(STOP_DEADLINE));
    let mut config = match &options.config {
        Some(config) => subject.searching_named(config.clone()),
        None => subject.default_config()?,
    };
    let stubs = match &options.model_stub {
        Some(script) => Some(target::prepare(script, &mut config)?),
        None => None,
    };
    let context = Context {
        fabric,
        run,
        config,
        subject,
        stubs,
    };
    descriptor::run(&context, &mut recorder);
    configs::run(&context, &mut recorder);
    doctor::run(&context, &mut recorder);
    let package = lifecycle::run(&context, &mut recorder);
    target::run(&context, &mut recorder);
    partial_start::run(&context, &mut recorder);
    streaming::run(&context, &mut recorder);
    relay::run(&context, &mut recorder);
    let mut adapter = context.subject.summary(&recorder);
    if let Some((name, version)) = package {
        adapter.package = Some(name);
        adapter.version = Some(version);
    }
    let elapsed = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
    Ok(ConformanceReport::new(adapter, recorder.finish(), elapsed))
}

/// The groups, in the order they run.
pub const GROUPS: &[&str] = &[
    "descriptor",
    "configs",
    "doctor",
    "lifecycle",
    "streaming",
    "relay",
];

/// What every group reads.
pub(crate) struct Context {
    pub fabric: Fabric,
    pub run: RunOptions,
    pub config: FabricConfig,
    pub subject: descriptor::Subject,
    pub stubs: Option<target::Stubs>,
}

impl Context {
    /// Plans `config` as `fabric plan` would.
    pub fn plan(
        &self,
        config: &FabricConfig,
    ) -> Result<fabric_config::plan::RunPlan, fabric_config::ErrorInfo> {
        self.fabric
            .plan(config, &self.run)
            .map_err(fabric_config::ErrorInfo::from)
    }
}
