//! Check latency for `ready` against the Rust health listener (budget: median ≤ 1 ms).
//!
//! `cargo bench -p fabric-health --bench check_latency` (optimized) or
//! `cargo test -p fabric-health --bench check_latency` (debug, fewer runs). Environment:
//! `FABRIC_BENCH_RUNS` overrides the number of measured checks. Prints one JSON line.
//! Each check is a full round trip: read the endpoint file, connect, send an HMAC-signed
//! request, the listener evaluates `live`, `active`, `ready` (trivial probes), answers with an
//! HMAC-signed response, and the client verifies and builds the report.

use std::time::{Duration, Instant};

use fabric_health::client::Check;
use fabric_health::listener::{self, ProbeOutcome};
use fabric_health::{CheckRequest, HealthLevel};

const BUDGET: Duration = Duration::from_millis(1);

fn main() {
    let optimized = !cfg!(debug_assertions);
    let runs: usize = std::env::var("FABRIC_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if optimized { 5000 } else { 500 });
    let home = tempfile::tempdir().expect("temp dir");
    let handle =
        listener::spawn(home.path(), |_, _| ProbeOutcome::passed("bench:probe")).expect("listener");
    let request = CheckRequest::runtime("runtime-bench").with_level(HealthLevel::Ready);
    let path = handle.endpoint_path().to_path_buf();
    for _ in 0..runs / 10 {
        assert!(Check::new(&request).run(&path).passed());
    }
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        let report = Check::new(&request).run(&path);
        samples.push(start.elapsed());
        assert!(report.passed(), "{report:?}");
    }
    samples.sort();
    let pct = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let median = pct(0.5);
    println!(
        "{{\"bench\":\"health_check_ready\",\"optimized\":{optimized},\"runs\":{runs},\
         \"min_us\":{:.1},\"median_us\":{:.1},\"p90_us\":{:.1},\"p99_us\":{:.1},\
         \"budget_us\":{:.0},\"within_budget\":{}}}",
        us(samples[0]),
        us(median),
        us(pct(0.9)),
        us(pct(0.99)),
        us(BUDGET),
        median <= BUDGET
    );
    handle.stop();
}
