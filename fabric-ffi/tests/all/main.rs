//! Every integration test of `fabric-ffi`, in one binary (`cargo test -p fabric-ffi --test
//! all`; `-- header::` runs one module).

mod adapter_check;
mod atof_stream;
mod background_reap;
mod batch_lines;
mod c_abi;
mod error_codes;
mod gym;
mod gym_join;
mod gym_join_assistant;
mod header;
mod limits;
mod observe;
mod operations;
mod options;
mod plan_cache;
mod prewarm;
mod service;
mod statuses;
mod stream_free;
mod support;
