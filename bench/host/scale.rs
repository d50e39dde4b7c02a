//! Scale on one machine (issue 30): many live runtimes of the Rust scripted adapter in one
//! process (`cargo bench -p fabric-host --bench scale`; `cargo test -p fabric-host --bench
//! scale` builds it in debug). Prints one JSON object on stdout:
//!
//! - `start_200_s`, `stop_200_s`: wall time to start 200 runtimes one after another, and to
//!   stop them.
//! - `live`: runtimes held at once (`FABRIC_BENCH_SCALE_RUNTIMES`, default 2,000), then with
//!   them live: `fds_per_runtime` (this process's descriptors), `core_bytes_per_runtime`
//!   (this process's RSS growth; the hosts are other processes), `reactor_threads`, and
//!   `reactor_idle_ticks_per_s` (the reactor thread's utime + stime over one idle second,
//!   in clock ticks, from `/proc/self/task/<tid>/stat`), `rss_kib`, `fds`.
//!
//! The scale test (`fabric-host/tests/all/scale.rs`) checks the same limits untimed.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fabric_config::FabricConfig;
use fabric_host::{Fabric, RunOptions, Runtime, engine_stats};
use serde_json::json;

#[path = "../../tests/process_self.rs"]
mod process_self;
use process_self::{open_fds, status_kib, threads_named};

fn descriptor() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .join("adapters/scripted/scripted.fabric-adapter.json")
}

fn start(
    fabric: &Fabric,
    config: &FabricConfig,
    options: &RunOptions,
    count: usize,
) -> Vec<Runtime> {
    (0..count)
        .map(|index| {
            fabric
                .start_runtime(config, options)
                .unwrap_or_else(|error| panic!("runtime {index} of {count}: {error}"))
        })
        .collect()
}

fn stop(runtimes: Vec<Runtime>) {
    for runtime in &runtimes {
        if let Some(error) = runtime.stop().error {
            panic!("stop: {error:?}");
        }
    }
}

fn wait_reaped() {
    let deadline = Instant::now() + Duration::from_secs(30);
    while engine_stats().expect("engine stats").hosts != 0 {
        assert!(Instant::now() < deadline, "hosts left after stop");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn main() {
    let live: usize = std::env::var("FABRIC_BENCH_SCALE_RUNTIMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let config: FabricConfig = serde_json::from_value(json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "scale"},
        "harness": {"adapter_id": "fabric.scripted", "settings": {}},
        "discovery": {"local_paths": [descriptor()]},
        "system_stats": null
    }))
    .expect("config");
    let dir = tempfile::tempdir().expect("tempdir");
    let options = RunOptions::with_base_dir(dir.path());
    let fabric = Fabric::new();
    stop(start(&fabric, &config, &options, 8)); // warm-up
    wait_reaped();

    let started = Instant::now();
    let batch = start(&fabric, &config, &options, 200);
    let start_200 = started.elapsed().as_secs_f64();
    let stopping = Instant::now();
    stop(batch);
    let stop_200 = stopping.elapsed().as_secs_f64();
    wait_reaped();

    let (fds_before, rss_before) = (open_fds(), status_kib("VmRSS:"));
    let runtimes = start(&fabric, &config, &options, live);
    let fds = open_fds() - fds_before;
    let rss_kib = status_kib("VmRSS:").saturating_sub(rss_before);
    let reactors = threads_named("fabric-reactor");
    let (tid, before) = reactors.first().copied().expect("a reactor thread");
    std::thread::sleep(Duration::from_secs(1));
    let after = threads_named("fabric-reactor")
        .into_iter()
        .find(|(id, _)| *id == tid)
        .map_or(before, |(_, ticks)| ticks);
    stop(runtimes);
    wait_reaped();
    let out = json!({
        "start_200_s": start_200,
        "stop_200_s": stop_200,
        "live": live,
        "fds": fds,
        "fds_per_runtime": fds as f64 / live as f64,
        "rss_kib": rss_kib,
        "core_bytes_per_runtime": rss_kib * 1024 / live as u64,
        "reactor_threads": reactors.len(),
        "reactor_idle_ticks_per_s": after - before,
    });
    println!("{out}");
}
