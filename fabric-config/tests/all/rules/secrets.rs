//! Secret values never appear in errors or debug output.

use fabric_config::{ConfigError, ErrorInfo, FabricConfig};
use serde_json::json;

use super::cases::{server, with};

const SENTINEL: &str = "S3CR3T-SENTINEL-VALUE";

fn all_error_text(result: Result<FabricConfig, ConfigError>) -> Vec<String> {
    match result {
        Ok(config) => config
            .validate_all()
            .into_iter()
            .flat_map(|finding| {
                let error = ConfigError::Invalid(finding);
                let info = ErrorInfo::from(error.clone());
                vec![
                    error.to_string(),
                    format!("{error:?}"),
                    format!("{info:?}"),
                    serde_json::to_string(&info).unwrap(),
                ]
            })
            .collect(),
        Err(error) => {
            let info = ErrorInfo::from(error.clone());
            vec![
                error.to_string(),
                format!("{error:?}"),
                format!("{info:?}"),
                serde_json::to_string(&info).unwrap(),
            ]
        }
    }
}

#[test]
fn secret_values_never_appear_in_errors() {
    let cases = [
        // Rule violations next to secret values.
        json!({"environment": {"env": {"TOKEN": SENTINEL}, "env_names": ["TOKEN", "9x"]}}),
        server(json!({"env": {"TOKEN": SENTINEL}})),
        server(json!({"custom_headers": {"Authorization": format!("Bearer {SENTINEL}\r\n")}})),
        server(json!({"custom_headers": {"Bad Name": SENTINEL}})),
        json!({"mcp": {"servers": {"gh": {"transport": "stdio", "url": "x", "custom_headers": {"A": SENTINEL}, "env": {"K": SENTINEL}}}}}),
        // Decode errors where the secret sits in the offending value.
        json!({"environment": {"env": SENTINEL}}),
        json!({"environment": {"env": {"TOKEN": [SENTINEL]}}}),
        server(json!({"custom_headers": SENTINEL})),
        server(json!({"custom_headers": {"X": {"v": SENTINEL}}})),
        server(json!({"transport": SENTINEL})),
        json!({"instructions": {"system": {"content": "c", "mode": SENTINEL}}}),
        json!({"system_stats": {"collect": [SENTINEL]}}),
        json!({"runtime": {"max_turns": SENTINEL}}),
    ];
    for case in cases {
        let value = with(case);
        let texts = all_error_text(FabricConfig::from_value(value.clone()));
        assert!(!texts.is_empty(), "expected an error for {value}");
        let texts_from_str = all_error_text(FabricConfig::from_json_str(&value.to_string()));
        for text in texts.iter().chain(&texts_from_str) {
            assert!(!text.contains(SENTINEL), "secret leaked: {text}");
        }
    }
}

#[test]
fn debug_output_redacts_env_and_header_values() {
    use fabric_config::agent::{AgentMcpServerConfig, EnvironmentHandle, RuntimeTelemetryContext};
    let config = FabricConfig::from_value(with(json!({
        "environment": {"env": {"TOKEN": SENTINEL}},
        "mcp": {"servers": {
            "a": {"transport": "stdio", "url": "x", "env": {"TOKEN": SENTINEL}},
            "b": {"transport": "sse", "url": "https://x", "custom_headers": {"Authorization": SENTINEL}}
        }},
        "relay": {"observability": {
            "atof": {"sinks": [{"type": "stream", "url": "http://x", "headers": {"A": SENTINEL}}]},
            "opentelemetry": {"endpoints": [{"type": "full", "endpoint": "http://x", "headers": {"A": SENTINEL}}]}
        }}
    })))
    .unwrap();
    let debug = format!("{config:?}");
    assert!(!debug.contains(SENTINEL), "{debug}");
    assert!(
        debug.contains("TOKEN") && debug.contains("Authorization"),
        "names stay visible"
    );

    let server: AgentMcpServerConfig = serde_json::from_value(json!({
        "transport": "sse", "url": "https://x",
        "env": {"K": SENTINEL}, "custom_headers": {"H": SENTINEL}
    }))
    .unwrap();
    let handle: EnvironmentHandle = serde_json::from_value(json!({
        "environment_id": "env-1", "provider": "local", "control_location": "in_env_control",
        "ownership": "caller_owned", "env": {"K": SENTINEL}
    }))
    .unwrap();
    let telemetry: RuntimeTelemetryContext =
        serde_json::from_value(json!({"relay_enabled": true, "env": {"K": SENTINEL}})).unwrap();
    for text in [
        format!("{server:?}"),
        format!("{handle:?}"),
        format!("{telemetry:?}"),
    ] {
        assert!(!text.contains(SENTINEL), "{text}");
    }
}
