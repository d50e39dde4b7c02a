//! Instructions and skills sections.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Extensions;

/// How a system instruction is applied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InstructionMode {
    /// Replace the harness's native system instruction (default).
    #[default]
    Replace,
    /// Append to the harness's native system instruction.
    Append,
}

impl InstructionMode {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            InstructionMode::Replace => "replace",
            InstructionMode::Append => "append",
        }
    }
}

/// Harness-neutral instructions (extension point `instructions`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InstructionsConfig {
    /// The system instruction; omit to keep the harness's native one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<InstructionConfig>,
    /// Undeclared keys (extension point `instructions`).
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// One instruction value (extension point `instruction`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InstructionConfig {
    /// Instruction text (non-blank).
    pub content: String,
    /// `replace` (default) or `append`.
    #[serde(default)]
    pub mode: InstructionMode,
    /// Undeclared keys (extension point `instruction`).
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// Skill paths (extension point `skills`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillConfig {
    /// Skill paths, relative to the base directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// Undeclared keys (extension point `skills`).
    #[serde(flatten)]
    pub extensions: Extensions,
}
