#![no_main]
//! Fuzz target `health_wire`: see `fabric_fuzz::health_wire` and docs/fuzzing.md.

libfuzzer_sys::fuzz_target!(|data: &[u8]| fabric_fuzz::health_wire(data));
