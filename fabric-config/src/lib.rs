//! The NeMo Fabric vocabulary: every serde type that crosses a boundary, plus validation.
//!
//! Modules (one per noun): `config` (FabricConfig `fabric.agent/v1alpha1`), `request`
//! (RunRequest), `agent` (the southbound adapter contract), `descriptor` (adapter and target
//! descriptors), `plan` (RunPlan), `result` (RunResult and friends), `stats` (resource
//! snapshots, invocation system stats), `health` (CheckRequest/CheckReport), `error` (ErrorInfo).

#![forbid(unsafe_code)]

pub mod agent;
pub mod canonical;
pub mod config;
pub mod edit;
pub mod descriptor;
pub mod error;
pub mod plan;
pub mod health;
pub mod request;
pub mod result;
pub mod schema;
pub mod validate;
pub mod stats;

pub use config::FabricConfig;
pub use error::{ConfigError, ConfigFinding, ConfigRule, DecodeErrorKind, ErrorInfo, Stage};
pub use request::RunRequest;
pub use result::RunResult;
