//! Our Rust call, the reference row of the binding-overhead comparison: warm invocations of
//! the scripted adapter through `fabric_host::Runtime::invoke` with the very config the Go,
//! TypeScript and Python benches of this directory use (`system_stats` at its default), plus
//! the same with `system_stats: null` and an in-process plan of that config. One JSON line
//! per measure, in the format of the other benches, with the CPU time (user+sys) of this
//! process per call.
//!
//! Two more measures split the binding overhead into the core's layers (same runtime,
//! same config): `warm_invoke_hook_us` is `Runtime::begin_invoke` with a hook that wakes
//! this thread, then `Runtime::finish_invoke` — the non-blocking path the bindings use,
//! where nobody spins for the answer — and `run_result_json_us` is encoding one RunResult
//! as the JSON the C ABI hands over.
//!
//! `cargo bench -p fabric-host --bench bindings -- [n] [warmup]` (optimized), or
//! `cargo test -p fabric-host --bench bindings -- [n] [warmup]` (debug; bench/run.sh --quick).

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use fabric_config::{FabricConfig, RunRequest};
use fabric_host::{Fabric, RunOptions, Runtime};
use serde_json::json;

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// The last task id (process or thread) allocated in this PID namespace: counted only when
/// this program is PID 1 of its own namespace (bench/runner.py runs it so;
/// bench/python/meter.py explains the count).
fn last_pid() -> Option<i64> {
    if std::process::id() != 1 {
        return None;
    }
    std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn measure(measure: &str, n: usize, mut call: impl FnMut()) {
    let before = last_pid();
    let cpu = cpu_seconds();
    let mut samples: Vec<f64> = (0..n)
        .map(|_| {
            let began = Instant::now();
            call();
            began.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    let cpu_per_call_us = (cpu_seconds() - cpu) / n as f64 * 1e6;
    let tasks = before.zip(last_pid()).map(|(before, after)| after - before);
    samples.sort_by(f64::total_cmp);
    let line = json!({
        "binding": "rust",
        "measure": measure,
        "n": n,
        "median_us": samples[n / 2],
        "p90_us": samples[(n * 9 / 10).min(n - 1)],
        "mean_us": samples.iter().sum::<f64>() / n as f64,
        "min_us": samples[0],
        "cpu_per_call_us": cpu_per_call_us,
        "tasks": tasks,
    });
    println!("{line}");
}

/// One invocation the way the non-blocking C ABI runs it: the reactor's hook signals, this
/// thread sleeps until then (no spinning), then collects the result.
fn invoke_with_hook(runtime: &Runtime) {
    let signal = Arc::new((Mutex::new(false), Condvar::new()));
    let hook = Arc::clone(&signal);
    let pending = runtime
        .begin_invoke(
            RunRequest::new("ping"),
            Arc::new(move || {
                let (done, wake) = &*hook;
                *done.lock().expect("hook lock") = true;
                wake.notify_one();
            }),
        )
        .expect("begin");
    let (done, wake) = &*signal;
    let mut ready = done.lock().expect("lock");
    while !*ready {
        ready = wake.wait(ready).expect("wait");
    }
    drop(ready);
    let result = runtime.finish_invoke(pending).expect("finish");
    assert_eq!(result.status.as_str(), "succeeded");
}

fn main() {
    // `cargo test --bench` passes harness flags; only plain numbers are ours.
    let numbers: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|arg| arg.parse().ok())
        .collect();
    let n = numbers.first().copied().unwrap_or(2000).max(1);
    let warmup = numbers.get(1).copied().unwrap_or(200);
    let descriptor = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../adapters/scripted/scripted.fabric-adapter.json");
    let base = json!({
        "metadata": {"name": "bench-rust"},
        "harness": {"adapter_id": "fabric.scripted"},
        "discovery": {"local_paths": [descriptor]}
    });
    let mut stats_off = base.clone();
    stats_off["system_stats"] = serde_json::Value::Null;
    let fabric = Fabric::new();
    let options = RunOptions::with_base_dir(std::env::temp_dir());
    for (name, value) in [
        ("warm_invoke_us", base),
        ("warm_invoke_stats_off_us", stats_off),
    ] {
        let config: FabricConfig = serde_json::from_value(value).expect("bench config");
        let runtime = fabric.start_runtime(&config, &options).expect("runtime");
        for _ in 0..warmup {
            runtime.invoke(RunRequest::new("ping")).expect("invoke");
        }
        measure(name, n, || {
            let result = runtime.invoke(RunRequest::new("ping")).expect("invoke");
            assert_eq!(result.status.as_str(), "succeeded");
        });
        if name == "warm_invoke_us" {
            measure("warm_invoke_hook_us", n, || invoke_with_hook(&runtime));
            let result = runtime.invoke(RunRequest::new("ping")).expect("invoke");
            measure("run_result_json_us", n, || {
                let text = serde_json::to_string(&result).expect("encode");
                assert!(text.len() > 2);
            });
        }
        runtime.stop();
        if name == "warm_invoke_us" {
            measure("plan_in_process_us", n, || {
                fabric.plan(&config, &options).expect("plan");
            });
        }
    }
}
