//! Checks of a config for Relay ATOF streaming through an externally managed collector
//! (`launch_collector = false`): the rules upstream 0.5.0's SDK applies before it starts such
//! a runtime, each reported as a [`ConfigFinding`] naming the field.
//!
//! ```
//! use fabric_config::FabricConfig;
//! use fabric_config::relay_collector::check_external_collector;
//!
//! let config = FabricConfig::from_json_str(r#"{
//!     "schema_version": "fabric.agent/v1alpha1",
//!     "metadata": {"name": "streaming"},
//!     "harness": {"adapter_id": "nvidia.fabric.deepagents"},
//!     "telemetry": {"providers": {"relay": {}}},
//!     "relay": {"observability": {"atof": {"enabled": true, "sinks": [
//!         {"type": "stream", "name": "nemo-fabric-stream", "transport": "ndjson",
//!          "url": "https://collector.example:8443", "header_env": {"Authorization": "COLLECTOR_TOKEN"}}
//!     ]}}}
//! }"#).unwrap();
//! let findings = check_external_collector(&config, |_| None);
//! assert_eq!(findings[0].code(), "relay_stream_header_env_unset");
//! assert_eq!(findings[0].path, "relay.observability.atof.sinks[0].header_env.Authorization");
//! assert!(check_external_collector(&config, |_| Some("token".into())).is_empty());
//! ```

use crate::config::{FabricConfig, RelayAtofSinkConfig, RelayAtofStreamTransport};
use crate::error::{ConfigFinding, ConfigRule};
use crate::validate::{join_index, join_key};

/// The ATOF sink name Fabric's collector reads.
pub const STREAM_SINK_NAME: &str = "nemo-fabric-stream";

const SINKS: &str = "relay.observability.atof.sinks";

/// Findings for an external collector: exactly one sink named [`STREAM_SINK_NAME`] in an
/// enabled `relay.observability.atof` (`relay_stream_sink_missing`, then
/// `relay_stream_sink_duplicate` at each extra one), a `stream` sink
/// (`relay_stream_sink_not_stream`) with `transport: ndjson` (`relay_stream_sink_transport`)
/// and an `http`/`https` URL with a host and without user info, query or fragment
/// (`relay_stream_sink_url`), and every `header_env` variable set according to `env`
/// (`relay_stream_header_env_unset`, naming the header; the variable name is the detail,
/// its value is never read into a finding). Empty when the config passes.
pub fn check_external_collector(
    config: &FabricConfig,
    env: impl Fn(&str) -> Option<String>,
) -> Vec<ConfigFinding> {
    let finding = |rule, path: String, detail: Option<String>| ConfigFinding { rule, path, detail };
    let atof = config
        .relay
        .as_ref()
        .and_then(|relay| relay.observability.as_ref())
        .and_then(|observability| observability.atof.as_ref())
        .filter(|atof| atof.enabled == Some(true));
    let named: Vec<(usize, &RelayAtofSinkConfig)> = atof
        .map(|atof| {
            atof.sinks
                .iter()
                .enumerate()
                .filter(|(_, sink)| sink_name(sink) == Some(STREAM_SINK_NAME))
                .collect()
        })
        .unwrap_or_default();
    let Some(&(index, sink)) = named.first() else {
        return vec![finding(
            ConfigRule::RelayStreamSinkMissing,
            SINKS.to_owned(),
            None,
        )];
    };
    let mut out: Vec<ConfigFinding> = named[1..]
        .iter()
        .map(|(extra, _)| {
            finding(
                ConfigRule::RelayStreamSinkDuplicate,
                join_index(SINKS, *extra),
                None,
            )
        })
        .collect();
    let base = join_index(SINKS, index);
    let RelayAtofSinkConfig::Stream(stream) = sink else {
        out.push(finding(
            ConfigRule::RelayStreamSinkNotStream,
            join_key(&base, "type"),
            None,
        ));
        return out;
    };
    if stream.transport != Some(RelayAtofStreamTransport::Ndjson) {
        out.push(finding(
            ConfigRule::RelayStreamSinkTransport,
            join_key(&base, "transport"),
            None,
        ));
    }
    if !collector_url_ok(&stream.url) {
        out.push(finding(
            ConfigRule::RelayStreamSinkUrl,
            join_key(&base, "url"),
            None,
        ));
    }
    let header_env = join_key(&base, "header_env");
    for (header, variable) in &stream.header_env {
        if env(variable).is_none() {
            out.push(finding(
                ConfigRule::RelayStreamHeaderEnvUnset,
                join_key(&header_env, header),
                Some(format!("variable {variable}")),
            ));
        }
    }
    out
}

fn sink_name(sink: &RelayAtofSinkConfig) -> Option<&str> {
    match sink {
        RelayAtofSinkConfig::Stream(stream) => stream.name.as_deref(),
        RelayAtofSinkConfig::File(file) => file.extensions.get("name").and_then(|v| v.as_str()),
    }
}

/// An `http`/`https` URL with a host, no user info, query or fragment.
fn collector_url_ok(text: &str) -> bool {
    let Ok(url) = url::Url::parse(text) else {
        return false;
    };
    matches!(url.scheme(), "http" | "https")
        && url.host_str().is_some_and(|host| !host.is_empty())
        && url.username().is_empty()
        && url.password().is_none()
        && url.query().is_none()
        && url.fragment().is_none()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn config(atof: Value) -> FabricConfig {
        let value = json!({
            "schema_version": "fabric.agent/v1alpha1",
            "metadata": {"name": "streaming"},
            "harness": {"adapter_id": "a"},
            "telemetry": {"providers": {"relay": {}}},
            "relay": {"observability": {"atof": atof}}
        });
        FabricConfig::from_value(value).expect("config")
    }

    fn codes(config: &FabricConfig) -> Vec<(&'static str, String)> {
        check_external_collector(config, |name| (name == "SET").then(|| "x".to_owned()))
            .into_iter()
            .map(|f| (f.code(), f.path))
            .collect()
    }

    fn sink(extra: Value) -> Value {
        let mut sink = json!({"type": "stream", "name": "nemo-fabric-stream", "transport": "ndjson",
                              "url": "http://127.0.0.1:7000/base"});
        for (k, v) in extra.as_object().expect("object") {
            sink[k] = v.clone();
        }
        sink
    }

    #[test]
    fn a_valid_sink_passes() {
        let ok = config(json!({"enabled": true, "sinks": [
            {"type": "file"}, sink(json!({"header_env": {"Authorization": "SET"}}))]}));
        assert!(codes(&ok).is_empty());
    }

    #[test]
    fn each_violation_names_its_field() {
        let base = "relay.observability.atof.sinks";
        assert_eq!(
            codes(&config(
                json!({"enabled": false, "sinks": [sink(json!({}))]})
            )),
            [("relay_stream_sink_missing", base.to_owned())]
        );
        assert_eq!(
            codes(&config(
                json!({"enabled": true, "sinks": [sink(json!({"name": "other"}))]})
            )),
            [("relay_stream_sink_missing", base.to_owned())]
        );
        assert_eq!(
            codes(&config(
                json!({"enabled": true, "sinks": [sink(json!({})), sink(json!({}))]})
            )),
            [("relay_stream_sink_duplicate", format!("{base}[1]"))]
        );
        assert_eq!(
            codes(&config(
                json!({"enabled": true, "sinks": [{"type": "file", "name": "nemo-fabric-stream"}]})
            )),
            [("relay_stream_sink_not_stream", format!("{base}[0].type"))]
        );
        assert_eq!(
            codes(&config(
                json!({"enabled": true, "sinks": [sink(json!({"transport": "http_post"}))]})
            )),
            [(
                "relay_stream_sink_transport",
                format!("{base}[0].transport")
            )]
        );
        for url in [
            "ftp://host/x",
            "http://user:secret@host/x",
            "http://host/x?token=1",
            "http://host/x#f",
            "not a url",
            "http://host:99999/",
        ] {
            assert_eq!(
                codes(&config(
                    json!({"enabled": true, "sinks": [sink(json!({"url": url}))]})
                )),
                [("relay_stream_sink_url", format!("{base}[0].url"))],
                "{url}"
            );
        }
        let unset = config(
            json!({"enabled": true, "sinks": [sink(json!({"header_env": {"X-Key": "UNSET"}}))]}),
        );
        let findings = check_external_collector(&unset, |_| None);
        assert_eq!(findings[0].path, format!("{base}[0].header_env.X-Key"));
        assert_eq!(findings[0].detail.as_deref(), Some("variable UNSET"));
        // Messages never carry the URL (it may hold credentials).
        let secret = config(
            json!({"enabled": true, "sinks": [sink(json!({"url": "http://u:hunter2@h/"}))]}),
        );
        let text = check_external_collector(&secret, |_| None)[0].to_string();
        assert!(!text.contains("hunter2"), "{text}");
    }
}
