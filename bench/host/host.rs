//! Hosting benchmarks for our core, in-process from Rust (ours only: upstream has no Rust
//! caller, so no row here has an upstream counterpart; the same-caller comparison with
//! upstream is `bash bench/run.sh`, see bench/README.md).
//!
//! `cargo bench -p fabric-host --bench host` (optimized) or
//! `cargo run -p fabric-host --bench host` is not available for benches, so the debug
//! variant is `cargo test -p fabric-host --bench host -- --bench` (fewer runs).
//!
//! Prints one JSON object on stdout:
//! - `scripted_warm_invoke_us`: median/p90 of `Runtime::invoke` on the Rust scripted adapter
//!   (a warm runtime, echo reply; includes the per-invocation record written to FABRIC_HOME
//!   and the RunResult assembly).
//! - `scripted_protocol_round_trip_us`: the bare lifecycle round trip (`Host::call`) on the
//!   same adapter.
//! - `python_*` (when a Python with `nemo-fabric-adapters-common` is found through
//!   `FABRIC_BENCH_PYTHON`, `FABRIC_TEST_PYTHON` or the repository's `.venv/bin/python`): the
//!   same warm invoke on the python-echo adapter, cold `run` (start + invoke + stop), the
//!   interpreter's bare start-up (`python -c pass`), the adapter's own start-up (importing
//!   what its host imports, with the host's environment), and 64 runtimes × 20 invocations.
//! - `ignore_stop_run`, `invoke_timeout_2s`: behaviour with a host that ignores `stop` and
//!   `SIGTERM` (the stop escalates to `SIGKILL` after the grace period and the term wait)
//!   and with a 2 s invoke timeout (the invocation fails with `timeout` when it fires).
//! - `idle_runtime_core_bytes`: this process's RSS growth per idle scripted runtime.
//!
//! Environment: `FABRIC_BENCH_RUNS` scales the measured invocations.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fabric_config::Stage;
use fabric_config::{FabricConfig, RunRequest};
use fabric_host::{Fabric, Host, HostSpec, RunOptions, Runtime, StopPolicy};
use serde_json::{Value, json};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// The bench config, with `"system_stats": null` (`scripted_warm_invoke_with_stats_us`
/// measures the default). The python-echo module is importable through PYTHONPATH.
fn config(adapter: &str, descriptor: &Path, settings: Value) -> FabricConfig {
    let mut value = json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "bench"},
        "harness": {"adapter_id": adapter, "settings": settings},
        "discovery": {"local_paths": [descriptor]},
        "runtime": {"timeout_seconds": 120},
        "system_stats": null
    });
    if adapter == "fabric.python-echo" {
        value["environment"] = json!({"env": {
            "PYTHONPATH": repo_root().join("adapters/python-echo/src")
        }});
    }
    if adapter == "bench.stubborn" {
        value["environment"] = json!({"env": {
            "PYTHONPATH": repo_root().join("bench/host/stubborn")
        }});
        value["runtime"] = json!({"timeout_seconds": 2});
    }
    serde_json::from_value(value).expect("bench config")
}

fn percentile(samples: &mut [f64], p: f64) -> f64 {
    samples.sort_by(|a, b| a.total_cmp(b));
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[index.min(samples.len() - 1)]
}

fn warm_invoke_us(runtime: &Runtime, runs: usize) -> Value {
    for _ in 0..runs / 10 + 20 {
        runtime
            .invoke(RunRequest::new("warm"))
            .expect("warm-up invoke");
    }
    let mut samples: Vec<f64> = (0..runs)
        .map(|_| {
            let began = Instant::now();
            runtime.invoke(RunRequest::new("hello")).expect("invoke");
            began.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    json!({
        "median": percentile(&mut samples, 0.5),
        "p90": percentile(&mut samples, 0.9),
        "runs": runs
    })
}

/// The bare lifecycle round trip (`Host::call`, no RunResult assembly, no saved record)
/// against the scripted adapter.
fn protocol_round_trip_us(runs: usize) -> Value {
    let home = std::env::temp_dir().join(format!("fabric-bench-{}", std::process::id()));
    std::fs::create_dir_all(&home).expect("bench home");
    let mut spec = HostSpec::new("sh");
    spec.args = vec![repo_root().join("adapters/scripted/launch.sh").into()];
    spec.env = std::env::vars_os().collect();
    spec.env.push(("FABRIC_HOME".into(), home.clone().into()));
    let host = Host::launch(spec).expect("launch scripted");
    let environment = json!({"environment_id": "environment-bench", "provider": "local",
        "control_location": "in_env_control", "ownership": "caller_owned"});
    let context = json!({"runtime_id": "runtime-bench", "invocation_id": "invocation-bench",
        "request_id": "request-bench", "environment": environment, "artifacts": {}});
    host.call(
        "start",
        &json!({"agent_name": "bench", "base_dir": "/tmp", "config": {}, "runtime_context": context}),
        Stage::Start,
        Duration::from_secs(30),
    )
    .expect("start");
    let payload = json!({"runtime_context": context, "request": {"input": "hello"}});
    let call = || {
        host.call("invoke", &payload, Stage::Invoke, Duration::from_secs(30))
            .expect("invoke")
    };
    for _ in 0..runs / 10 + 20 {
        call();
    }
    let mut samples: Vec<f64> = (0..runs)
        .map(|_| {
            let began = Instant::now();
            call();
            began.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    host.stop(
        Some(&json!({"runtime_id": "runtime-bench"})),
        StopPolicy::default(),
    );
    let _ = std::fs::remove_dir_all(&home);
    json!({"median": percentile(&mut samples, 0.5), "p90": percentile(&mut samples, 0.9), "runs": runs})
}

fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = status
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

fn find_python() -> Option<PathBuf> {
    ["FABRIC_BENCH_PYTHON", "FABRIC_TEST_PYTHON"]
        .iter()
        .find_map(|name| std::env::var_os(name).map(PathBuf::from))
        .or_else(|| {
            let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python");
            venv.exists().then_some(venv)
        })
}

fn many(fabric: Fabric, config: &FabricConfig, options: &RunOptions, n: usize, k: usize) -> Value {
    let began = Instant::now();
    let runtimes: Vec<Arc<Runtime>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n)
            .map(|_| {
                scope.spawn(|| Arc::new(fabric.start_runtime(config, options).expect("start")))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("join"))
            .collect()
    });
    let started = began.elapsed();
    let invoke_began = Instant::now();
    std::thread::scope(|scope| {
        for runtime in &runtimes {
            scope.spawn(move || {
                for i in 0..k {
                    runtime
                        .invoke(RunRequest::new(format!("turn {i}")))
                        .expect("invoke");
                }
            });
        }
    });
    let invoke_phase = invoke_began.elapsed();
    std::thread::scope(|scope| {
        for runtime in &runtimes {
            scope.spawn(move || runtime.stop());
        }
    });
    let total = began.elapsed();
    let invocations = (n * k) as f64;
    json!({
        "runtimes": n,
        "invocations_per_runtime": k,
        "start_s": started.as_secs_f64(),
        "invoke_phase_s": invoke_phase.as_secs_f64(),
        "total_s": total.as_secs_f64(),
        "invocations_per_s": invocations / invoke_phase.as_secs_f64(),
        "invocations_per_s_including_start_stop": invocations / total.as_secs_f64()
    })
}

fn main() {
    let optimized = !cfg!(debug_assertions);
    let scale: f64 = std::env::var("FABRIC_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .map_or(1.0, |runs| runs / 2000.0);
    let runs = |base: usize| ((base as f64 * scale).round() as usize).max(10);
    let dir = std::env::temp_dir();
    let options = RunOptions::with_base_dir(&dir);
    let fabric = Fabric::new();
    let mut out = serde_json::Map::new();
    out.insert("optimized".into(), optimized.into());

    // Rust scripted adapter (binary built by cargo; launch.sh finds it in target/).
    let scripted = config(
        "fabric.scripted",
        &repo_root().join("adapters/scripted/scripted.fabric-adapter.json"),
        json!({}),
    );
    let runtime = fabric
        .start_runtime(&scripted, &options)
        .expect("scripted runtime");
    out.insert(
        "scripted_warm_invoke_us".into(),
        warm_invoke_us(&runtime, runs(2000)),
    );
    runtime.stop();
    let mut with_stats = scripted.clone();
    with_stats.system_stats = fabric_config::config::SystemStatsSetting::Default;
    let runtime = fabric
        .start_runtime(&with_stats, &options)
        .expect("scripted runtime with stats");
    out.insert(
        "scripted_warm_invoke_with_stats_us".into(),
        warm_invoke_us(&runtime, runs(500)),
    );
    runtime.stop();
    out.insert(
        "scripted_protocol_round_trip_us".into(),
        protocol_round_trip_us(runs(2000)),
    );

    // Core-side memory per idle runtime (the host processes are not counted).
    let before = rss_bytes();
    let idle: Vec<Runtime> = (0..64)
        .map(|_| {
            fabric
                .start_runtime(&scripted, &options)
                .expect("idle runtime")
        })
        .collect();
    let after = rss_bytes();
    out.insert(
        "idle_runtime_core_bytes".into(),
        (after.saturating_sub(before) / 64).into(),
    );
    for runtime in &idle {
        runtime.stop();
    }
    drop(idle);

    if let Some(python) = find_python() {
        let echo = config(
            "fabric.python-echo",
            &repo_root().join("adapters/python-echo/python-echo.fabric-adapter.json"),
            json!({}),
        );
        let mut py_options = options.clone();
        py_options.runtime.python_interpreter = Some(python.clone());
        out.insert(
            "python".into(),
            python.to_string_lossy().into_owned().into(),
        );
        let runtime = fabric
            .start_runtime(&echo, &py_options)
            .expect("python runtime");
        out.insert(
            "python_warm_invoke_us".into(),
            warm_invoke_us(&runtime, runs(1000)),
        );
        runtime.stop();

        let mut startup: Vec<f64> = (0..runs(20).min(30))
            .map(|_| {
                let began = Instant::now();
                let status = Command::new(&python)
                    .args(["-c", "pass"])
                    .status()
                    .expect("python -c pass");
                assert!(status.success());
                began.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        out.insert(
            "python_startup_ms".into(),
            json!({"median": percentile(&mut startup, 0.5)}),
        );
        // The adapter's own start-up: interpreter plus what its host imports before the
        // first request (bench/python/side_by_side.py's HOST_IMPORTS), with the environment
        // the core gives a python host; no core can go below this.
        let host_imports = "import runpy\nimport concurrent.futures.thread\n\
                            import fabric_python_echo.adapter\n\
                            try:\n    import fabric_core.adapter_evidence\n\
                            except ImportError:\n    pass\n";
        let mut import: Vec<f64> = (0..runs(20).min(30))
            .map(|_| {
                let began = Instant::now();
                let status = Command::new(&python)
                    .args(["-c", host_imports])
                    .env("PYTHONPATH", repo_root().join("adapters/python-echo/src"))
                    .env("PYTHONUNBUFFERED", "1")
                    .env("PYTHONDONTWRITEBYTECODE", "1")
                    .status()
                    .expect("python import");
                assert!(status.success());
                began.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        out.insert(
            "python_adapter_import_ms".into(),
            json!({"median": percentile(&mut import, 0.5)}),
        );
        let mut cold: Vec<f64> = (0..runs(20).min(30))
            .map(|_| {
                let began = Instant::now();
                let result = fabric
                    .run(&echo, RunRequest::new("cold"), &py_options)
                    .expect("cold run");
                assert_eq!(result.status.as_str(), "succeeded");
                began.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        out.insert(
            "python_cold_run_ms".into(),
            json!({"median": percentile(&mut cold, 0.5), "p90": percentile(&mut cold, 0.9)}),
        );
        out.insert(
            "python_64x20".into(),
            many(fabric, &echo, &py_options, 64, 20),
        );

        // Faults (DESIGN §12): a host that ignores `stop` (and SIGTERM), and a 2 s invoke
        // timeout against an invocation that takes 30 s.
        let stubborn = config(
            "bench.stubborn",
            &repo_root().join("bench/host/stubborn/stubborn.fabric-adapter.json"),
            json!({}),
        );
        let began = Instant::now();
        let result = fabric
            .run(&stubborn, RunRequest::new("x"), &py_options)
            .expect("run with a host that ignores stop");
        out.insert(
            "ignore_stop_run".into(),
            json!({"seconds": began.elapsed().as_secs_f64(), "status": result.status.as_str()}),
        );
        let runtime = fabric
            .start_runtime(&stubborn, &py_options)
            .expect("stubborn runtime");
        let began = Instant::now();
        let error = runtime
            .invoke(RunRequest::new("sleep"))
            .expect_err("the 2 s timeout fires");
        out.insert(
            "invoke_timeout_2s".into(),
            json!({"seconds": began.elapsed().as_secs_f64(), "code": error.code()}),
        );
        runtime.stop();
    }
    println!("{}", Value::Object(out));
}
