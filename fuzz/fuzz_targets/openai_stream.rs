#![no_main]
//! Fuzz target `openai_stream`: see `fabric_fuzz::openai_stream` and docs/fuzzing.md.

libfuzzer_sys::fuzz_target!(|data: &[u8]| fabric_fuzz::openai_stream(data));
