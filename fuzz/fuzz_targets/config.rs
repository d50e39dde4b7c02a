#![no_main]
//! Fuzz target `config`: see `fabric_fuzz::config` and docs/fuzzing.md.

libfuzzer_sys::fuzz_target!(|data: &[u8]| fabric_fuzz::config(data));
