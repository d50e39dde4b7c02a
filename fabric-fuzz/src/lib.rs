//! Fuzz harness functions: one per fuzz target, each taking arbitrary bytes and panicking
//! only on a bug. The cargo-fuzz targets in `fuzz/` (nightly, libFuzzer) and the stable
//! regression test `tests/all/corpus.rs` (every file of `fuzz/corpus/<target>/` and
//! `fuzz/regressions/<target>/`) call the same functions, so a crash found by the fuzzer
//! becomes a CI test by adding its input file. See `docs/fuzzing.md`.
//!
//! ```text
//! // Arbitrary input never panics; a bug does.
//! fabric_fuzz::config(br#"{"metadata": {"name": "x"}, "harness": {"adapter_id": "a"}}"#);
//! fabric_fuzz::run_target("health_wire", b"\xff not json");
//! ```

mod abi;
mod decoders;

pub use abi::abi;
pub use decoders::{config, descriptor};

/// The health wire decoders (endpoint file, request and response lines; fabric-health).
pub fn health_wire(data: &[u8]) {
    fabric_health::fuzz::wire(data);
}

/// The lifecycle response decoder (JSON-lines answers of an adapter host; fabric-host).
pub fn lifecycle_response(data: &[u8]) {
    fabric_host::fuzz::lifecycle_response(data);
}

/// The Relay collector's HTTP: one connection's bytes (byte 0: how the network splits
/// them) through the reactor's HTTP driver in memory and the collector's service
/// (fabric-relay).
pub fn collector_http(data: &[u8]) {
    fabric_relay::fuzz::collector_http(data);
}

/// The OpenAI stream listener's HTTP: one connection's bytes (byte 0 as for
/// `collector_http`) through the driver and the listener's service (fabric-host).
pub fn openai_stream(data: &[u8]) {
    fabric_host::fuzz::openai_stream(data);
}

/// The runtime server's request lines (`fabric-agent-ctl serve`'s socket), served by a
/// server owning no runtime (fabric-host over fabric-sandbox's bridge decoding).
pub fn runtime_request(data: &[u8]) {
    fabric_host::fuzz::runtime_request(data);
}

/// A harness function: arbitrary bytes in, a panic only on a bug.
pub type Harness = fn(&[u8]);

/// Every fuzz target, by name (the names of `fuzz/fuzz_targets/*.rs` and of the corpus
/// directories).
pub const TARGETS: &[(&str, Harness)] = &[
    ("config", config),
    ("descriptor", descriptor),
    ("lifecycle_response", lifecycle_response),
    ("health_wire", health_wire),
    ("abi", abi),
    ("collector_http", collector_http),
    ("openai_stream", openai_stream),
    ("runtime_request", runtime_request),
];

/// Runs the target named `name` on `data`. Panics on an unknown name.
pub fn run_target(name: &str, data: &[u8]) {
    let Some((_, target)) = TARGETS.iter().find(|(n, _)| *n == name) else {
        panic!("unknown fuzz target `{name}`");
    };
    target(data);
}
