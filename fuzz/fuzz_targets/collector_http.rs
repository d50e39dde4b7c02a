#![no_main]
//! Fuzz target `collector_http`: see `fabric_fuzz::collector_http` and docs/fuzzing.md.

libfuzzer_sys::fuzz_target!(|data: &[u8]| fabric_fuzz::collector_http(data));
