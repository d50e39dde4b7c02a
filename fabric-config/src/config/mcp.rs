//! MCP section: servers, transports, exposure and authentication.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Extensions, default_300, default_true, is_300, is_true};

/// MCP capability configuration (extension point `mcp`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct McpConfig {
    /// Named MCP servers (names non-blank).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub servers: BTreeMap<String, McpServerConfig>,
    /// Undeclared keys (extension point `mcp`).
    #[serde(flatten)]
    pub extensions: Extensions,
}

/// MCP transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum McpTransport {
    /// A child process speaking MCP over stdin/stdout; `url` is the executable.
    #[serde(rename = "stdio")]
    Stdio,
    /// Server-sent events over HTTP.
    #[serde(rename = "sse")]
    Sse,
    /// Streamable HTTP.
    #[serde(rename = "streamable-http")]
    StreamableHttp,
}

impl McpTransport {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            McpTransport::Stdio => "stdio",
            McpTransport::Sse => "sse",
            McpTransport::StreamableHttp => "streamable-http",
        }
    }
}

/// How Fabric exposes an MCP server to the harness.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum McpExposure {
    /// The harness connects to the server itself (default).
    #[default]
    HarnessNative,
    /// Fabric manages the connection (unsupported by planning today).
    FabricManaged,
}

/// One MCP server (extension point `mcp_server`).
#[derive(Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct McpServerConfig {
    /// Transport.
    pub transport: McpTransport,
    /// Server URL, or the executable for `stdio`.
    pub url: String,
    /// Command-line arguments of a `stdio` server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Environment of a `stdio` server process (values never echoed in errors).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Authentication of an HTTP server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<McpAuthentication>,
    /// HTTP headers of an `sse`/`streamable-http` server (values never echoed in errors).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub custom_headers: BTreeMap<String, String>,
    /// Exposure route. Default `harness_native`.
    #[serde(default)]
    pub exposure: McpExposure,
    /// Tools to expose: `None` = every discovered tool, `[]` = none (kept when empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<Vec<String>>,
    /// Tools removed after the optional allowlist.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked_tools: Vec<String>,
    /// Undeclared keys (extension point `mcp_server`).
    #[serde(flatten)]
    pub extensions: Extensions,
}

impl McpServerConfig {
    /// A server with only transport and url set.
    pub fn new(transport: McpTransport, url: impl Into<String>) -> Self {
        McpServerConfig {
            transport,
            url: url.into(),
            args: Vec::new(),
            env: BTreeMap::new(),
            authentication: None,
            custom_headers: BTreeMap::new(),
            exposure: McpExposure::default(),
            allowed_tools: None,
            blocked_tools: Vec::new(),
            extensions: Extensions::new(),
        }
    }
}

/// MCP server authentication, tagged by `type` (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum McpAuthentication {
    /// OAuth 2.0 authorization-code flow.
    Oauth2(McpOAuth2Config),
    /// OAuth 2.0 client-credentials flow for headless workloads.
    ServiceAccount(McpServiceAccountConfig),
}

impl McpAuthentication {
    /// The wire spelling of `type`.
    pub fn kind(&self) -> &'static str {
        match self {
            McpAuthentication::Oauth2(_) => "oauth2",
            McpAuthentication::ServiceAccount(_) => "service_account",
        }
    }
}

/// OAuth client authentication method at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OAuthTokenEndpointAuthMethod {
    /// Public client without a secret.
    None,
    /// Secret in the token request body.
    ClientSecretPost,
    /// Secret via HTTP Basic authentication.
    ClientSecretBasic,
}

/// OAuth 2.0 authorization-code configuration (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpOAuth2Config {
    /// Pre-registered client id; omit to allow dynamic registration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// Environment variable holding the client secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret_env: Option<String>,
    /// Requested scopes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// Pre-registered redirect URI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_uri: Option<String>,
    /// Whether dynamic client registration is allowed (default true; written only when false).
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub enable_dynamic_registration: bool,
    /// Client name advertised during dynamic registration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_name: Option<String>,
    /// Token endpoint client authentication method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<OAuthTokenEndpointAuthMethod>,
    /// Maximum wait for interactive authorization (default 300; written only when different).
    #[serde(default = "default_300", skip_serializing_if = "is_300")]
    #[schemars(range(min = 1))]
    #[serde(deserialize_with = "crate::number::u64_integral")]
    pub authorization_timeout_seconds: u64,
}

impl Default for McpOAuth2Config {
    fn default() -> Self {
        McpOAuth2Config {
            client_id: None,
            client_secret_env: None,
            scopes: Vec::new(),
            redirect_uri: None,
            enable_dynamic_registration: true,
            client_name: None,
            token_endpoint_auth_method: None,
            authorization_timeout_seconds: 300,
        }
    }
}

/// OAuth 2.0 client-credentials configuration (closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServiceAccountConfig {
    /// Client id.
    pub client_id: String,
    /// Environment variable holding the client secret.
    pub client_secret_env: String,
    /// Token endpoint.
    pub token_url: String,
    /// Requested scopes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// Token endpoint client authentication method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<OAuthTokenEndpointAuthMethod>,
    /// Refresh this many seconds before expiry (default 300; written only when different).
    #[serde(default = "default_300", skip_serializing_if = "is_300")]
    #[serde(deserialize_with = "crate::number::u64_integral")]
    pub token_cache_buffer_seconds: u64,
}

impl std::fmt::Debug for McpServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServerConfig")
            .field("transport", &self.transport)
            .field("url", &self.url)
            .field("args", &self.args)
            .field("env", &crate::config::RedactedValues(&self.env))
            .field("authentication", &self.authentication)
            .field(
                "custom_headers",
                &crate::config::RedactedValues(&self.custom_headers),
            )
            .field("exposure", &self.exposure)
            .field("allowed_tools", &self.allowed_tools)
            .field("blocked_tools", &self.blocked_tools)
            .field("extensions", &self.extensions)
            .finish()
    }
}
