//! `Check::relayed`: a report a runtime server produced, re-issued under the caller's clock.
//! Whatever does not answer the request is `unknown/invalid_response`, never `passed`; the
//! deadline and `still_current` apply as for a direct check.

use std::time::{Duration, Instant};

use fabric_config::health::{
    Activity, CheckObservation, CheckOutcome, CheckReport, CheckRequest, HealthLevel,
};
use fabric_health::client::Check;

fn observation(level: HealthLevel, outcome: CheckOutcome) -> CheckObservation {
    CheckObservation {
        level,
        outcome,
        reason: (outcome != CheckOutcome::Passed).then(|| "not_ready".to_owned()),
        source_id: "scripted:ready".to_owned(),
        observed_at: "2026-11-30T12:00:00.001Z".to_owned(),
    }
}

/// What a server answers for `request`: the cumulative observations up to `last`.
fn inner(request: &CheckRequest, outcomes: &[CheckOutcome]) -> CheckReport {
    let mut report = Check::new(request).report(CheckOutcome::Unknown, "not_decided_yet");
    report.checks = request
        .level
        .cumulative()
        .iter()
        .zip(outcomes)
        .map(|(level, outcome)| observation(*level, *outcome))
        .collect();
    let last = report.checks.last().expect("observations");
    report.outcome = last.outcome;
    report.reason = last.reason.clone();
    report.activity = Some(Activity::Busy);
    report
}

fn ready() -> CheckRequest {
    CheckRequest::runtime("runtime-1").with_level(HealthLevel::Ready)
}

#[test]
fn a_valid_report_keeps_its_outcome_and_activity_under_the_callers_clock() {
    use CheckOutcome::{Failed, Passed};
    let request = ready();
    let check = Check::new(&request);
    std::thread::sleep(Duration::from_millis(20));
    let passed = check.relayed(Ok(inner(&request, &[Passed, Passed, Passed])));
    assert!(passed.passed(), "{passed:?}");
    assert_eq!(passed.checks.len(), 3);
    assert_eq!(passed.activity, Some(Activity::Busy));
    assert!(
        passed.elapsed_ms >= 20,
        "the caller's clock: {}",
        passed.elapsed_ms
    );
    let failed = check.relayed(Ok(inner(&request, &[Passed, Failed])));
    assert_eq!(
        (failed.outcome, failed.reason.as_deref()),
        (Failed, Some("not_ready"))
    );
    // A decision without observations keeps its reason.
    let mut unavailable = Check::new(&request).unavailable();
    unavailable.activity = None;
    let relayed = check.relayed(Ok(unavailable));
    assert_eq!(relayed.reason.as_deref(), Some("runtime_unavailable"));
    assert_eq!(
        check.relayed(Err("probe_timeout")).reason.as_deref(),
        Some("probe_timeout")
    );
}

#[test]
fn a_report_that_does_not_answer_the_request_is_invalid_response() {
    use CheckOutcome::{Failed, Passed};
    let request = ready();
    let check = Check::new(&request);
    let valid = inner(&request, &[Passed, Passed, Passed]);
    let mut broken: Vec<CheckReport> = Vec::new();
    let mut other = valid.clone();
    other.target.runtime_id = Some("runtime-2".into());
    broken.push(other);
    let mut lower = valid.clone();
    lower.level = Some(HealthLevel::Live);
    broken.push(lower);
    let mut short = valid.clone();
    short.checks.pop(); // passed, but `ready` never ran
    broken.push(short);
    let mut unordered = valid.clone();
    unordered.checks.swap(0, 1);
    broken.push(unordered);
    let mut after_failure = inner(&request, &[Failed, Passed, Passed]);
    after_failure.outcome = Passed;
    broken.push(after_failure);
    let mut bad_source = valid.clone();
    bad_source.checks[0].source_id = "Not A Source".into();
    broken.push(bad_source);
    let mut empty_pass = valid.clone();
    empty_pass.checks.clear();
    empty_pass.reason = None;
    broken.push(empty_pass);
    let mut server = valid;
    server.scope = fabric_config::health::CheckScope::Server;
    broken.push(server);
    for report in broken {
        let relayed = check.relayed(Ok(report.clone()));
        assert_eq!(
            (relayed.outcome, relayed.reason.as_deref()),
            (CheckOutcome::Unknown, Some("invalid_response")),
            "{report:?}"
        );
        assert!(relayed.checks.is_empty());
    }
}

#[test]
fn the_deadline_and_ownership_changes_win_over_any_answer() {
    use CheckOutcome::Passed;
    let request = ready();
    let mut check = Check::new(&request);
    check.deadline(Instant::now());
    std::thread::sleep(Duration::from_millis(2));
    let late = check.relayed(Ok(inner(&request, &[Passed, Passed, Passed])));
    assert_eq!(late.reason.as_deref(), Some("probe_timeout"));

    let mut check = Check::new(&request);
    let changed = || false;
    check.still_current(&changed);
    let stale = check.relayed(Ok(inner(&request, &[Passed, Passed, Passed])));
    assert_eq!(
        (stale.outcome, stale.reason.as_deref()),
        (CheckOutcome::Unknown, Some("observation_changed"))
    );
}

#[test]
fn a_server_report_has_one_observation_and_no_level() {
    let request = CheckRequest::server();
    let check = Check::new(&request);
    let answer = check.observed(CheckOutcome::Passed, None, "fabric:runtime_server");
    let relayed = check.relayed(Ok(answer.clone()));
    assert!(relayed.passed(), "{relayed:?}");
    assert_eq!(relayed.level, None);
    let mut twice = answer;
    twice.checks.push(twice.checks[0].clone());
    assert_eq!(
        check.relayed(Ok(twice)).reason.as_deref(),
        Some("invalid_response")
    );
}
