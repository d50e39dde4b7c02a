//! The `doctor` group: `doctor` with the declared requirements met, with an environment
//! requirement unmet, and with each required binary removed from `PATH`
//! (`doctor.missing_binary`, in `doctor_path.rs`).

use fabric_config::plan::DoctorStatus;
use serde_json::json;

use crate::Context;
use crate::recorder::{Outcome, Recorder};

pub(crate) fn run(context: &Context, recorder: &mut Recorder) {
    if !recorder.wants("doctor") {
        return;
    }
    let requirements = &context.subject.loaded.descriptor.requirements;
    let unset: Vec<&String> = requirements
        .env
        .iter()
        .filter(|name| std::env::var_os(name).is_none_or(|v| v.is_empty()))
        .collect();
    let report = context.fabric.doctor(&context.config, &context.run);
    recorder.check("doctor.met", || {
        if !unset.is_empty() {
            return Outcome::Skipped(format!(
                "declared requirement `{}` is not met here; set it to check the met case",
                unset[0]
            ));
        }
        match &report {
            Ok(report) if report.passed() => {
                Outcome::Passed("doctor passes with every declared requirement met".to_owned())
            }
            Ok(report) => Outcome::Failed(
                "doctor fails although every declared requirement is met".to_owned(),
                json!({"failed": report.checks.iter().filter(|c| c.status == DoctorStatus::Fail).collect::<Vec<_>>()}),
            ),
            Err(error) => Outcome::Failed(
                "doctor could not run".to_owned(),
                json!({"error": fabric_config::ErrorInfo::from(error.clone())}),
            ),
        }
    });
    crate::doctor_path::run(context, recorder);
    recorder.check("doctor.unmet", || {
        let Some(name) = unset.first() else {
            return Outcome::Skipped(if requirements.env.is_empty() {
                "the descriptor declares no environment requirement the kit can leave unmet"
                    .to_owned()
            } else {
                "every declared environment requirement is set here; unset one to check the unmet case"
                    .to_owned()
            });
        };
        let found = report.as_ref().ok().and_then(|report| {
            report.checks.iter().find(|c| {
                c.status == DoctorStatus::Fail && c.message.contains(name.as_str())
            })
        });
        match found {
            Some(check) => Outcome::Passed(format!(
                "doctor reports `{name}` unmet ({})",
                check.code
            )),
            None => Outcome::Failed(
                format!("doctor does not report the unset requirement `{name}`"),
                json!({"report": report.as_ref().ok()}),
            ),
        }
    });
}
