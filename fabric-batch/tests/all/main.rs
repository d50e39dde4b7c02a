//! Every integration test of `fabric-batch`, in one binary (`cargo test -p fabric-batch
//! --test all`). Runs through the scheduler live in `fabric-cli/tests/all/batch.rs` (the
//! command) and each binding's batch tests (the C ABI).

mod items;
mod output;
mod settings;
