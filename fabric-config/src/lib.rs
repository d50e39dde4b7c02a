//! The NeMo Fabric vocabulary: every serde type that crosses a boundary, plus validation.
//!
//! Modules (one per noun): `config` (FabricConfig `fabric.agent/v1alpha1`), `request`
//! (RunRequest), `agent` (the southbound adapter contract), `descriptor` (adapter and target
//! descriptors), `plan` (RunPlan), `result` (RunResult and friends), `stats` (resource
//! snapshots, invocation system stats), `health` (CheckRequest/CheckReport), `error`
//! (ErrorInfo, ConfigError), `options` (CallOptions, the C ABI's options object), `validate`
//! (decoding with paths, rules), `canonical` (canonical JSON), `edit` (SDK-style helpers),
//! `path` (the base_dir rule for relative paths), `handles` (runtime and environment
//! identities), `stream` (pull-stream items and the OpenAI stream wire), `bridge` (the
//! sandbox command bridge wire), `gym` (NeMo Gym rollout observations), `evidence` (selected software evidence), `codes` (the error
//! registry), `schema` (generated JSON Schemas).
//!
//! ```
//! use fabric_config::{ErrorInfo, FabricConfig};
//!
//! let config = FabricConfig::parse(
//!     r#"{"metadata": {"name": "review-agent"},
//!         "harness": {"adapter_id": "nvidia.fabric.hermes"},
//!         "runtime": {"max_turns": 8}}"#,
//! )?;
//! assert_eq!(
//!     config.to_canonical_json(),
//!     r#"{"harness":{"adapter_id":"nvidia.fabric.hermes"},"metadata":{"name":"review-agent"},"runtime":{"max_turns":8},"schema_version":"fabric.agent/v1alpha1"}"#
//! );
//!
//! let error = FabricConfig::parse(
//!     r#"{"metadata": {"name": "x"}, "harness": {"adapter_id": "a"},
//!         "models": {"default": {"provider": "nvidia", "model": "m", "top_p": 1.5}}}"#,
//! )
//! .unwrap_err();
//! assert_eq!(error.code(), "top_p_out_of_range");
//! assert_eq!(error.path(), Some("models.default.top_p"));
//! let info = ErrorInfo::from(error); // stage `config`, metadata.path
//! assert_eq!(info.path(), Some("models.default.top_p"));
//! # Ok::<(), fabric_config::ConfigError>(())
//! ```

#![forbid(unsafe_code)]

pub mod agent;
pub mod batch;
pub mod bridge;
pub mod canonical;
pub mod codes;
pub mod config;
pub mod conformance;
pub mod descriptor;
pub mod edit;
pub mod environment_ops;
pub mod error;
pub mod evidence;
pub mod gym;
pub mod handles;
pub mod health;
pub mod model_call;
mod number;
pub mod options;
pub mod path;
pub mod plan;
pub mod provider;
pub mod relay_collector;
pub mod request;
pub mod result;
pub mod schema;
pub mod seconds;
pub mod service;
pub mod stats;
pub mod stream;
pub mod stub_model;
pub mod tolerated;
pub mod validate;

pub use config::FabricConfig;
pub use error::{ConfigError, ConfigFinding, ConfigRule, DecodeErrorKind, ErrorInfo, Stage};
pub use model_call::ModelCallRecord;
pub use options::CallOptions;
pub use request::RunRequest;
pub use result::RunResult;
pub use validate::json_syntax_reason;
