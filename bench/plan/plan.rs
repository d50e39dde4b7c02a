//! In-process plan latency for a catalog descriptor (`cargo bench -p fabric-plan --bench plan`).
//!
//! Plans one representative config (models, skills, tool definitions, MCP, Relay telemetry)
//! against the 0.5.0 catalog's `nvidia.fabric.pi` descriptor, `RUNS` times after a warm-up,
//! and prints one JSON line per measurement with the median and 90th percentile in
//! nanoseconds. Budget (DESIGN §11): median ≤ 50 µs for `plan`.
//!
//! Environment: `FABRIC_BENCH_RUNS` (default 2000), `FABRIC_BENCH_CATALOG` (a catalog
//! file; default: `catalog.json` of the `nemo-fabric-adapter-catalog` 0.5.0 package installed
//! in the upstream venv, i.e. `FABRIC_TEST_PYTHON` or the `.venv` made by `scripts/setup.sh`).
//!
//! ```sh
//! scripts/setup.sh                                   # once: .venv with the upstream packages
//! cargo bench -p fabric-plan --bench plan
//! FABRIC_TEST_PYTHON=/path/to/venv/bin/python cargo bench -p fabric-plan --bench plan
//! ```

#[path = "../../tests/upstream/mod.rs"]
mod upstream;

use std::path::PathBuf;
use std::time::Instant;

use fabric_config::FabricConfig;
use fabric_plan::{DiscoveryOptions, PlanOptions};
use serde_json::{Value, json};

fn catalog_path() -> PathBuf {
    match std::env::var_os("FABRIC_BENCH_CATALOG") {
        Some(path) => PathBuf::from(path),
        None => match upstream::locate() {
            Ok(upstream) => upstream.catalog_path().to_path_buf(),
            Err(reason) => {
                eprintln!("bench plan: {reason}; or set FABRIC_BENCH_CATALOG");
                std::process::exit(2);
            }
        },
    }
}

fn median_and_p90(mut samples: Vec<u128>) -> (u128, u128) {
    samples.sort_unstable();
    let median = samples[samples.len() / 2];
    let p90 = samples[samples.len() * 9 / 10];
    (median, p90)
}

fn measure(name: &str, runs: usize, mut f: impl FnMut()) {
    for _ in 0..runs.min(200) {
        f();
    }
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        f();
        samples.push(start.elapsed().as_nanos());
    }
    let (median, p90) = median_and_p90(samples);
    println!(
        "{}",
        json!({"name": name, "runs": runs, "median_ns": median, "p90_ns": p90})
    );
}

/// The benchmark config.
fn bench_config() -> Value {
    json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "bench"},
        "harness": {"adapter_id": "nvidia.fabric.pi"},
        "discovery": {"local_paths": ["nvidia.fabric.pi.fabric-adapter.json"]},
        "models": {"default": {"provider": "openai", "model": "gpt-5", "api_key_env": "OPENAI_API_KEY"}},
        "instructions": {"system": {"content": "Review the change.", "mode": "replace"}},
        "skills": {"paths": ["./skills/review"]},
        "tools": {"definitions": {"lint": {"kind": "module", "ref": "./tools/lint.js"}}, "blocked": ["bash"]},
        "mcp": {"servers": {"github": {"transport": "stdio", "url": "github-mcp", "args": ["stdio"]}}},
        "telemetry": {"providers": {"relay": {}}}
    })
}

fn main() {
    // `cargo bench` passes `--bench`; accept and ignore harness arguments.
    let runs: usize = std::env::var("FABRIC_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let catalog: Value =
        serde_json::from_str(&std::fs::read_to_string(catalog_path()).expect("catalog"))
            .expect("json");
    let dir = std::env::temp_dir().join(format!("fabric-plan-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let descriptor = dir.join("nvidia.fabric.pi.fabric-adapter.json");
    std::fs::write(
        &descriptor,
        catalog["adapters"]["nvidia.fabric.pi"]["descriptor"].to_string(),
    )
    .expect("write");
    if std::env::args().any(|arg| arg == "--print-config") {
        println!("{}", bench_config());
        return;
    }
    let config = FabricConfig::from_value(bench_config()).expect("config");
    let explicit = PlanOptions {
        discovery: Some(DiscoveryOptions::default()),
        ..PlanOptions::default()
    };
    fabric_plan::plan(&config, &dir, &explicit).expect("plan");

    measure("plan", runs, || {
        std::hint::black_box(fabric_plan::plan(&config, &dir, &explicit).expect("plan"));
    });
    let from_env = PlanOptions::default();
    measure("plan_env_sources", runs, || {
        std::hint::black_box(fabric_plan::plan(&config, &dir, &from_env).expect("plan"));
    });
    measure("plan_json", runs, || {
        let plan = fabric_plan::plan(&config, &dir, &explicit).expect("plan");
        std::hint::black_box(serde_json::to_string(&plan).expect("json"));
    });
    measure("descriptor_load_uncached", runs.min(500), || {
        std::hint::black_box(fabric_plan::load_adapter_descriptor(&descriptor).expect("load"));
    });
    let _ = std::fs::remove_dir_all(&dir);
}
