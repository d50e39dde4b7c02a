//! Identities of started runtimes and prepared environments, and a runtime's status: the
//! documents the C ABI returns from start, prepare, release and status.
//!
//! These are results: consumers tolerate unknown fields, so the types do not deny them.
//! None of them carries a secret: an environment reports the *names* of its variables,
//! never their values.
//!
//! ```
//! use fabric_config::handles::EnvironmentReference;
//!
//! let reference: EnvironmentReference = serde_json::from_str(
//!     r#"{"provider": "local", "resource": {"workspace": "/srv/task"}}"#,
//! ).unwrap();
//! assert_eq!(reference.provider, "local");
//! let unknown = r#"{"provider": "local", "x": 1}"#;
//! assert!(serde_json::from_str::<EnvironmentReference>(unknown).is_err());
//! ```

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::agent::EnvironmentHandle;
use crate::config::{ControlLocation, EnvironmentOwnership, JsonObject};
use crate::descriptor::AdapterKind;

/// A prepared environment as reported to callers (`fabric_environment_prepare`,
/// `fabric_environment_release`, and inside [`RuntimeInfo`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EnvironmentInfo {
    /// Environment id (`env-…`).
    pub environment_id: String,
    /// Provider (`local`).
    pub provider: String,
    /// Where Fabric control code runs relative to the environment.
    pub control_location: ControlLocation,
    /// Who owns the environment's lifecycle.
    pub ownership: EnvironmentOwnership,
    /// Resolved workspace directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Resolved artifact root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<String>,
    /// Names of the variables the environment passes to adapters (values are never
    /// reported).
    #[serde(default)]
    pub env_names: Vec<String>,
    /// Provider connection data.
    #[serde(default, skip_serializing_if = "JsonObject::is_empty")]
    pub connection: JsonObject,
    /// Consumer metadata.
    #[serde(default, skip_serializing_if = "JsonObject::is_empty")]
    pub metadata: JsonObject,
    /// Whether the environment was released (new starts in it fail).
    #[serde(default)]
    pub released: bool,
    /// Whether the environment was attached (`attach_environment`): the resource stays the
    /// caller's and release only detaches.
    #[serde(default)]
    pub attached: bool,
    /// The reference another process passes to `attach_environment` to reach the same
    /// resource, when the provider can attach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<EnvironmentReference>,
    /// The C ABI handle of this environment, when it was returned through the ABI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle: Option<u64>,
    /// What the provider observed of the environment over its life (outcome, wall and CPU
    /// time, peak memory, `oom`), reported by `release` of an environment Fabric prepared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_observation: Option<crate::gym::SandboxObservation>,
}

/// A provider-specific reference to an existing execution environment (the input of
/// `attach_environment`; unknown top-level fields are rejected).
///
/// The `local` provider reads `resource.workspace`: an existing directory (a relative path
/// is anchored at the plan's `base_dir`). Other providers define their own `resource`
/// members; their paths refer to the environment and are never resolved on the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvironmentReference {
    /// The environment provider that owns the referenced resource.
    pub provider: String,
    /// Provider-specific identity of the resource, used to verify and attach.
    #[serde(default)]
    pub resource: JsonObject,
}

impl EnvironmentInfo {
    /// The caller-facing view of an adapter-facing handle: variable values are dropped,
    /// their names kept.
    pub fn from_handle(handle: &EnvironmentHandle, released: bool) -> Self {
        EnvironmentInfo {
            environment_id: handle.environment_id.clone(),
            provider: handle.provider.clone(),
            control_location: handle.control_location,
            ownership: handle.ownership,
            workspace: handle.workspace.clone(),
            artifacts: handle.artifacts.clone(),
            env_names: handle.env.keys().cloned().collect(),
            connection: handle.connection.clone(),
            metadata: handle.metadata.clone(),
            released,
            attached: false,
            reference: None,
            handle: None,
            sandbox_observation: None,
        }
    }
}

/// Identity of one started runtime (`fabric_runtime_start`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuntimeInfo {
    /// Runtime id (`runtime-…`).
    pub runtime_id: String,
    /// Resolved agent name (`metadata.name`).
    pub agent_name: String,
    /// Harness identifier (the adapter id).
    pub harness: String,
    /// Adapter kind.
    pub adapter_kind: AdapterKind,
    /// Adapter id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter_id: Option<String>,
    /// Service id, when the runtime uses a shared service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_id: Option<String>,
    /// The environment the runtime runs in.
    pub environment: EnvironmentInfo,
    /// Adapter host process id (also its process-group id).
    pub host_pid: u32,
    /// The runtime's FABRIC_HOME directory.
    pub fabric_home: String,
    /// Whether the selected adapter implements native OpenAI streaming (the plan's
    /// `capabilities.streaming` and the descriptor's claim).
    #[serde(default)]
    pub supports_openai_streaming: bool,
    /// Whether `invoke_stream` (Relay ATOF records) is available: the runtime was started
    /// with `streaming` and Relay telemetry.
    #[serde(default)]
    pub supports_streaming: bool,
    /// The C ABI handle of this runtime, when it was returned through the ABI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle: Option<u64>,
}

/// Lifecycle state of a runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RuntimeState {
    /// Started and idle.
    Idle,
    /// An invocation is in progress.
    Busy,
    /// A host failure made the runtime terminal; only `stop` is useful.
    Failed,
    /// `stop` is in progress.
    Stopping,
    /// Stopped.
    Stopped,
}

impl RuntimeState {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RuntimeState::Idle => "idle",
            RuntimeState::Busy => "busy",
            RuntimeState::Failed => "failed",
            RuntimeState::Stopping => "stopping",
            RuntimeState::Stopped => "stopped",
        }
    }
}

/// A pool of prewarmed adapter hosts (`fabric_prewarm_start`, `fabric_prewarm_status`,
/// `fabric_prewarm_close`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PrewarmInfo {
    /// The C ABI handle of the pool (set by the C ABI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle: Option<u64>,
    /// How many hosts the pool keeps waiting.
    pub hosts: u32,
    /// Process ids of the hosts waiting for `start` now (launched, unclaimed).
    pub ready_pids: Vec<u32>,
    /// Hosts claimed by starts so far.
    pub claimed: u64,
    /// The pool was closed: its unclaimed hosts were terminated.
    pub closed: bool,
}

/// A snapshot of a runtime's state (`fabric_runtime_status`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RuntimeStatusInfo {
    /// Runtime id.
    pub runtime_id: String,
    /// Lifecycle state.
    pub state: RuntimeState,
    /// Invocations started so far.
    pub invocations: u64,
    /// Adapter host process id (also its process-group id).
    pub host_pid: u32,
    /// Start time (Unix milliseconds).
    pub started_at_millis: u64,
    /// The runtime's FABRIC_HOME directory.
    pub fabric_home: String,
    /// Code of the failure that made the runtime terminal, if any.
    #[serde(default)]
    pub failure: Option<String>,
}
