//! The gateway rows of bench/runner.py (`--only gateway`): the median added latency of a
//! non-streamed call and of a streamed call's first chunk through the capture gateway
//! against the same loopback stub called directly — clients and stub keeping their
//! connections (the `kept_` keys; `quiet_`: each call after a pause), and a new connection
//! per call to a stub that closes (the `new_` keys) — and 64 concurrent streams through it. Prints one JSON object.
//! `FABRIC_BENCH_GATEWAY_ROUNDS` sets the rounds (default 300).

#[allow(dead_code)]
#[path = "../../fabric-gateway/tests/all/stub.rs"]
mod stub;

#[allow(dead_code)]
#[path = "../../fabric-gateway/tests/all/measure.rs"]
mod measure;

fn micros(duration: std::time::Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

fn main() {
    let rounds = std::env::var("FABRIC_BENCH_GATEWAY_ROUNDS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(300);
    let dir = tempfile::tempdir().expect("tempdir");
    let o = measure::overhead(rounds, dir.path());
    let (lost, records, received) = measure::streams_through_gateway(64, 20, dir.path());
    let report = serde_json::json!({
        "rounds": rounds,
        "kept_call_direct_us": micros(o.call_direct),
        "kept_call_gateway_us": micros(o.call_gateway),
        "kept_end_direct_us": micros(o.end_direct),
        "kept_end_gateway_us": micros(o.end_gateway),
        "kept_cpu_per_call_us": micros(o.cpu_per_call),
        "kept_chunk_direct_us": micros(o.chunk_direct),
        "kept_chunk_gateway_us": micros(o.chunk_gateway),
        "kept_stub_connections": o.kept_accepted,
        "quiet_ms": measure::QUIET.as_millis(),
        "quiet_call_direct_us": micros(o.quiet_call_direct),
        "quiet_call_gateway_us": micros(o.quiet_call_gateway),
        "quiet_chunk_direct_us": micros(o.quiet_chunk_direct),
        "quiet_chunk_gateway_us": micros(o.quiet_chunk_gateway),
        "new_call_direct_us": micros(o.new_call_direct),
        "new_call_gateway_us": micros(o.new_call_gateway),
        "new_end_direct_us": micros(o.new_end_direct),
        "new_end_gateway_us": micros(o.new_end_gateway),
        "new_cpu_per_call_us": micros(o.new_cpu_per_call),
        "new_chunk_direct_us": micros(o.new_chunk_direct),
        "new_chunk_gateway_us": micros(o.new_chunk_gateway),
        "streams": 64,
        "streams_lost": lost,
        "streams_recorded": records,
        "streams_received": received,
    });
    println!("{report}");
}
