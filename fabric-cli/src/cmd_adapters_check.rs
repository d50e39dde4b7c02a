//! `fabric adapters check [ADAPTER_ID | --descriptor PATH] [--config CONFIG] [--json]
//! [--only GROUP] [--model-stub [--model-stub-script FILE]]`: the adapter conformance kit (`fabric-conformance`). A table on a
//! terminal, the ConformanceReport JSON when piped or with `--json`; exit 0 when no check
//! failed, 1 when one did, 2 for bad input.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use fabric_config::conformance::{ConformanceReport, ConformanceStatus};
use fabric_config::{ErrorInfo, Stage};
use fabric_conformance::CheckOptions;
use fabric_conformance::stub_model::Script;

use crate::cmd_stub_model;
use crate::common::{config_dir, read_config};
use crate::flags::{self, Seconds};
use crate::output::{EXIT_FAILED, EXIT_INVALID, EXIT_OK, print_error, print_json, print_line};

/// Arguments of `fabric adapters check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The adapter id to check, as discovery finds it.
    pub adapter_id: Option<String>,
    /// An adapter descriptor file to check (its directory is searched first).
    #[arg(long)]
    pub descriptor: Option<PathBuf>,
    /// An accepted FabricConfig to start from. Default: built from the descriptor (every
    /// setting at its default).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Print the ConformanceReport JSON even on a terminal (piped output is always JSON).
    #[arg(long)]
    pub json: bool,
    /// Run only this group (repeatable): descriptor, configs, doctor, lifecycle, streaming,
    /// relay.
    #[arg(long = "only", value_name = "GROUP")]
    pub only: Vec<String>,
    /// Serve the checks' model calls from a stub model server started here
    /// (docs/stub-model.md): every `models.*.base_url` of the config points at it. Needs a
    /// config with models (`--config`).
    #[arg(long)]
    pub model_stub: bool,
    /// Seconds an adapter has to exit after `stop` or EOF (lifecycle.stop, lifecycle.eof);
    /// above 0, at most 10^9. Default 2.
    #[arg(long, value_name = "SECONDS", value_parser = flags::seconds, allow_hyphen_values = true)]
    pub stop_deadline: Option<Seconds>,
    /// The stub's reply script (implies --model-stub). Default: every call answered
    /// "stub reply".
    #[arg(long, value_name = "FILE")]
    pub model_stub_script: Option<PathBuf>,
}

pub fn run(args: Args) -> ExitCode {
    let mut options = CheckOptions {
        adapter_id: args.adapter_id,
        descriptor: args.descriptor,
        only: args.only,
        stop_deadline: args.stop_deadline.map(|seconds| seconds.duration()),
        ..CheckOptions::default()
    };
    if let Some(path) = &args.config {
        match read_config(path, Stage::Config) {
            Ok(config) => {
                options.base_dir = Some(config_dir(path));
                options.config = Some(config);
            }
            Err(info) => return print_error(&info, EXIT_INVALID),
        }
    }
    if let Some(path) = &args.model_stub_script {
        match cmd_stub_model::read_script(path) {
            Ok(script) => options.model_stub = Some(script),
            Err(code) => return code,
        }
    } else if args.model_stub {
        options.model_stub = Some(Script::texts(&[]));
    }
    let report = match fabric_conformance::check_adapter(&options) {
        Ok(report) => report,
        Err(error) => return print_error(&ErrorInfo::from(error), EXIT_INVALID),
    };
    if !args.json && std::io::stdout().is_terminal() {
        print_line(&table(&report));
    } else {
        print_json(&serde_json::to_value(&report).unwrap_or_default());
    }
    ExitCode::from(if report.passed() {
        EXIT_OK
    } else {
        EXIT_FAILED
    })
}

/// The readable report: one line per check, then the summary.
fn table(report: &ConformanceReport) -> String {
    let width = report.checks.iter().map(|c| c.id.len()).max().unwrap_or(0);
    let mut out = format!(
        "{} ({})\n",
        report.adapter.adapter_id,
        report.adapter.descriptor_path.as_deref().unwrap_or("-")
    );
    for check in &report.checks {
        let status = match check.status {
            ConformanceStatus::Passed => "pass",
            ConformanceStatus::Failed => "FAIL",
            ConformanceStatus::Skipped => "skip",
        };
        out.push_str(&format!(
            "  {status}  {:width$}  {:>6} ms  {}\n",
            check.id, check.elapsed_ms, check.reason
        ));
        if check.status == ConformanceStatus::Failed && !check.evidence.is_null() {
            out.push_str(&format!("        evidence: {}\n", check.evidence));
        }
    }
    let summary = &report.summary;
    out.push_str(&format!(
        "{} passed, {} failed, {} skipped in {} ms",
        summary.passed, summary.failed, summary.skipped, summary.elapsed_ms
    ));
    out
}
