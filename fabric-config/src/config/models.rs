//! Models section: named model endpoints.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Extensions, JsonObject};

/// One model role (extension point `model`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelConfig {
    /// Model provider name (lowercase identifier).
    pub provider: String,
    /// Provider model identifier.
    pub model: String,
    /// Environment variable holding the API key (its name, never its value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Provider endpoint URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Sampling temperature (finite).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling probability in `[0, 1]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub top_p: Option<f64>,
    /// Maximum response tokens (>= 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    #[serde(deserialize_with = "crate::number::option_u64_integral")]
    pub max_tokens: Option<u64>,
    /// Provider-specific settings validated by the descriptor's `model_schema`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: JsonObject,
    /// Undeclared keys (extension point `model`).
    #[serde(flatten)]
    pub extensions: Extensions,
}

impl ModelConfig {
    /// A model role with only provider and model set.
    pub fn new(provider: impl Into<String>, model: impl Into<String>) -> Self {
        ModelConfig {
            provider: provider.into(),
            model: model.into(),
            api_key_env: None,
            base_url: None,
            temperature: None,
            top_p: None,
            max_tokens: None,
            settings: JsonObject::new(),
            extensions: Extensions::new(),
        }
    }
}
