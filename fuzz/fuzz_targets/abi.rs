#![no_main]
//! Fuzz target `abi`: see `fabric_fuzz::abi` and docs/fuzzing.md.

libfuzzer_sys::fuzz_target!(|data: &[u8]| fabric_fuzz::abi(data));
