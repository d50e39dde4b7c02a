//! A runtime dropped without `stop` gives back every descriptor at once, including the
//! stats readers cached for its processes (issue 21, item 4). Alone in its own process (a
//! run of the test binary with only this test): it counts this process's descriptors and
//! waits for the process-wide engine to have no host.

use crate::support::{self, scripted_config, wait_until};
use fabric_config::RunRequest;
use fabric_config::agent::RunStatus;
use fabric_host::{Fabric, RunOptions, engine_stats};
use serde_json::json;

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").expect("fd dir").count()
}

fn cycle(dir: &std::path::Path, stop: bool) {
    let config = scripted_config("free-fds", json!({}), json!({}));
    let runtime = Fabric::new()
        .start_runtime(&config, &RunOptions::with_base_dir(dir))
        .expect("start");
    let mut request = RunRequest::new("spawn");
    request
        .context
        .insert("scripted".into(), json!({"spawn_children": 12}));
    let result = runtime.invoke(request).expect("invoke");
    assert_eq!(result.status, RunStatus::Succeeded, "{result:?}");
    let snapshot = runtime.resource_snapshot().expect("snapshot");
    assert!(snapshot.process_count >= 13, "{snapshot:?}");
    if stop {
        assert!(runtime.stop().error.is_none());
    }
    drop(runtime);
}

#[test]
fn freeing_an_unstopped_runtime_releases_its_cached_stats_descriptors() {
    if !support::alone::in_own_process(
        "free_fds::freeing_an_unstopped_runtime_releases_its_cached_stats_descriptors",
    ) {
        return; // it ran, and passed, in its own process
    }
    let dir = tempfile::tempdir().expect("tempdir");
    // Warm up (reactor, spawner, collector, lazily opened files), then measure.
    cycle(dir.path(), true);
    wait_until("the warm-up host to be reaped", || {
        engine_stats().expect("stats").hosts == 0
    });
    let baseline = open_fds();
    cycle(dir.path(), false);
    wait_until("the dropped host to be reaped", || {
        engine_stats().expect("stats").hosts == 0
    });
    let after = open_fds();
    assert!(
        after <= baseline,
        "{} descriptors kept after freeing the runtime (baseline {baseline}, now {after})",
        after.saturating_sub(baseline)
    );
}
