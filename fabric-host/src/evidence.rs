//! Software evidence of a runtime (`RunResult.execution`), composed once at start by
//! `fabric-provenance`: the core's snapshot, the caller's `provenance.reports`, what the core
//! observed of a process adapter's executable, and the adapter host's own report (the
//! `execution` member of its `start` output; none = a `guest_sdk` gap).

use fabric_config::agent::StartProvenance;
use fabric_config::descriptor::AdapterKind;
use fabric_config::evidence::ExecutionEvidence;
use fabric_config::options::BindingIdentity;
use fabric_config::plan::RunPlan;
use fabric_provenance::{GuestReport, Parts};
use serde_json::Value;

use crate::launch::LaunchCommand;

/// The evidence plan of one runtime start: `None` when `provenance.enabled` is false (no
/// collector work on either side).
#[derive(Debug)]
pub(crate) struct EvidencePlan {
    core: fabric_config::evidence::SoftwareInventory,
    executable: Option<String>,
}

impl EvidencePlan {
    /// Takes (or reuses) the core's snapshot when evidence is enabled.
    pub(crate) fn new(
        plan: &RunPlan,
        command: &LaunchCommand,
        binding: Option<&BindingIdentity>,
    ) -> Option<EvidencePlan> {
        if !plan.config.provenance_enabled() {
            return None;
        }
        let process = plan
            .adapter_descriptor
            .as_ref()
            .is_some_and(|d| d.descriptor.adapter_kind == AdapterKind::Process);
        Some(EvidencePlan {
            core: fabric_provenance::core_inventory(binding),
            executable: process.then(|| command.program.to_string_lossy().into_owned()),
        })
    }

    /// What the `start` payload tells the adapter host.
    pub(crate) fn start_control(plan: Option<&EvidencePlan>) -> StartProvenance {
        StartProvenance {
            enabled: plan.is_some(),
        }
    }

    /// Composes the runtime's evidence from the host's `start` output.
    pub(crate) fn compose(self, plan: &RunPlan, start_output: &Value) -> ExecutionEvidence {
        let guest = match start_output.get("execution") {
            Some(report) => GuestReport::Reported(report.clone()),
            None => GuestReport::Missing,
        };
        let caller = plan
            .config
            .provenance
            .as_ref()
            .and_then(|p| p.reports.as_ref())
            .map(|reports| (reports, plan.config.provenance_reports_status()));
        fabric_provenance::compose(Parts {
            core: self.core,
            caller,
            guest,
            host_observed: self
                .executable
                .iter()
                .map(|program| fabric_provenance::executable_inventory(program))
                .collect(),
        })
    }
}

/// The last composed evidence, shared by every runtime whose evidence equals it (runtimes
/// of one config compose the same document; each would otherwise hold its own copy).
static LAST: std::sync::Mutex<std::sync::Weak<ExecutionEvidence>> =
    std::sync::Mutex::new(std::sync::Weak::new());

/// `evidence` as a shared document: the one a live runtime already holds when equal.
pub(crate) fn shared(evidence: ExecutionEvidence) -> std::sync::Arc<ExecutionEvidence> {
    let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(held) = last.upgrade()
        && *held == evidence
    {
        return held;
    }
    let evidence = std::sync::Arc::new(evidence);
    *last = std::sync::Arc::downgrade(&evidence);
    evidence
}
