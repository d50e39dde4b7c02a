//! `doctor.missing_binary`: for each binary the adapter needs — every name of the
//! descriptor's `requirements.binaries`, and the runner's `command` of a process adapter
//! when it is a bare name — `doctor` run with a `PATH` that lacks it (the real `PATH` without
//! the directories holding it) reports that requirement unmet, and with the real `PATH` met.
//! A runner command the requirements do not name fails: `doctor` would pass on a machine
//! where the adapter cannot even launch.

use std::ffi::OsString;
use std::path::PathBuf;

use fabric_config::descriptor::AdapterKind;
use fabric_config::plan::{DoctorReport, DoctorStatus};
use serde_json::{Value, json};

use crate::Context;
use crate::recorder::{Outcome, Recorder};

pub(crate) fn run(context: &Context, recorder: &mut Recorder) {
    recorder.check("doctor.missing_binary", || judge(context));
}

fn judge(context: &Context) -> Outcome {
    let descriptor = &context.subject.loaded.descriptor;
    let declared: Vec<&String> = descriptor
        .requirements
        .binaries
        .iter()
        .filter(|name| !name.contains('/'))
        .collect();
    let runner = (descriptor.adapter_kind == AdapterKind::Process)
        .then(|| descriptor.runner.get("command").and_then(Value::as_str))
        .flatten()
        .filter(|command| !command.contains('/'));
    if let Some(command) = runner
        && !declared.iter().any(|name| name.as_str() == command)
    {
        return Outcome::Failed(
            format!(
                "the runner's command `{command}` is not in requirements.binaries: doctor passes \
                 where the adapter cannot launch"
            ),
            json!({"runner": descriptor.runner, "requirements": descriptor.requirements}),
        );
    }
    if declared.is_empty() {
        return Outcome::Skipped(
            "the descriptor names no binary the kit can remove from PATH".to_owned(),
        );
    }
    let real = std::env::var_os("PATH").unwrap_or_default();
    let mut seen = Vec::new();
    for name in declared {
        let dirs: Vec<PathBuf> = std::env::split_paths(&real).collect();
        let Some(_) = fabric_plan::discovery::find_on(name, Some(&real)) else {
            return Outcome::Skipped(format!(
                "`{name}` is not on PATH here (see doctor.met); install it to check it missing"
            ));
        };
        let without: Vec<PathBuf> = dirs
            .into_iter()
            .filter(|dir| fabric_plan::discovery::find_on(name, Some(dir.as_os_str())).is_none())
            .collect();
        let Ok(sandboxed) = std::env::join_paths(&without) else {
            return Outcome::Skipped("PATH cannot be rebuilt without the binary".to_owned());
        };
        let missing = doctor(context, Some(sandboxed.clone()));
        let met = doctor(context, None);
        match (reported(&missing, name), reported(&met, name)) {
            (Some(DoctorStatus::Fail), Some(DoctorStatus::Pass)) => seen.push(name.clone()),
            (unmet, satisfied) => {
                return Outcome::Failed(
                    format!(
                        "doctor does not report `{name}` unmet without it on PATH and met with it"
                    ),
                    json!({"binary": name, "without_it": unmet.map(status), "with_it": satisfied.map(status),
                           "path_without_it": sandboxed.to_string_lossy()}),
                );
            }
        }
    }
    Outcome::Passed(format!(
        "doctor reports {} unmet without it on PATH and met with it",
        seen.iter()
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

fn doctor(context: &Context, path: Option<OsString>) -> Option<DoctorReport> {
    let mut run = context.run.clone();
    run.plan.binary_path = path;
    context.fabric.doctor(&context.config, &run).ok()
}

/// The status of the `requirement.binary` check naming `name`.
fn reported(report: &Option<DoctorReport>, name: &str) -> Option<DoctorStatus> {
    report.as_ref()?.checks.iter().find_map(|check| {
        (check.name == "requirement.binary" && check.message.contains(&format!("`{name}`")))
            .then_some(check.status)
    })
}

fn status(status: DoctorStatus) -> Value {
    serde_json::to_value(status).unwrap_or(Value::Null)
}
