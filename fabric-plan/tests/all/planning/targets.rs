//! Workflow targets, capability routes, telemetry, relay, base-dir resolution and the
//! descriptor fingerprint.

use std::path::Path;

use fabric_config::plan::{CapabilityTarget, DescriptorSource};
use fabric_plan::{PlanError, inspect, plan};
use serde_json::json;

use super::world::{World, options, rejected};

#[test]
fn workflow_targets_and_settings() {
    let Some(world) = World::new() else {
        return;
    };
    let models = json!({"default": {"provider": "openai", "model": "m", "api_key_env": "K"}});
    let plan = world
        .plan(json!({"workflow": {"target_id": "nvidia.nooa.arc-solver", "settings": {"png_scale": 2}}, "models": models}))
        .expect("arc solver");
    let workflow = plan.agent_config.workflow.as_ref().expect("workflow");
    assert_eq!(workflow.entrypoint.kind, "interactive_agent_factory");
    assert_eq!(workflow.settings["png_scale"], json!(2));
    assert_eq!(
        plan.adapter_descriptor
            .as_ref()
            .expect("a")
            .descriptor
            .adapter_id,
        "nvidia.fabric.nooa"
    );
    let target = plan.adapter_target_descriptor.as_ref().expect("target");
    assert_eq!(target.provenance[0].source, DescriptorSource::ExplicitLocal);
    let error = rejected(
        world.plan(json!({"workflow": {"target_id": "nvidia.nooa.arc-solver", "settings": {"png_scale": 0}}, "models": models})),
        "config_schema_violation",
        "workflow.settings.png_scale",
    );
    let target_file = world
        .base()
        .join("catalog/nvidia.nooa.arc-solver.fabric-target.json");
    assert_eq!(error.file(), Some(target_file.as_path()));
    rejected(
        world.plan(json!({"workflow": {"target_id": "nvidia.nooa.coding-agent", "settings": {"x": 1}}, "models": models})),
        "config_schema_violation",
        "workflow.settings.x",
    );
    world
        .plan(json!({"harness": {"adapter_id": "nvidia.fabric.nooa"}, "workflow": {"target_id": "nvidia.nooa.coding-agent"}, "models": models}))
        .expect("matching harness");
    rejected(
        world.plan(json!({"harness": {"adapter_id": "nvidia.fabric.claude"}, "workflow": {"target_id": "nvidia.nooa.coding-agent"}})),
        "target_mismatch",
        "workflow.target_id",
    );
    rejected(
        world.plan(json!({"workflow": {"target_id": "nvidia.nooa.nope"}})),
        "target_not_found",
        "workflow.target_id",
    );
    // Settings defaults of the target schema are not applied.
    let plan = world
        .plan(json!({"workflow": {"target_id": "test.fabric.everything.react"}}))
        .expect("fixture target");
    assert!(plan.agent_config.workflow.expect("w").settings.is_empty());
}

#[test]
fn capability_routes() {
    let Some(world) = World::new() else {
        return;
    };
    let plan = world
        .plan(json!({"harness": {"adapter_id": "nvidia.fabric.claude"},
                     "skills": {"paths": ["./skills/review"]},
                     "tools": {"enabled": ["Read"], "blocked": ["Bash"]},
                     "mcp": {"servers": {"gh": {"transport": "stdio", "url": "gh-mcp"}}}}))
        .expect("claude routes");
    let routes: Vec<(String, CapabilityTarget)> = plan
        .capability_plan
        .routes
        .iter()
        .map(|r| (r.name.clone(), r.target))
        .collect();
    assert_eq!(
        routes,
        vec![
            ("tools.enabled".to_owned(), CapabilityTarget::HarnessNative),
            ("tools.blocked".to_owned(), CapabilityTarget::HarnessNative),
            ("skills".to_owned(), CapabilityTarget::HarnessNative),
            ("gh".to_owned(), CapabilityTarget::HarnessNative),
        ]
    );
    assert!(plan.capability_plan.native.tools_configured);
    assert!(plan.capability_plan.native.mcp_servers.contains_key("gh"));
    let skill = world.base().join("skills/review").display().to_string();
    assert_eq!(plan.capability_plan.native.skill_paths, vec![skill.clone()]);
    assert_eq!(plan.agent_config.skills.expect("skills").paths, vec![skill]);
    rejected(
        world.plan(json!({"harness": {"adapter_id": "nvidia.fabric.claude"},
                          "mcp": {"servers": {"gh": {"transport": "stdio", "url": "gh", "exposure": "fabric_managed"}}}})),
        "config_incompatible",
        "mcp.servers.gh",
    );
    rejected(
        world.plan(json!({"harness": {"adapter_id": "nvidia.fabric.mini-swe-agent"}, "skills": {"paths": ["s"]}})),
        "config_incompatible",
        "skills",
    );
}

#[test]
fn telemetry_providers_must_be_declared() {
    let Some(world) = World::new() else {
        return;
    };
    let plan = world
        .plan(json!({"harness": {"adapter_id": "nvidia.fabric.codex"}, "telemetry": {"providers": {"native": {"config": {"k": 1}}}}}))
        .expect("codex native");
    let telemetry = plan.telemetry_plan.expect("telemetry");
    assert!(!telemetry.relay_enabled);
    assert_eq!(telemetry.native_config, Some(json!({"k": 1})));
    rejected(
        world.plan(json!({"harness": {"adapter_id": "nvidia.fabric.claude"}, "telemetry": {"providers": {"native": {}}}})),
        "config_incompatible",
        "telemetry.providers.native",
    );
    rejected(
        world.plan(json!({"harness": {"adapter_id": "nvidia.fabric.cline"}, "telemetry": {"providers": {"relay": {}}}})),
        "config_incompatible",
        "telemetry.providers.relay",
    );
    let plan = world
        .plan(json!({"harness": {"adapter_id": "nvidia.fabric.claude"}, "telemetry": {"providers": {"relay": {}}},
                     "relay": {"project": "p", "output_dir": "./artifacts/relay"}}))
        .expect("relay");
    let telemetry = plan.telemetry_plan.expect("telemetry");
    assert!(telemetry.relay_enabled);
    assert_eq!(
        telemetry.adapter_outputs,
        vec!["atif", "openinference", "otel"]
    );
    assert_eq!(
        telemetry.relay_output_dir,
        Some(world.base().join("artifacts/relay").display().to_string())
    );
}

#[test]
fn relay_config_matches_the_upstream_construction() {
    let Some(world) = World::new() else {
        return;
    };
    let plan = world
        .plan(json!({"harness": {"adapter_id": "nvidia.fabric.claude"},
                     "models": {"default": {"provider": "anthropic", "model": "m"}},
                     "telemetry": {"providers": {"relay": {}}},
                     "relay": {"observability": {"atif": {"enabled": true}},
                               "components": [{"kind": "custom", "config": {"a": 1}}, {"kind": "off", "enabled": false}],
                               "policy": {"unknown_field": "error"}}}))
        .expect("relay");
    // Expected value observed from nemo-fabric 0.5.0 for the same config.
    assert_eq!(
        plan.telemetry_plan
            .expect("telemetry")
            .relay_config
            .expect("relay config"),
        json!({
            "version": 1,
            "components": [
                {"kind": "observability", "enabled": true, "config": {
                    "version": 4, "enable_full_payloads": false,
                    "atif": {"enabled": true, "agent_name": "NeMo Relay", "model_name": "m",
                             "filename_template": "nemo-relay-atif-{session_id}.json"}}},
                {"kind": "custom", "enabled": true, "config": {"a": 1}},
                {"kind": "off", "enabled": false}
            ],
            "policy": {"unknown_component": "warn", "unknown_field": "error", "unsupported_value": "error"}
        })
    );
}

#[test]
fn base_dir_resolution_and_environment_plan() {
    let Some(world) = World::new() else {
        return;
    };
    let plan = world
        .plan(json!({"harness": {"adapter_id": "nvidia.fabric.claude"},
                     "environment": {"workspace": "./ws/../work", "artifacts": "out", "env": {"A": "1"}, "env_names": ["B"]}}))
        .expect("environment");
    assert_eq!(plan.base_dir, world.base().display().to_string());
    let environment = plan.environment_plan.expect("environment");
    // `..` is kept (fabric_config::path::resolve_path): collapsing it lexically is wrong
    // when `ws` is a symlink.
    assert_eq!(
        environment.workspace,
        Some(world.base().join("ws/../work").display().to_string())
    );
    assert_eq!(
        environment.artifacts,
        Some(world.base().join("out").display().to_string())
    );
    let error = world
        .plan(json!({"harness": {"adapter_id": "nvidia.fabric.claude"}, "environment": {"env": {"A": "1"}, "env_names": ["A"]}}))
        .expect_err("conflict");
    assert_eq!(error.path(), Some("environment.env_names[0]"));
    // Relative discovery paths are anchored too: the same config from another base fails.
    let other = tempfile::tempdir().expect("tempdir");
    let error = plan_at(&world, other.path()).expect_err("no descriptors there");
    assert_eq!(error.code(), "descriptor_read_failed");
}

fn plan_at(world: &World, base: &Path) -> Result<fabric_config::plan::RunPlan, PlanError> {
    plan(
        &world.config(json!({"harness": {"adapter_id": "nvidia.fabric.claude"}})),
        base,
        &options(),
    )
}

#[test]
fn expected_descriptor_sha256_covers_adapter_and_target() {
    let Some(world) = World::new() else {
        return;
    };
    let expected = world.upstream.catalog_sha256("nvidia.fabric.claude");
    let config = world.config(json!({"harness": {"adapter_id": "nvidia.fabric.claude"}}));
    let mut with_sha = options();
    with_sha.expected_descriptor_sha256 = Some(expected.clone());
    let plan = plan(&config, world.base(), &with_sha).expect("matching fingerprint");
    assert_eq!(plan.descriptor_sha256.as_deref(), Some(expected.as_str()));
    with_sha.expected_descriptor_sha256 = Some("0".repeat(64));
    let error = fabric_plan::plan(&config, world.base(), &with_sha).expect_err("mismatch");
    assert_eq!(error.code(), "descriptor_mismatch");
    let info = fabric_config::ErrorInfo::from(&error);
    assert_eq!(info.stage, fabric_config::Stage::Plan);
    assert_eq!(info.metadata["expected_sha256"], "0".repeat(64));
    assert_eq!(info.metadata["actual_sha256"], expected);

    // With a workflow target the fingerprint covers both descriptors.
    let models = json!({"default": {"provider": "openai", "model": "m", "api_key_env": "K"}});
    let workflow = world
        .config(json!({"workflow": {"target_id": "nvidia.nooa.coding-agent"}, "models": models}));
    let planned = fabric_plan::plan(&workflow, world.base(), &options()).expect("workflow");
    let nooa_sha = world.upstream.catalog_sha256("nvidia.fabric.nooa");
    let nooa_sha = nooa_sha.as_str();
    let combined = planned.descriptor_sha256.clone().expect("sha");
    assert_ne!(combined, nooa_sha);
    let catalog = world.catalog.clone();
    let adapter = fabric_plan::parse_adapter_descriptor(
        catalog["adapters"]["nvidia.fabric.nooa"]["descriptor"].clone(),
        Path::new("a"),
    )
    .expect("adapter");
    let target = fabric_plan::parse_target_descriptor(
        catalog["targets"]["nvidia.nooa.coding-agent"]["descriptor"].clone(),
        Path::new("t"),
    )
    .expect("target");
    assert_eq!(
        fabric_plan::combined_sha256(&adapter, Some(&target)),
        combined
    );
    assert_eq!(fabric_plan::combined_sha256(&adapter, None), nooa_sha);
    let profile = inspect(&workflow, Some(&adapter), Some(&target)).expect("inspect with target");
    assert_eq!(
        profile.descriptor_sha256.as_deref(),
        Some(combined.as_str())
    );
    let mut pinned = options();
    pinned.expected_descriptor_sha256 = Some(nooa_sha.to_owned());
    assert_eq!(
        fabric_plan::plan(&workflow, world.base(), &pinned)
            .expect_err("adapter-only pin")
            .code(),
        "descriptor_mismatch"
    );
}
