//! Closed decoders for the parts of the southbound contract this adapter reads.
//!
//! Unknown keys are rejected the way upstream's typed models reject them; blocks this
//! adapter never reads (`skills`, `mcp`, `tools`, `workflow`) are accepted as opaque JSON.
//! Many fields are decoded only so the closed shape is enforced, hence `dead_code`.

#![allow(dead_code)]

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

/// `AgentConfig` (`config` in the start payload).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    #[serde(default)]
    pub harness: Option<HarnessConfig>,
    #[serde(default)]
    pub models: BTreeMap<String, ModelConfig>,
    #[serde(default)]
    pub instructions: Option<InstructionsConfig>,
    #[serde(default)]
    pub runtime: Option<RuntimeConfig>,
    #[serde(default)]
    pub skills: Option<Value>,
    #[serde(default)]
    pub mcp: Option<Value>,
    #[serde(default)]
    pub tools: Option<Value>,
    #[serde(default)]
    pub workflow: Option<Value>,
    #[serde(default)]
    pub extensions: Map<String, Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HarnessConfig {
    #[serde(default)]
    pub settings: Map<String, Value>,
    #[serde(default)]
    pub extensions: Map<String, Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    pub provider: String,
    pub model: String,
    #[serde(default)]
    pub api_key_env: Option<String>,
    #[serde(default)]
    pub temperature: Option<f64>,
    #[serde(default)]
    pub top_p: Option<f64>,
    #[serde(default)]
    pub max_tokens: Option<u64>,
    #[serde(default)]
    pub base_url: Option<String>,
    #[serde(default)]
    pub settings: Map<String, Value>,
    #[serde(default)]
    pub extensions: Map<String, Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstructionsConfig {
    #[serde(default)]
    pub system: Option<InstructionConfig>,
    #[serde(default)]
    pub extensions: Map<String, Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstructionConfig {
    pub content: String,
    #[serde(default)]
    pub mode: InstructionMode,
    #[serde(default)]
    pub extensions: Map<String, Value>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InstructionMode {
    #[default]
    Replace,
    Append,
}

impl InstructionMode {
    pub fn as_str(self) -> &'static str {
        match self {
            InstructionMode::Replace => "replace",
            InstructionMode::Append => "append",
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeConfig {
    #[serde(default)]
    pub max_turns: Option<u32>,
    #[serde(default)]
    pub extensions: Map<String, Value>,
}

impl AgentConfig {
    /// Decodes and checks the constraints upstream's models add to field types.
    pub fn decode(value: &Value) -> Result<AgentConfig, String> {
        let config = AgentConfig::deserialize(value).map_err(|e| e.to_string())?;
        for (role, model) in &config.models {
            if model.provider.trim().is_empty() || model.model.trim().is_empty() {
                return Err(format!(
                    "models.{role}: provider and model must be non-blank"
                ));
            }
            if let Some(top_p) = model.top_p {
                if !(0.0..=1.0).contains(&top_p) {
                    return Err(format!("models.{role}.top_p must be between 0 and 1"));
                }
            }
            if model.max_tokens == Some(0) {
                return Err(format!("models.{role}.max_tokens must be at least 1"));
            }
        }
        if let Some(system) = config.instructions.as_ref().and_then(|i| i.system.as_ref()) {
            if system.content.trim().is_empty() {
                return Err("instructions.system.content must be non-blank".into());
            }
        }
        if config.runtime.as_ref().and_then(|r| r.max_turns) == Some(0) {
            return Err("runtime.max_turns must be at least 1".into());
        }
        Ok(config)
    }
}

/// `RuntimeContext` (closed, no `extensions`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeContext {
    pub runtime_id: String,
    pub invocation_id: String,
    pub request_id: String,
    pub environment: EnvironmentHandle,
    pub artifacts: ArtifactManifest,
    #[serde(default)]
    pub telemetry: Option<TelemetryContext>,
    #[serde(default)]
    pub deadline_millis: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvironmentHandle {
    pub environment_id: String,
    pub provider: String,
    pub control_location: ControlLocation,
    #[serde(default)]
    pub workspace: Option<String>,
    #[serde(default)]
    pub artifacts: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub ownership: Ownership,
    #[serde(default)]
    pub connection: Map<String, Value>,
    #[serde(default)]
    pub metadata: Map<String, Value>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlLocation {
    ExternalControl,
    InEnvControl,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ownership {
    CallerOwned,
    FabricOwned,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArtifactManifest {
    #[serde(default)]
    pub root: Option<String>,
    #[serde(default)]
    pub artifacts: Vec<ArtifactRef>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArtifactRef {
    pub name: String,
    pub kind: String,
    pub path: String,
    #[serde(default)]
    pub media_type: Option<String>,
    #[serde(default)]
    pub metadata: Map<String, Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetryContext {
    pub relay_enabled: bool,
    #[serde(default)]
    pub config_path: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub metadata: Map<String, Value>,
}

/// `AgentRunRequest`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentRunRequest {
    pub input: Value,
    #[serde(default)]
    pub relay_session_root: Option<String>,
    #[serde(default)]
    pub context: Map<String, Value>,
    #[serde(default)]
    pub extensions: Map<String, Value>,
}
