#![no_main]
//! Fuzz target `lifecycle_response`: see `fabric_fuzz::lifecycle_response` and docs/fuzzing.md.

libfuzzer_sys::fuzz_target!(|data: &[u8]| fabric_fuzz::lifecycle_response(data));
