#![no_main]
//! Fuzz target `runtime_request`: see `fabric_fuzz::runtime_request` and docs/fuzzing.md.

libfuzzer_sys::fuzz_target!(|data: &[u8]| fabric_fuzz::runtime_request(data));
