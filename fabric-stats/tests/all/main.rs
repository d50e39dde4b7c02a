//! Every integration test of `fabric-stats`, in one binary (`cargo test -p fabric-stats --test
//! all`; `-- proc_tree::` runs one module). `error_codes.rs` stays its own binary. The tests
//! of process-wide counters and threads (`fd_cache`, `collector_fd_cache`, `scheduler`) each
//! run alone in a process of this binary (`support::alone`).

mod cgroup;
mod collector_fd_cache;
mod fd_cache;
mod invocation;
mod proc_tree;
mod scheduler;
mod support;
