//! Tools section: tool definitions.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Extensions, JsonObject};

/// Harness-neutral tool policy and definitions (extension point `tools`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolsConfig {
    /// Named tool and tool-group definitions resolved by the adapter.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub definitions: BTreeMap<String, ToolDefinitionConfig>,
    /// Tools to expose: `None` keeps the harness default, `[]` disables all (kept when empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<Vec<String>>,
    /// Tools to deny.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<String>,
    /// Undeclared keys (extension point `tools`).
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// One named tool or tool-group definition (extension point `tool_definition`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolDefinitionConfig {
    /// Portable category, such as `function` or `function_group`.
    pub kind: String,
    /// Adapter-resolved component or factory reference (wire name `ref`).
    #[serde(rename = "ref")]
    pub reference: String,
    /// Settings validated by the descriptor's `tool_definition_schema`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: JsonObject,
    /// Undeclared keys (extension point `tool_definition`).
    #[serde(flatten)]
    pub extensions: Extensions,
}
