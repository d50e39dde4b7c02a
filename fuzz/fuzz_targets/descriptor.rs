#![no_main]
//! Fuzz target `descriptor`: see `fabric_fuzz::descriptor` and docs/fuzzing.md.

libfuzzer_sys::fuzz_target!(|data: &[u8]| fabric_fuzz::descriptor(data));
