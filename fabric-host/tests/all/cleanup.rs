//! Nothing left behind (issue 21, items 2 and 3) through the Rust API with the scripted
//! adapter: orphans that left the host's session survive no stop, and hosts are forked so
//! that their death signal follows the process, not the calling thread.

use crate::support;

use std::path::Path;

use crate::support::{scripted_config, wait_until};
use fabric_config::RunRequest;
use fabric_config::agent::RunStatus;
use fabric_host::{Fabric, RunOptions};
use fabric_stats::procs as procfs;
use serde_json::{Value, json};

fn alive(pid: u32) -> bool {
    procfs::read_stat(Path::new("/proc"), pid).is_some_and(|s| !s.is_exited())
}

/// Kills (by pid) whatever a failed assertion left behind.
struct Reap(Vec<u32>);

impl Drop for Reap {
    fn drop(&mut self) {
        for &pid in &self.0 {
            if alive(pid) {
                let _ = std::process::Command::new("kill")
                    .args(["-9", &pid.to_string()])
                    .status();
            }
        }
    }
}

fn pids(value: &Value) -> Vec<u32> {
    value
        .as_array()
        .expect("pid list")
        .iter()
        .map(|p| u32::try_from(p.as_u64().expect("pid")).expect("u32"))
        .collect()
}

fn orphan_request(orphans: u64) -> RunRequest {
    let mut request = RunRequest::new("leave something behind");
    request.context.insert(
        "scripted".into(),
        json!({"spawn_orphans": orphans, "spawn_children": 1}),
    );
    request
}

#[test]
fn double_forked_setsid_orphans_ignoring_sigterm_do_not_survive_stop() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config("orphans", json!({}), json!({}));
    let runtime = Fabric::new()
        .start_runtime(&config, &RunOptions::with_base_dir(dir.path()))
        .expect("start");
    let host = runtime.host_pid();
    let result = runtime.invoke(orphan_request(3)).expect("invoke");
    assert_eq!(result.status, RunStatus::Succeeded, "{result:?}");
    let metadata = &result.output["metadata"];
    let orphans = pids(&metadata["orphans"]);
    let mut everything = orphans.clone();
    everything.extend(pids(&metadata["children"]));
    let _reap = Reap(everything.clone());
    assert_eq!(orphans.len(), 3);
    // The shell reports an orphan's pid before `setsid` has run in it: wait for the move.
    wait_until("every orphan to leave the host's process group", || {
        orphans.iter().all(|&pid| {
            procfs::read_stat(Path::new("/proc"), pid)
                .expect("orphan runs")
                .pgrp
                != host
        })
    });
    for &pid in &orphans {
        let stat = procfs::read_stat(Path::new("/proc"), pid).expect("orphan runs");
        assert_eq!(stat.ppid, host, "adopted by the host (child subreaper)");
    }
    let stopped = runtime.stop();
    assert!(stopped.error.is_none(), "{stopped:?}");
    support::assert_group_gone(host);
    wait_until("every orphan to end", || {
        everything.iter().all(|&pid| !alive(pid))
    });
}

#[test]
fn a_host_outlives_the_thread_that_started_its_runtime() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = scripted_config("thread", json!({}), json!({}));
    let options = RunOptions::with_base_dir(dir.path());
    // Started on a thread that ends at once: the host must keep running (its death signal
    // follows the spawner thread, not this one).
    let runtime = std::thread::spawn(move || Fabric::new().start_runtime(&config, &options))
        .join()
        .expect("thread")
        .expect("start");
    assert!(alive(runtime.host_pid()), "the host died with its thread");
    let result = runtime
        .invoke(RunRequest::new("still here"))
        .expect("invoke");
    assert_eq!(result.status, RunStatus::Succeeded, "{result:?}");
    assert!(runtime.stop().error.is_none());
}
