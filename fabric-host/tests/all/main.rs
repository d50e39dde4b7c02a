//! Every integration test of `fabric-host`, in one binary (`cargo test -p fabric-host --test
//! all`; `-- runtime::` runs one module). `error_codes.rs` stays its own binary. The tests of
//! process-wide state (`free_fds`, `env_forwarding`) each run alone in a process of this
//! binary (`support::alone`).

mod artifacts;
mod check;
mod cleanup;
mod direct_write;
mod env_forwarding;
mod escapes;
mod faults;
mod free_fds;
mod openai_stream;
mod provenance;
mod runtime;
mod scale;
mod service;
mod stats;
mod support;
