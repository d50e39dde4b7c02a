//! Descriptor discovery, normalization and fingerprints; planning, doctor, inspect.
//!
//! - [`plan`] resolves the adapter (and workflow target) descriptors for a
//!   [`FabricConfig`](fabric_config::FabricConfig), applies every compatibility rule of the
//!   spec, and returns the [`RunPlan`](fabric_config::plan::RunPlan) with the southbound
//!   [`AgentConfig`](fabric_config::agent::AgentConfig) a host sends at start.
//! - [`doctor`] collects every preflight finding as a check without starting anything.
//! - [`inspect`] reports the capability profile of a config against supplied descriptor
//!   metadata (no discovery).
//! - [`descriptor_sha256`] is the fingerprint of a normalized descriptor, equal to upstream
//!   NeMo Fabric 0.5.0's `inspect_adapter(...).descriptor_sha256`.
//!
//! ```
//! use std::path::Path;
//! use fabric_config::FabricConfig;
//! use fabric_plan::{PlanOptions, DiscoveryOptions, plan};
//!
//! let dir = std::env::temp_dir().join(format!("fabric-plan-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! std::fs::write(
//!     dir.join("echo.fabric-adapter.json"),
//!     r#"{"contract_version": "fabric.adapter/v1alpha2", "adapter_id": "example.echo",
//!         "adapter_kind": "process", "runner": {"command": "echo-adapter"},
//!         "config": {"accepts": ["models"]}}"#,
//! ).unwrap();
//! let config: FabricConfig = serde_json::from_str(r#"{
//!     "schema_version": "fabric.agent/v1alpha1",
//!     "metadata": {"name": "demo"},
//!     "harness": {"adapter_id": "example.echo"},
//!     "models": {"default": {"provider": "openai", "model": "gpt-5"}},
//!     "discovery": {"local_paths": ["echo.fabric-adapter.json"]}
//! }"#).unwrap();
//! let options = PlanOptions { discovery: Some(DiscoveryOptions::default()), ..PlanOptions::default() };
//! let run_plan = plan(&config, &dir, &options).unwrap();
//! assert_eq!(run_plan.agent_config.models["default"].model, "gpt-5");
//! assert_eq!(run_plan.adapter_descriptor.unwrap().provenance[0].source.as_str(), "explicit_local");
//!
//! // An unsupported normalized field fails, naming the adapter and the field.
//! let mut with_turns = config.clone();
//! with_turns.runtime.max_turns = Some(5);
//! let error = plan(&with_turns, &dir, &options).unwrap_err();
//! assert_eq!(error.code(), "config_incompatible");
//! assert_eq!(error.path(), Some("runtime.max_turns"));
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

#![forbid(unsafe_code)]

mod builtin;
mod bundled;
mod cache;
mod compat;
pub mod discovery;
mod doctor;
mod error;
pub mod fingerprint;
mod inspect;
pub mod load;
mod planner;
mod python_check;
mod relay;
mod schema;

pub use builtin::{BuiltinAdapter, register_builtin_adapters};
pub use discovery::{Catalog, Discovered, DiscoveryOptions};
pub use doctor::{doctor, doctor_with};
pub use error::{DescriptorOrigin, PLAN_ERROR_CODES, PlanError};
pub use fingerprint::{combined_sha256, descriptor_sha256, target_sha256};
pub use inspect::inspect;
pub use load::{
    LoadedAdapter, LoadedTarget, check_target_for_adapter, load_adapter_descriptor,
    load_target_descriptor, parse_adapter_descriptor, parse_target_descriptor,
};
pub use planner::{PlanInputs, PlanOptions, plan, plan_inputs, plan_with_inputs, resolve_base_dir};
pub use python_check::{IMPORT_CHECK_TIMEOUT, python_interpreter};
/// The Relay plugin document of a config (the plan's `telemetry_plan.relay_config`).
pub use relay::relay_config;
