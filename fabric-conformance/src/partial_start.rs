//! `lifecycle.partial_start`: a start interrupted part-way leaves nothing of the adapter
//! alive, and the runtime reports the start failure with the contract's code.
//!
//! The kit causes the interruption from outside with a start deadline of half the time the
//! adapter's first start took (`lifecycle.start`): the core then ends the host as after any
//! failed start (its process group is signalled, and whatever of the host was still alive
//! when it exited is killed and listed in the error's `metadata.left_behind`). Every process
//! of that host also carries a marker variable the kit adds to the environment
//! (`environment.env`), so whatever is alive with it afterwards is found too. Either is the
//! adapter's leftover — a helper in its own session that only a completed start's `stop`
//! would end, say. An adapter that finishes its start within the deadline cannot
//! be interrupted: the check is skipped saying so.

use std::path::Path;
use std::time::{Duration, Instant};

use fabric_config::{ErrorInfo, FabricConfig, Stage, codes};
use serde_json::{Value, json};

use crate::Context;
use crate::lifecycle::{ms, processes_with};
use crate::recorder::{Outcome, Recorder};

/// The marker variable of the interrupted host (its value is unique per check run).
const MARKER: &str = "FABRIC_CONFORMANCE_PARTIAL_START";
/// Codes that report a start failure as the contract asks: the deadline the kit set, or the
/// adapter's own start failure when it reported one first.
const START_FAILURES: [&str; 2] = [codes::TIMEOUT, codes::LIFECYCLE_ADAPTER_START_FAILED];

/// Runs the check after `lifecycle.start`, whose time sets the deadline.
pub(crate) fn run(context: &Context, recorder: &mut Recorder) {
    if !recorder.wants("lifecycle") {
        return;
    }
    let first = recorder
        .checks()
        .iter()
        .find(|c| c.id == "lifecycle.start")
        .filter(|c| c.status == fabric_config::conformance::ConformanceStatus::Passed)
        .map(|c| c.elapsed_ms);
    recorder.check("lifecycle.partial_start", || {
        let Some(first_ms) = first else {
            return Outcome::Skipped("no runtime started (see lifecycle.start)".to_owned());
        };
        let deadline = Duration::from_millis((first_ms / 2).max(1));
        let nonce = uuid::Uuid::new_v4().simple().to_string();
        let config = match marked(&context.config, &nonce) {
            Ok(config) => config,
            Err(reason) => return Outcome::Skipped(reason),
        };
        interrupt(context, &config, deadline, &format!("{MARKER}={nonce}"))
    });
}

/// `config` with the marker in its local environment's variables; `Err` with the reason
/// when the environment is a provider's (the kit reads only this machine's processes).
fn marked(config: &FabricConfig, nonce: &str) -> Result<FabricConfig, String> {
    let mut value = serde_json::to_value(config).map_err(|_| "the config does not encode")?;
    let environment = value
        .as_object_mut()
        .ok_or("the config does not encode")?
        .entry("environment")
        .or_insert_with(|| json!({}));
    match environment.get("provider").and_then(Value::as_str) {
        None | Some("local") => {}
        Some(provider) => {
            return Err(format!(
                "the kit interrupts a start only in a local environment (not `{provider}`)"
            ));
        }
    }
    let env = environment
        .as_object_mut()
        .ok_or("the config's environment is not an object")?
        .entry("env")
        .or_insert_with(|| json!({}));
    env.as_object_mut()
        .ok_or("the config's environment.env is not an object")?
        .insert(MARKER.to_owned(), json!(nonce));
    FabricConfig::parse(&value.to_string())
        .map_err(|_| "the config with the kit's marker variable does not decode".to_owned())
}

/// Starts with `deadline` as the start deadline; judges what is left and what was reported.
fn interrupt(
    context: &Context,
    config: &FabricConfig,
    deadline: Duration,
    marker: &str,
) -> Outcome {
    let mut run = context.run.clone();
    run.runtime.host_timeout = deadline;
    let began = Instant::now();
    let error = match context.fabric.start_runtime(config, &run) {
        Ok(runtime) => {
            let _ = runtime.stop();
            return Outcome::Skipped(format!(
                "the adapter finished its start within {} ms (half its first start): the kit \
                 cannot interrupt it",
                deadline.as_millis()
            ));
        }
        Err(error) => ErrorInfo::from(error),
    };
    let failed_after = ms(began);
    // What the core killed when the host exited, then what is still alive — outside the
    // host's own process group: the group was signalled with its leader (a member still
    // dying when the leader exited was not left behind by the adapter).
    let group = error.metadata.get("host_pid").and_then(Value::as_u64);
    let outside = |process: &Value| group.is_none() || process["pgrp"].as_u64() != group;
    let mut left: Vec<Value> = error
        .metadata
        .get("left_behind")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|process| outside(process))
        .map(|process| {
            let mut process = process.clone();
            process["killed_by"] = json!("the core, when the host exited");
            process
        })
        .collect();
    let alive: Vec<Value> = processes_with(marker).into_iter().filter(outside).collect();
    kill(&alive);
    left.extend(alive.into_iter().map(|mut process| {
        process["killed_by"] = json!("the kit, after the failed start");
        process
    }));
    if !left.is_empty() {
        return Outcome::Failed(
            format!(
                "processes of the adapter outlived a start interrupted after {} ms",
                deadline.as_millis()
            ),
            json!({"processes": left, "error": error}),
        );
    }
    if error.stage != Stage::Start || !START_FAILURES.contains(&error.code.as_str()) {
        return Outcome::Failed(
            format!(
                "the interrupted start was reported as `{}` at stage `{}`, not a start failure \
                 (`timeout` or `lifecycle_adapter_start_failed` at stage `start`)",
                error.code,
                error.stage.as_str()
            ),
            json!({"error": error}),
        );
    }
    Outcome::Passed(format!(
        "a start interrupted after {} ms failed with `{}` in {failed_after} ms and left nothing \
         of the adapter alive",
        deadline.as_millis(),
        error.code
    ))
}

/// Kills the processes of `left` that are still the ones found.
fn kill(left: &[Value]) {
    let proc_root = Path::new("/proc");
    for process in left {
        let Some(pid) = process["pid"].as_u64().and_then(|p| u32::try_from(p).ok()) else {
            continue;
        };
        let same = fabric_stats::procs::read_stat(proc_root, pid)
            .is_some_and(|stat| Some(stat.start_time) == process["start_time"].as_u64());
        if same && let Ok(pid) = i32::try_from(pid) {
            let _ = fabric_reactor::sys::signal_process(pid, fabric_reactor::sys::SIGKILL);
        }
    }
}
