//! The `lifecycle` group: start, one successful invocation, a repeated invocation, two
//! runtimes isolated, stop within its deadline, EOF cleanup, and nothing of the adapter's
//! left alive afterwards: neither when its host exited (the stop's `left_behind`, which the
//! core then kills) nor after the stop (by `FABRIC_RUNTIME_ID`, which every process of a
//! host inherits).

use std::path::Path;
use std::time::{Duration, Instant};

use fabric_config::result::{RunResult, RunStatus, RuntimeStopResult};
use fabric_config::{ErrorInfo, RunRequest, codes};
use fabric_host::{Runtime, StopPolicy};
use serde_json::{Value, json};

use crate::Context;
use crate::recorder::{Outcome, Recorder};

/// How long an adapter has to exit after `stop` or EOF before it counts as ignoring it, by
/// default ([`crate::CheckOptions::stop_deadline`]).
pub const STOP_DEADLINE: Duration = Duration::from_secs(2);

/// The stop policy of every runtime of the kit: `deadline` of grace, then the signals.
pub(crate) fn stop_policy(deadline: Duration) -> StopPolicy {
    StopPolicy {
        grace: deadline,
        term_wait: Duration::from_secs(1),
        kill_wait: Duration::from_secs(1),
    }
}

/// One runtime of the group and whether it still speaks the protocol.
struct Started {
    runtime: Runtime,
    broken: Option<ErrorInfo>,
}

/// Runs the group; returns the adapter package and version its host reported in the first
/// successful invocation's software evidence, when it did.
pub(crate) fn run(context: &Context, recorder: &mut Recorder) -> Option<(String, String)> {
    if !recorder.wants("lifecycle") {
        return None;
    }
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    let marker = |label: &str| format!("conformance-{}-{label}", &nonce[..12]);
    let mut runtime_ids = Vec::new();
    let mut protocol: Vec<Value> = Vec::new();
    let mut left: Vec<Value> = Vec::new();

    let began = Instant::now();
    let first = start(context, &mut runtime_ids);
    let mut a = match first {
        Ok(started) => {
            recorder.push(
                "lifecycle.start",
                Outcome::Passed("a runtime started".to_owned()),
                ms(began),
            );
            started
        }
        Err(info) => {
            recorder.push(
                "lifecycle.start",
                Outcome::Failed(
                    "the runtime did not start".to_owned(),
                    json!({"error": info}),
                ),
                ms(began),
            );
            for id in ["invoke", "repeat", "isolation", "stop", "eof"] {
                recorder.push(
                    &format!("lifecycle.{id}"),
                    Outcome::Skipped("no runtime started".to_owned()),
                    0,
                );
            }
            leftovers(recorder, &runtime_ids, left);
            return None;
        }
    };
    let mut package = None;

    recorder.check("lifecycle.invoke", || {
        invoke(&mut a, &marker("a1"), &mut protocol, &mut package)
    });
    recorder.check("lifecycle.repeat", || match &a.broken {
        Some(_) => Outcome::Skipped("the first invocation already failed".to_owned()),
        None => invoke(&mut a, &marker("a2"), &mut protocol, &mut None),
    });
    recorder.check("lifecycle.isolation", || {
        let b = match start(context, &mut runtime_ids) {
            Ok(b) => b,
            Err(info) => {
                return Outcome::Failed(
                    "a second runtime did not start".to_owned(),
                    json!({"error": info}),
                );
            }
        };
        let input = marker("b1");
        let outcome = match b.runtime.invoke(RunRequest::new(input.clone())) {
            Ok(result) if result.status == RunStatus::Succeeded => {
                let seen = result.output.to_string();
                let leaked: Vec<String> = ["a1", "a2"]
                    .iter()
                    .map(|l| marker(l))
                    .filter(|m| seen.contains(m))
                    .collect();
                if leaked.is_empty() {
                    Outcome::Passed("a second runtime sees nothing of the first".to_owned())
                } else {
                    Outcome::Failed(
                        "the second runtime's answer carries the first runtime's input".to_owned(),
                        json!({"request": input, "output": result.output, "leaked": leaked}),
                    )
                }
            }
            Ok(result) => Outcome::Skipped(format!(
                "the second runtime's invocation did not succeed ({})",
                code_of(&result)
            )),
            Err(error) => Outcome::Skipped(format!(
                "the second runtime's invocation failed ({})",
                ErrorInfo::from(error).code
            )),
        };
        stop(&b.runtime, false, &mut left);
        outcome
    });
    recorder.check("lifecycle.stop", || match &a.broken {
        Some(info) => {
            stop(&a.runtime, false, &mut left);
            Outcome::Skipped(format!("the runtime was already broken ({})", info.code))
        }
        None => {
            let (stopped, elapsed) = stop(&a.runtime, false, &mut left);
            judge_stop(context, &stopped, elapsed, "stop")
        }
    });
    recorder.check("lifecycle.eof", || {
        let c = match start(context, &mut runtime_ids) {
            Ok(c) => c,
            Err(info) => {
                return Outcome::Failed(
                    "a runtime did not start".to_owned(),
                    json!({"error": info}),
                );
            }
        };
        let (stopped, elapsed) = stop(&c.runtime, true, &mut left);
        judge_stop(context, &stopped, elapsed, "EOF on stdin")
    });
    recorder.check("lifecycle.protocol", || {
        if protocol.is_empty() {
            Outcome::Passed("every line the adapter wrote was one JSON response".to_owned())
        } else {
            Outcome::Failed(
                "the adapter broke the line protocol".to_owned(),
                json!({"errors": protocol}),
            )
        }
    });
    leftovers(recorder, &runtime_ids, left);
    package
}

pub(crate) fn ms(began: Instant) -> u64 {
    u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX)
}

fn start(context: &Context, ids: &mut Vec<String>) -> Result<Started, ErrorInfo> {
    let runtime = context
        .fabric
        .start_runtime(&context.config, &context.run)
        .map_err(ErrorInfo::from)?;
    ids.push(runtime.runtime_id().to_owned());
    Ok(Started {
        runtime,
        broken: None,
    })
}

fn code_of(result: &RunResult) -> String {
    result
        .error
        .as_ref()
        .map_or_else(|| "no error".to_owned(), |e| e.code.clone())
}

/// One invocation that must succeed. A protocol fault is recorded for `lifecycle.protocol`
/// and skips this check (it is that check's failure, not this one's).
fn invoke(
    started: &mut Started,
    input: &str,
    protocol: &mut Vec<Value>,
    package: &mut Option<(String, String)>,
) -> Outcome {
    let request = RunRequest::new(input.to_owned());
    let outcome = started.runtime.invoke(request);
    let error = match outcome {
        Ok(result) if result.status == RunStatus::Succeeded => {
            *package = adapter_package(&result);
            return Outcome::Passed("the invocation succeeded".to_owned());
        }
        Ok(result) => result.error.clone().unwrap_or_else(|| {
            ErrorInfo::new(
                fabric_config::Stage::Invoke,
                codes::LIFECYCLE_ADAPTER_INVOKE_FAILED,
                "failed without an error",
            )
        }),
        Err(error) => ErrorInfo::from(error),
    };
    started.broken = Some(error.clone());
    if error.code == codes::PROTOCOL_ERROR {
        protocol.push(json!(error));
        return Outcome::Skipped(
            "the adapter broke the protocol (see lifecycle.protocol)".to_owned(),
        );
    }
    Outcome::Failed(
        format!("the invocation did not succeed ({})", error.code),
        json!({"request": {"input": input}, "error": error}),
    )
}

/// The adapter's own entry (role `adapter`, a version observed) of a result's software
/// evidence.
fn adapter_package(result: &RunResult) -> Option<(String, String)> {
    result
        .execution
        .as_ref()?
        .inventories
        .iter()
        .flat_map(|inventory| &inventory.entries)
        .filter(|entry| entry.role == "adapter")
        .find_map(|entry| Some((entry.name.clone(), entry.version.value.clone()?)))
}

/// Stops `runtime` (by `stop`, or by EOF on its stdin), adding what its host left behind
/// at exit to `left`.
pub(crate) fn stop(
    runtime: &Runtime,
    eof: bool,
    left: &mut Vec<Value>,
) -> (RuntimeStopResult, Duration) {
    let began = Instant::now();
    let stopped = if eof {
        runtime.stop_on_eof()
    } else {
        runtime.stop()
    };
    let elapsed = began.elapsed();
    for event in stopped.events.iter().filter(|e| e.kind == "runtime_stop") {
        if let Some(Value::Array(processes)) = event.metadata.get("left_behind") {
            for process in processes {
                let mut process = process.clone();
                process["runtime_id"] = json!(runtime.runtime_id());
                process["killed_by"] = json!("the core, when the host exited");
                left.push(process);
            }
        }
    }
    (stopped, elapsed)
}

/// Passes when the host exited on its own within the deadline with no stop problem.
fn judge_stop(
    context: &Context,
    stopped: &RuntimeStopResult,
    elapsed: Duration,
    how: &str,
) -> Outcome {
    let details = stopped
        .events
        .iter()
        .find(|e| e.kind == "runtime_stop")
        .map(|e| json!(e.metadata))
        .unwrap_or(Value::Null);
    let escalation = details
        .get("escalation")
        .and_then(Value::as_str)
        .unwrap_or("none");
    if escalation != "none" {
        return Outcome::Failed(
            format!(
                "the adapter did not exit within {} ms of {how}: the core sent {escalation}",
                context.run.runtime.stop_policy.grace.as_millis()
            ),
            json!({"stop": details, "elapsed_ms": elapsed.as_millis() as u64}),
        );
    }
    if details.get("stop_answered") == Some(&Value::Bool(false)) {
        return Outcome::Failed(
            "the adapter never answered `stop` (it only exited when its stdin closed)".to_owned(),
            json!({"stop": details, "elapsed_ms": elapsed.as_millis() as u64}),
        );
    }
    if let Some(error) = &stopped.error {
        return Outcome::Failed(
            format!("the stop reported a problem ({})", error.code),
            json!({"error": error}),
        );
    }
    Outcome::Passed(format!(
        "the adapter exited on {how} in {} ms",
        elapsed.as_millis()
    ))
}

/// Fails when any process carrying one of the kit's runtime ids is still alive (then ends it).
fn leftovers(recorder: &mut Recorder, runtime_ids: &[String], mut left: Vec<Value>) {
    recorder.check("lifecycle.leftovers", || {
        for id in runtime_ids {
            let mut found = processes_with(&format!("FABRIC_RUNTIME_ID={id}"));
            for process in &mut found {
                process["runtime_id"] = json!(id);
                process["killed_by"] = json!("the kit, after the stop");
            }
            left.extend(found);
            fabric_host::kill_leftovers(id);
        }
        if left.is_empty() {
            Outcome::Passed(format!(
                "no process of {} runtimes is left",
                runtime_ids.len()
            ))
        } else {
            Outcome::Failed(
                "processes of the adapter outlived their runtime".to_owned(),
                json!({"processes": left}),
            )
        }
    });
}

/// Every live process but this one whose environment holds `entry` (`NAME=value`), as
/// evidence: pid, parent, group, session, command line.
pub(crate) fn processes_with(entry: &str) -> Vec<Value> {
    let proc_root = Path::new("/proc");
    fabric_stats::procs::with_env_entry(proc_root, entry)
        .into_iter()
        .filter(|stat| stat.pid != std::process::id())
        .map(|stat| {
            let cmdline = std::fs::read(proc_root.join(stat.pid.to_string()).join("cmdline"))
                .map(|raw| String::from_utf8_lossy(&raw).replace('\0', " ").trim().to_owned())
                .unwrap_or_default();
            json!({"pid": stat.pid, "ppid": stat.ppid, "pgrp": stat.pgrp, "session": stat.session, "start_time": stat.start_time, "cmdline": cmdline})
        })
        .collect()
}
