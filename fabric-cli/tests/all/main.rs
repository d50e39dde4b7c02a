//! Every integration test of `fabric-cli`, in one binary (`cargo test -p fabric-cli --test all`;
//! `-- plan::` runs one module).

mod agent_ctl;
mod agent_ctl_limits;
mod agent_ctl_upstream;
mod check;
mod collector;
mod collector_limits;
mod doctor_paths;
mod env;
mod env_container;
mod env_provider;
mod env_runtime;
mod export_gym;
mod interrupt;
mod plan;
mod relay;
mod run;
mod run_stream;
mod run_stream_atof;
mod service;
mod support;
mod ux;
mod validate;
