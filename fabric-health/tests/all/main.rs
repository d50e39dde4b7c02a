//! Every integration test of `fabric-health`, in one binary (`cargo test -p fabric-health
//! --test all`; `-- listener_client::` runs one module).

mod dependency_rule;
mod endpoint_and_dos;
mod listener_client;
mod python_listener;
mod relay;
mod support;
mod ts_listener;
