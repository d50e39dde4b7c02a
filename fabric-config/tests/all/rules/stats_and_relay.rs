//! System stats and relay rules.

use serde_json::json;

use super::cases::{accepted, rejected};

#[test]
fn system_stats() {
    accepted(json!({"system_stats": null}));
    accepted(json!({"system_stats": {}}));
    accepted(
        json!({"system_stats": {"collect": ["process", "cgroup.cpu"], "sampling": {"interval_ms": 1000, "max_samples": 10000}}}),
    );
    rejected(
        json!({"system_stats": {"collect": []}}),
        "system_stats_collect_empty",
        "system_stats.collect",
    );
    rejected(
        json!({"system_stats": {"collect": ["process", "cgroup.cpu", "process"]}}),
        "system_stats_group_duplicate",
        "system_stats.collect[2]",
    );
    rejected(
        json!({"system_stats": {"collect": ["process", "gpu"]}}),
        "system_stats_group_unknown",
        "system_stats.collect[1]",
    );
    rejected(
        json!({"system_stats": {"sampling": {"interval_ms": 0}}}),
        "system_stats_interval_zero",
        "system_stats.sampling.interval_ms",
    );
    rejected(
        json!({"system_stats": {"sampling": {"interval_ms": 10, "max_samples": 0}}}),
        "system_stats_max_samples_zero",
        "system_stats.sampling.max_samples",
    );
    // issue 21 item 7: a floor on the cadence and a hard retention cap.
    accepted(json!({"system_stats": {"sampling": {"interval_ms": 10, "max_samples": 100_000}}}));
    rejected(
        json!({"system_stats": {"sampling": {"interval_ms": 1}}}),
        "system_stats_interval_too_small",
        "system_stats.sampling.interval_ms",
    );
    rejected(
        json!({"system_stats": {"sampling": {"max_samples": 100_001}}}),
        "system_stats_max_samples_too_large",
        "system_stats.sampling.max_samples",
    );
    rejected(
        json!({"system_stats": {"sampling": {"max_samples": u64::MAX}}}),
        "system_stats_max_samples_too_large",
        "system_stats.sampling.max_samples",
    );
    rejected(
        json!({"system_stats": {"sampling": {"interval_ms": 10, "cadence": 3}}}),
        "unknown_field",
        "system_stats.sampling.cadence",
    );
}

#[test]
fn relay_rules() {
    accepted(
        json!({"relay": {"observability": {"version": 4, "opentelemetry": {"enabled": true, "file_sinks": [{"type": "openinference"}]}}}}),
    );
    rejected(
        json!({"relay": {"observability": {"version": 3}}}),
        "unsupported_relay_observability_version",
        "relay.observability.version",
    );
    accepted(
        json!({"relay": {"components": [{"kind": "observability", "config": {"version": 4}}]}}),
    );
    rejected(
        json!({"relay": {"components": [{"kind": "observability", "config": {"version": 3}}]}}),
        "unsupported_relay_observability_version",
        "relay.components[0].config.version",
    );
    rejected(
        json!({"relay": {"observability": {"opentelemetry": {"enabled": true}}}}),
        "relay_opentelemetry_without_destination",
        "relay.observability.opentelemetry",
    );
    rejected(
        json!({"relay": {"observability": {"atof": {"sinks": [{"type": "stream", "url": "http://x", "headers": {"X-K": "a\rb"}}]}}}}),
        "invalid_header_value",
        "relay.observability.atof.sinks[0].headers.X-K",
    );
}
