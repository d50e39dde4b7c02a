//! Every integration test of `fabric-plan`, in one binary (`cargo test -p fabric-plan --test
//! all`; `-- planning::` runs one module). `error_codes.rs` stays its own binary.

mod descriptors;
mod planning;
mod support;
