//! The Relay plugin configuration of a plan (`telemetry_plan.relay_config`): the `relay`
//! block rebuilt as Relay's plugin document, with the defaults upstream 0.5.0 writes.

use fabric_config::FabricConfig;
use fabric_config::codes;
use serde_json::{Map, Value, json};

use crate::compat::selected_model;

/// The ATIF model label: `default`, else the only model, else `"unknown"`.
pub(crate) fn atif_model_label(config: &FabricConfig) -> String {
    match selected_model(config) {
        Ok(Some((_, model))) => model.model.clone(),
        _ => "unknown".to_owned(),
    }
}

/// The Relay plugin configuration handed to the adapter's Relay integration, as upstream 0.5.0
/// builds it: version 1, the `relay.observability` block as one `observability` component
/// (with the defaults of [`fill_observability_defaults`]), then `relay.components`
/// (`enabled` defaults to true), `policy` (Relay's defaults `warn`/`warn`/`error` filled) and
/// `plugins` as given (the spec forwards dynamic plugins even without static components;
/// upstream 0.5.0 drops them). A Relay block that configures none of these has no Relay
/// config (`null`), as upstream.
pub fn relay_config(config: &FabricConfig) -> Value {
    let Some(relay) = &config.relay else {
        return Value::Null;
    };
    if relay.observability.is_none()
        && relay.components.is_empty()
        && relay.policy.is_none()
        && relay.plugins.is_none()
    {
        return Value::Null;
    }
    let mut components = Vec::new();
    if let Some(observability) = &relay.observability {
        let mut block = serde_json::to_value(observability).unwrap_or_else(|_| json!({}));
        if let Some(object) = block.as_object_mut() {
            fill_observability_defaults(object, &atif_model_label(config));
        }
        components.push(json!({"kind": "observability", "enabled": true, "config": block}));
    }
    for component in &relay.components {
        let mut value = serde_json::to_value(component).unwrap_or(Value::Null);
        if let Some(object) = value.as_object_mut() {
            object.entry("enabled").or_insert(json!(true));
        }
        components.push(value);
    }
    let mut out = Map::new();
    out.insert("version".to_owned(), json!(1));
    out.insert("components".to_owned(), Value::Array(components));
    if let Some(policy) = &relay.policy {
        let mut value = serde_json::to_value(policy).unwrap_or(Value::Null);
        if let Some(object) = value.as_object_mut() {
            object.entry("unknown_component").or_insert(json!("warn"));
            object.entry(codes::UNKNOWN_FIELD).or_insert(json!("warn"));
            object.entry("unsupported_value").or_insert(json!("error"));
        }
        out.insert("policy".to_owned(), value);
    }
    if let Some(plugins) = &relay.plugins {
        out.insert(
            "plugins".to_owned(),
            serde_json::to_value(plugins).unwrap_or(Value::Null),
        );
    }
    Value::Object(out)
}

/// Fills the defaults upstream 0.5.0 writes into an observability block (values observed
/// from its plans; keys already given are kept):
///
/// - the block: `version` 4, `enable_full_payloads` false;
/// - `atof`, `atif`, `opentelemetry` objects: `enabled` false;
/// - ATOF file sinks: `mode` `append`; ATOF stream sinks: `transport` `http_post`,
///   `timeout_millis` 3000, `field_name_policy` `preserve`;
/// - ATIF: `agent_name` `NeMo Relay`, `filename_template`
///   `nemo-relay-atif-{session_id}.json`, `model_name` = `model_label`; ATIF storage: `s3`
///   `bucket` `""`, `http` `endpoint` `""` and `timeout_millis` 3000;
/// - OpenTelemetry endpoints: `transport` `http_binary`, `timeout_millis` 3000,
///   `mark_projection` `inherit`, `mark_exclude_names` `["llm.chunk"]`, `service_name`
///   `unknown_service`, `instrumentation_scope` `opentelemetry` (file sinks as given).
fn fill_observability_defaults(block: &mut Map<String, Value>, model_label: &str) {
    block.entry("version").or_insert(json!(4));
    block.entry("enable_full_payloads").or_insert(json!(false));
    if let Some(atof) = block.get_mut("atof").and_then(Value::as_object_mut) {
        atof.entry("enabled").or_insert(json!(false));
        for sink in objects(atof.get_mut("sinks")) {
            match sink.get("type").and_then(Value::as_str) {
                Some("file") => defaults(sink, [("mode", json!("append"))]),
                Some("stream") => defaults(
                    sink,
                    [
                        ("transport", json!("http_post")),
                        ("timeout_millis", json!(3000)),
                        ("field_name_policy", json!("preserve")),
                    ],
                ),
                _ => {}
            }
        }
    }
    if let Some(atif) = block.get_mut("atif").and_then(Value::as_object_mut) {
        defaults(
            atif,
            [
                ("enabled", json!(false)),
                ("agent_name", json!("NeMo Relay")),
                (
                    "filename_template",
                    json!("nemo-relay-atif-{session_id}.json"),
                ),
                ("model_name", json!(model_label)),
            ],
        );
        for storage in objects(atif.get_mut("storage")) {
            match storage.get("type").and_then(Value::as_str) {
                Some("s3") => defaults(storage, [("bucket", json!(""))]),
                Some("http") => {
                    defaults(
                        storage,
                        [("endpoint", json!("")), ("timeout_millis", json!(3000))],
                    );
                    for key in ["headers", "header_env"] {
                        if storage
                            .get(key)
                            .and_then(Value::as_object)
                            .is_some_and(Map::is_empty)
                        {
                            storage.remove(key);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    if let Some(otel) = block
        .get_mut("opentelemetry")
        .and_then(Value::as_object_mut)
    {
        otel.entry("enabled").or_insert(json!(false));
        for endpoint in objects(otel.get_mut("endpoints")) {
            defaults(
                endpoint,
                [
                    ("transport", json!("http_binary")),
                    ("timeout_millis", json!(3000)),
                    ("mark_projection", json!("inherit")),
                    ("mark_exclude_names", json!(["llm.chunk"])),
                    ("service_name", json!("unknown_service")),
                    ("instrumentation_scope", json!("opentelemetry")),
                ],
            );
        }
    }
}

/// The object elements of an optional array.
fn objects(value: Option<&mut Value>) -> impl Iterator<Item = &mut Map<String, Value>> {
    value
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

fn defaults<const N: usize>(object: &mut Map<String, Value>, pairs: [(&str, Value); N]) {
    for (key, value) in pairs {
        object.entry(key).or_insert(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sink_storage_and_endpoint_defaults_are_filled_and_given_values_kept() {
        let mut block = json!({
            "atof": {"sinks": [{"type": "file", "mode": "overwrite"}, {"type": "stream", "url": "http://x", "timeout_millis": 9}]},
            "atif": {"storage": [{"type": "s3"}, {"type": "http", "headers": {}}]},
            "opentelemetry": {"endpoints": [{"type": "full", "endpoint": "http://y", "mark_exclude_names": []}]}
        });
        fill_observability_defaults(block.as_object_mut().expect("object"), "m");
        assert_eq!(
            block,
            json!({
                "version": 4, "enable_full_payloads": false,
                "atof": {"enabled": false, "sinks": [
                    {"type": "file", "mode": "overwrite"},
                    {"type": "stream", "url": "http://x", "timeout_millis": 9, "transport": "http_post", "field_name_policy": "preserve"}]},
                "atif": {"enabled": false, "agent_name": "NeMo Relay", "model_name": "m",
                         "filename_template": "nemo-relay-atif-{session_id}.json",
                         "storage": [{"type": "s3", "bucket": ""}, {"type": "http", "endpoint": "", "timeout_millis": 3000}]},
                "opentelemetry": {"enabled": false, "endpoints": [{
                    "type": "full", "endpoint": "http://y", "mark_exclude_names": [], "transport": "http_binary",
                    "timeout_millis": 3000, "mark_projection": "inherit", "service_name": "unknown_service",
                    "instrumentation_scope": "opentelemetry"}]}
            })
        );
    }
}
