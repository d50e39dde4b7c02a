//! Classifying a local host's stop report.

use fabric_config::codes;
use fabric_config::{ErrorInfo, Stage};

use super::StopSummary;
use crate::host::StopReport;
use crate::hosts::Escalation;

/// Classifies a stop: a host that could not be ended within the bound is a stop `timeout`
/// (and fails `run()`); a host that needed signals, failed its stop, or broke the protocol
/// is reported as a problem that keeps the invocation's outcome. `terminal`: the host had
/// already failed, so signals were expected and are not a problem.
pub(crate) fn summarize_stop(report: &StopReport, terminal: bool) -> StopSummary {
    if let Some(error) = &report.error {
        let mut info = ErrorInfo::new(
            Stage::Stop,
            codes::TIMEOUT,
            "the adapter host did not terminate within the stop bound",
        );
        info.metadata
            .insert("cause".into(), error.code().to_owned().into());
        info.metadata.insert(
            "elapsed_ms".into(),
            u64::try_from(report.elapsed.as_millis())
                .unwrap_or(u64::MAX)
                .into(),
        );
        return StopSummary {
            problem: Some(info),
            timed_out: true,
        };
    }
    let problem = match (&report.response, report.escalation) {
        (Some(Err(error)), _) => Some(ErrorInfo::from(error.clone().at_stage(Stage::Stop))),
        (_, Escalation::Terminated | Escalation::Killed)
            if report.graceful && !report.exited_before && !terminal =>
        {
            let mut info = ErrorInfo::new(
                Stage::Stop,
                codes::TIMEOUT,
                format!(
                    "the adapter host did not finish stopping within the grace period; its process group was ended with {}",
                    report.escalation.as_str().to_uppercase()
                ),
            );
            info.metadata
                .insert("escalation".into(), report.escalation.as_str().into());
            Some(info)
        }
        _ => None,
    };
    StopSummary {
        problem,
        timed_out: false,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::Value;

    use super::*;
    use crate::error::{Diagnostics, HostError};

    fn report(escalation: Escalation) -> StopReport {
        StopReport {
            response: None,
            exit: Some("signal 9".into()),
            escalation,
            exited_before: false,
            graceful: true,
            elapsed: Duration::from_millis(3000),
            error: None,
            left_behind: Vec::new(),
        }
    }

    #[test]
    fn clean_stop_has_no_problem() {
        let mut clean = report(Escalation::None);
        clean.response = Some(Ok(Value::Null));
        let summary = summarize_stop(&clean, false);
        assert!(summary.problem.is_none() && !summary.timed_out);
    }

    #[test]
    fn escalation_is_a_separate_stop_problem() {
        let summary = summarize_stop(&report(Escalation::Killed), false);
        let problem = summary.problem.expect("problem");
        assert_eq!(
            (problem.stage, problem.code.as_str()),
            (Stage::Stop, "timeout")
        );
        assert_eq!(problem.metadata["escalation"], "sigkill");
        assert!(!summary.timed_out);
        // A terminal host is expected to need signals.
        assert!(
            summarize_stop(&report(Escalation::Terminated), true)
                .problem
                .is_none()
        );
    }

    #[test]
    fn termination_failure_is_a_stop_timeout() {
        let mut failed = report(Escalation::Killed);
        failed.error = Some(HostError::TerminationFailed {
            stage: Stage::Stop,
            timeout_ms: 4000,
            diagnostics: Diagnostics::default(),
        });
        let summary = summarize_stop(&failed, false);
        assert!(summary.timed_out);
        let problem = summary.problem.expect("problem");
        assert_eq!(problem.code, "timeout");
        assert_eq!(problem.metadata["cause"], "host_termination_failed");
    }

    #[test]
    fn failed_stop_outcome_keeps_the_adapter_code() {
        let mut failed = report(Escalation::None);
        failed.response = Some(Err(HostError::Lifecycle {
            stage: Stage::Stop,
            code: "lifecycle_adapter_stop_failed".into(),
            message: "Adapter failed during lifecycle stop".into(),
            retryable: false,
            metadata: Default::default(),
            diagnostics: Default::default(),
        }));
        let problem = summarize_stop(&failed, false).problem.expect("problem");
        assert_eq!(problem.code, "lifecycle_adapter_stop_failed");
        assert_eq!(problem.stage, Stage::Stop);
    }
}
