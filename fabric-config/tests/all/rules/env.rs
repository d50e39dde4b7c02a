//! Environment values and environment variable names.

use serde_json::json;

use super::cases::{accepted, rejected};

#[test]
fn env_and_env_names() {
    accepted(
        json!({"environment": {"env": {"LOG_LEVEL": "debug"}, "env_names": ["GITHUB_TOKEN", "_X1"]}}),
    );
    rejected(
        json!({"environment": {"env": {"GITHUB_TOKEN": "x"}, "env_names": ["A", "GITHUB_TOKEN"]}}),
        "env_names_conflict",
        "environment.env_names[1]",
    );
    rejected(
        json!({"environment": {"env_names": ["1BAD"]}}),
        "invalid_env_name",
        "environment.env_names[0]",
    );
    rejected(
        json!({"environment": {"env_names": ["BAD-NAME"]}}),
        "invalid_env_name",
        "environment.env_names[0]",
    );
    rejected(
        json!({"environment": {"env": {" ": "x"}}}),
        "blank_env_name",
        "environment.env[\" \"]",
    );
}

#[test]
fn env_keys_follow_the_env_name_rule() {
    // A key containing `=` would otherwise override a variable the core sets
    // (`FABRIC_HOME=/tmp/x` + value becomes a second FABRIC_HOME entry).
    rejected(
        json!({"environment": {"env": {"FABRIC_HOME=/tmp/x": "y"}}}),
        "invalid_env_name",
        "environment.env.FABRIC_HOME=/tmp/x",
    );
    rejected(
        json!({"environment": {"env": {"LD_PRELOAD\0": "y"}}}),
        "invalid_env_name",
        "environment.env[\"LD_PRELOAD\\u0000\"]",
    );
    accepted(json!({"environment": {"env": {"_A1": "x", "FABRIC_LOG": "1"}}}));
}

#[test]
fn env_names_reserved_by_the_core() {
    for name in [
        "FABRIC_HOME",
        "FABRIC_RUNTIME_ID",
        "FABRIC_ARTIFACTS",
        "FABRIC_RELAY_ENABLED",
        "FABRIC_RELAY_CONFIG_PATH",
    ] {
        rejected(
            json!({"environment": {"env": {name: "x"}}}),
            "env_name_reserved",
            &format!("environment.env.{name}"),
        );
        rejected(
            json!({"environment": {"env_names": ["A", name]}}),
            "env_name_reserved",
            "environment.env_names[1]",
        );
    }
}

/// Issue 33 item 8: a NUL byte in a value the core hands to the operating system (an
/// environment variable's value, the workspace and artifact paths, skill, discovery and
/// Relay output paths) is a config error naming the field, not a launch failure later.
#[test]
fn nul_bytes_in_values_bound_for_the_os_are_rejected_naming_the_field() {
    let cases = [
        (
            json!({"environment": {"env": {"API_TOKEN": "S3CR3T\0x"}}}),
            "environment.env.API_TOKEN",
        ),
        (
            json!({"environment": {"workspace": "ws\0"}}),
            "environment.workspace",
        ),
        (
            json!({"environment": {"artifacts": "a\0b"}}),
            "environment.artifacts",
        ),
        (json!({"runtime": {"artifacts": "\0"}}), "runtime.artifacts"),
        (
            json!({"skills": {"paths": ["ok", "s\0"]}}),
            "skills.paths[1]",
        ),
        (
            json!({"discovery": {"local_paths": ["d\0"]}}),
            "discovery.local_paths[0]",
        ),
        (json!({"relay": {"output_dir": "r\0"}}), "relay.output_dir"),
    ];
    for (patch, path) in cases {
        rejected(patch, "nul_byte", path);
    }
    accepted(json!({"environment": {"env": {"A": "x y"}, "workspace": "ws", "artifacts": "a"}}));
}
