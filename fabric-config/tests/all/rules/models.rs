//! URLs, models, temperature, runtime limits and instructions.

use fabric_config::FabricConfig;
use serde_json::json;

use super::cases::{accepted, base, rejected, with};

#[test]
fn urls_are_parsed() {
    let model = |url: &str| json!({"models": {"default": {"provider": "openai", "model": "m", "base_url": url}}});
    accepted(model("http://127.0.0.1:9/v1"));
    accepted(model("https://integrate.api.nvidia.com/v1"));
    for bad in [
        "not a url",
        "integrate.api.nvidia.com/v1",
        "https://x/v1\r\nX-Injected: 1",
        "https://x/\tv1",
        "mailto:someone",
    ] {
        rejected(model(bad), "invalid_url", "models.default.base_url");
    }
    let server = |transport: &str, url: &str| json!({"mcp": {"servers": {"web": {"transport": transport, "url": url}}}});
    accepted(server("sse", "https://mcp.example.com/sse"));
    accepted(server("streamable-http", "http://localhost:8080/mcp"));
    // A stdio server's url is the command to run.
    accepted(server("stdio", "gh-mcp"));
    // Placeholders are expanded by the adapter (upstream's examples use them).
    accepted(server("streamable-http", "${GITHUB_MCP_URL}"));
    accepted(model("https://${NIM_HOST}/v1"));
    rejected(
        server("streamable-http", "${GITHUB_MCP_URL}\r\n"),
        "invalid_url",
        "mcp.servers.web.url",
    );
    rejected(
        server("streamable-http", "mcp.example.com/mcp"),
        "invalid_url",
        "mcp.servers.web.url",
    );
    rejected(
        server("sse", "https://mcp.example.com/\nsse"),
        "invalid_url",
        "mcp.servers.web.url",
    );
}

#[test]
fn models() {
    accepted(
        json!({"models": {"default": {"provider": "nvidia", "model": "m", "top_p": 0.0, "temperature": 0.2, "max_tokens": 1}}}),
    );
    accepted(json!({"models": {"default": {"provider": "nvidia", "model": "m", "top_p": 1.0}}}));
    rejected(
        json!({"models": {"default": {"provider": "nvidia", "model": "m", "top_p": 1.5}}}),
        "top_p_out_of_range",
        "models.default.top_p",
    );
    rejected(
        json!({"models": {"default": {"provider": "nvidia", "model": "m", "top_p": -0.1}}}),
        "top_p_out_of_range",
        "models.default.top_p",
    );
    rejected(
        json!({"models": {"default": {"provider": "nvidia", "model": "m", "max_tokens": 0}}}),
        "max_tokens_zero",
        "models.default.max_tokens",
    );
    rejected(
        json!({"models": {"": {"provider": "nvidia", "model": "m"}}}),
        "blank_model_role",
        "models[\"\"]",
    );
    rejected(
        json!({"models": {"default": {"provider": "NVIDIA", "model": "m"}}}),
        "invalid_model_provider",
        "models.default.provider",
    );
    rejected(
        json!({"models": {"default": {"provider": "nvidia", "model": " "}}}),
        "blank_model_field",
        "models.default.model",
    );
    rejected(
        json!({"models": {"default": {"provider": "nvidia", "model": "m", "api_key_env": ""}}}),
        "blank_model_field",
        "models.default.api_key_env",
    );
}

#[test]
fn temperature_must_be_finite() {
    // JSON cannot carry NaN; configs built in code can.
    let mut config = FabricConfig::from_value(with(json!({
        "models": {"default": {"provider": "nvidia", "model": "m", "temperature": 0.7}}
    })))
    .unwrap();
    assert!(config.validate().is_ok());
    config.models.get_mut("default").unwrap().temperature = Some(f64::NAN);
    let error = config.validate().unwrap_err();
    assert_eq!(error.code(), "temperature_not_finite");
    assert_eq!(error.path(), Some("models.default.temperature"));
}

#[test]
fn runtime_limits() {
    accepted(json!({"runtime": {"max_turns": 1, "timeout_seconds": 0.5}}));
    accepted(json!({"runtime": {"max_turns": 4294967295u64}}));
    rejected(
        json!({"runtime": {"max_turns": 0}}),
        "max_turns_out_of_range",
        "runtime.max_turns",
    );
    rejected(
        json!({"runtime": {"max_turns": 4294967296u64}}),
        "max_turns_out_of_range",
        "runtime.max_turns",
    );
    rejected(
        json!({"runtime": {"timeout_seconds": 0}}),
        "invalid_timeout_seconds",
        "runtime.timeout_seconds",
    );
    rejected(
        json!({"runtime": {"timeout_seconds": -3.0}}),
        "invalid_timeout_seconds",
        "runtime.timeout_seconds",
    );
    let mut config = FabricConfig::from_value(base()).unwrap();
    config.runtime.timeout_seconds = Some(f64::INFINITY);
    assert_eq!(
        config.validate().unwrap_err().code(),
        "invalid_timeout_seconds"
    );
}

#[test]
fn instructions() {
    accepted(json!({"instructions": {"system": {"content": "Review.", "mode": "append"}}}));
    rejected(
        json!({"instructions": {"system": {"content": " \n"}}}),
        "blank_instruction_content",
        "instructions.system.content",
    );
    rejected(
        json!({"instructions": {"system": {"content": "c", "mode": "prepend"}}}),
        "unknown_instruction_mode",
        "instructions.system.mode",
    );
}
