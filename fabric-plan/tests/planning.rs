//! Planning rules, each with an accepted and a rejected case, across the 16 catalog
//! descriptors, both catalog targets and the repository fixtures.
//!
//! The catalog is the one installed with upstream's `nemo-fabric-adapter-catalog` 0.5.0 and
//! the expected fingerprints are computed by upstream at test time (`tests/upstream/mod.rs`);
//! tests that need them are skipped loudly without the venv (failed when `CI` is set).

mod support;

use std::path::{Path, PathBuf};

use fabric_config::FabricConfig;
use fabric_config::descriptor::AdapterConfigField;
use fabric_config::plan::{CapabilityTarget, DescriptorSource, DoctorStatus};
use fabric_plan::{DiscoveryOptions, PlanError, PlanOptions, doctor_with, inspect, plan};
use serde_json::{Value, json};
use support::upstream::{self, Upstream};
use tempfile::TempDir;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A base directory holding every catalog descriptor under `catalog/` and the repository
/// fixtures under `fixtures/`.
struct World {
    dir: TempDir,
    catalog: Value,
    upstream: &'static Upstream,
}

impl World {
    /// `None` when the upstream venv is missing (the test was reported skipped; it returns).
    fn new() -> Option<World> {
        let upstream = upstream::require()?;
        let dir = tempfile::tempdir().expect("tempdir");
        let catalog = upstream.catalog();
        let descriptors = dir.path().join("catalog");
        std::fs::create_dir_all(&descriptors).expect("mkdir");
        for (id, entry) in catalog["adapters"].as_object().expect("adapters") {
            std::fs::write(
                descriptors.join(format!("{id}.fabric-adapter.json")),
                entry["descriptor"].to_string(),
            )
            .expect("write");
        }
        for (id, entry) in catalog["targets"].as_object().expect("targets") {
            std::fs::write(
                descriptors.join(format!("{id}.fabric-target.json")),
                entry["descriptor"].to_string(),
            )
            .expect("write");
        }
        let fixtures = dir.path().join("fixtures");
        std::fs::create_dir_all(&fixtures).expect("mkdir");
        for name in [
            "everything.fabric-adapter.json",
            "everything-react.fabric-target.json",
            "bare.fabric-adapter.json",
        ] {
            std::fs::copy(
                repo().join("tests/fixtures/descriptors").join(name),
                fixtures.join(name),
            )
            .expect("copy");
        }
        Some(World {
            dir,
            catalog,
            upstream,
        })
    }

    fn base(&self) -> &Path {
        self.dir.path()
    }

    fn adapter_ids(&self) -> Vec<String> {
        self.catalog["adapters"]
            .as_object()
            .expect("adapters")
            .keys()
            .cloned()
            .collect()
    }

    fn accepts(&self, adapter_id: &str, field: AdapterConfigField) -> bool {
        self.catalog["adapters"][adapter_id]["descriptor"]["config"]["accepts"]
            .as_array()
            .is_some_and(|items| {
                items
                    .iter()
                    .any(|item| item.as_str() == Some(field.as_str()))
            })
    }

    fn config(&self, partial: Value) -> FabricConfig {
        let mut value = json!({
            "schema_version": "fabric.agent/v1alpha1",
            "metadata": {"name": "planning-test"},
            "discovery": {"local_paths": ["catalog", "fixtures"]}
        });
        for (key, item) in partial.as_object().expect("object") {
            value[key] = item.clone();
        }
        FabricConfig::from_value(value).expect("config decodes")
    }

    fn plan(&self, partial: Value) -> Result<fabric_config::plan::RunPlan, PlanError> {
        plan(&self.config(partial), self.base(), &options())
    }
}

fn options() -> PlanOptions {
    PlanOptions {
        discovery: Some(DiscoveryOptions::default()),
        ..PlanOptions::default()
    }
}

fn rejected(
    result: Result<fabric_config::plan::RunPlan, PlanError>,
    code: &str,
    path: &str,
) -> PlanError {
    let error = result.expect_err(path);
    assert_eq!(error.code(), code, "{error}");
    assert_eq!(error.path(), Some(path), "{error}");
    error
}

/// The failing compatibility paths doctor reports for a config.
fn incompatible_paths(world: &World, partial: Value) -> Vec<String> {
    let report = doctor_with(&world.config(partial), world.base(), &options());
    report
        .checks
        .iter()
        .filter(|check| check.name == "compatibility" && check.status == DoctorStatus::Fail)
        .filter_map(|check| check.path.clone())
        .collect()
}

#[test]
fn every_normalized_field_follows_config_accepts_for_every_catalog_adapter() {
    let Some(world) = World::new() else {
        return;
    };
    let cases: Vec<(AdapterConfigField, Value, &str)> = vec![
        (
            AdapterConfigField::Models,
            json!({"models": {"default": {"provider": "openai", "model": "m"}}}),
            "models",
        ),
        (
            AdapterConfigField::ModelsBaseUrl,
            json!({"models": {"default": {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9"}}}),
            "models.default.base_url",
        ),
        (
            AdapterConfigField::ModelsTemperature,
            json!({"models": {"default": {"provider": "openai", "model": "m", "temperature": 0.1}}}),
            "models.default.temperature",
        ),
        (
            AdapterConfigField::ModelsTopP,
            json!({"models": {"default": {"provider": "openai", "model": "m", "top_p": 0.5}}}),
            "models.default.top_p",
        ),
        (
            AdapterConfigField::ModelsMaxTokens,
            json!({"models": {"default": {"provider": "openai", "model": "m", "max_tokens": 10}}}),
            "models.default.max_tokens",
        ),
        (
            AdapterConfigField::InstructionsSystem,
            json!({"instructions": {"system": {"content": "x"}}}),
            "instructions.system",
        ),
        (
            AdapterConfigField::RuntimeMaxTurns,
            json!({"runtime": {"max_turns": 4}}),
            "runtime.max_turns",
        ),
        (
            AdapterConfigField::ToolsEnabled,
            json!({"tools": {"enabled": ["Read"]}}),
            "tools.enabled",
        ),
        (
            AdapterConfigField::ToolsBlocked,
            json!({"tools": {"blocked": ["Bash"]}}),
            "tools.blocked",
        ),
        (
            AdapterConfigField::ToolsDefinitions,
            json!({"tools": {"definitions": {"t": {"kind": "module", "ref": "x"}}}}),
            "tools.definitions",
        ),
        (
            AdapterConfigField::Skills,
            json!({"skills": {"paths": ["./skills"]}}),
            "skills",
        ),
        (
            AdapterConfigField::Mcp,
            json!({"mcp": {"servers": {"gh": {"transport": "stdio", "url": "gh"}}}}),
            "mcp.servers.gh",
        ),
    ];
    let mut checked = 0;
    for adapter_id in world.adapter_ids() {
        for (field, partial, path) in &cases {
            let mut partial = partial.clone();
            partial["harness"] = json!({"adapter_id": adapter_id});
            let paths = incompatible_paths(&world, partial);
            let flagged = paths.iter().any(|p| p == path);
            // Legacy descriptors receive top_p/max_tokens through extension_schemas.model.
            let legacy = path.rsplit('.').next().is_some_and(|name| {
                matches!(name, "top_p" | "max_tokens")
                        && world.catalog["adapters"][&adapter_id]["descriptor"]["extension_schemas"]
                            ["model"]["properties"]
                            .get(name)
                            .is_some()
            });
            let supported = world.accepts(&adapter_id, *field) || legacy;
            assert_eq!(
                flagged,
                !supported,
                "{adapter_id} {}: {paths:?}",
                field.as_str()
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 16 * 12);
}

#[test]
fn mcp_authentication_and_tool_filters_follow_config_accepts() {
    let Some(world) = World::new() else {
        return;
    };
    let server = |extra: Value| {
        let mut server =
            json!({"transport": "streamable-http", "url": "https://mcp.example.com/mcp"});
        for (key, value) in extra.as_object().expect("o") {
            server[key] = value.clone();
        }
        json!({"mcp": {"servers": {"web": server}}})
    };
    let cases = [
        (
            AdapterConfigField::McpAuthOauth2,
            server(json!({"authentication": {"type": "oauth2"}})),
            "mcp.servers.web.authentication",
        ),
        (
            AdapterConfigField::McpAuthServiceAccount,
            server(
                json!({"authentication": {"type": "service_account", "client_id": "c", "client_secret_env": "S", "token_url": "https://t", "token_endpoint_auth_method": "client_secret_basic"}}),
            ),
            "mcp.servers.web.authentication",
        ),
        (
            AdapterConfigField::McpToolFilters,
            server(json!({"allowed_tools": ["a"]})),
            "mcp.servers.web.allowed_tools",
        ),
        (
            AdapterConfigField::McpToolFilters,
            server(json!({"blocked_tools": ["a"]})),
            "mcp.servers.web.blocked_tools",
        ),
    ];
    let mut ids = world.adapter_ids();
    ids.push("test.fabric.everything".to_owned());
    for adapter_id in ids {
        if adapter_id != "test.fabric.everything"
            && !world.accepts(&adapter_id, AdapterConfigField::Mcp)
        {
            continue;
        }
        for (field, partial, path) in &cases {
            let mut partial = partial.clone();
            partial["harness"] = json!({"adapter_id": adapter_id});
            let flagged = incompatible_paths(&world, partial)
                .iter()
                .any(|p| p == path);
            let accepted =
                adapter_id == "test.fabric.everything" || world.accepts(&adapter_id, *field);
            assert_eq!(flagged, !accepted, "{adapter_id} {}", field.as_str());
        }
    }
    // Custom headers travel with MCP support and an HTTP transport.
    let headers = server(json!({"custom_headers": {"X-Tenant": "team"}}));
    let mut partial = headers.clone();
    partial["harness"] = json!({"adapter_id": "nvidia.fabric.claude"});
    let plan = world.plan(partial).expect("claude supports headers");
    assert_eq!(
        plan.agent_config.mcp.expect("mcp").servers["web"].custom_headers["X-Tenant"],
        "team"
    );
    let mut partial = headers;
    partial["harness"] = json!({"adapter_id": "nvidia.fabric.mini-swe-agent"});
    rejected(
        world.plan(partial),
        "config_incompatible",
        "mcp.servers.web",
    );
}

#[test]
fn instruction_modes() {
    let Some(world) = World::new() else {
        return;
    };
    let append = json!({"content": "Be brief.", "mode": "append"});
    world
        .plan(json!({"harness": {"adapter_id": "nvidia.fabric.claude"}, "instructions": {"system": append}}))
        .expect("claude declares append");
    let error = rejected(
        world.plan(json!({"harness": {"adapter_id": "nvidia.fabric.codex"}, "instructions": {"system": append}})),
        "config_incompatible",
        "instructions.system.mode",
    );
    assert_eq!(error.adapter_id(), Some("nvidia.fabric.codex"));
    let plan = world
        .plan(json!({"harness": {"adapter_id": "nvidia.fabric.codex"}, "instructions": {"system": {"content": "x"}}}))
        .expect("replace");
    assert_eq!(
        plan.agent_config
            .instructions
            .expect("i")
            .system
            .expect("s")
            .mode
            .as_str(),
        "replace"
    );
}

#[test]
fn model_role_selection_and_atif_label() {
    let Some(world) = World::new() else {
        return;
    };
    let model = |name: &str| json!({"provider": "openai", "model": name, "api_key_env": "K"});
    let relay = json!({"observability": {"atif": {"enabled": true}}});
    let label = |plan: &fabric_config::plan::RunPlan| {
        plan.telemetry_plan
            .as_ref()
            .expect("telemetry")
            .relay_config
            .as_ref()
            .expect("relay")["components"][0]["config"]["atif"]["model_name"]
            .clone()
    };
    let base = |models: Value| {
        json!({"harness": {"adapter_id": "nvidia.fabric.pi"}, "models": models,
               "telemetry": {"providers": {"relay": {}}}, "relay": relay})
    };
    let plan = world
        .plan(base(
            json!({"default": model("openai/gpt-5-codex"), "fast": model("small")}),
        ))
        .expect("default wins");
    assert_eq!(label(&plan), json!("openai/gpt-5-codex"));
    let plan = world
        .plan(base(json!({"planner": model("only-one")})))
        .expect("single role");
    assert_eq!(label(&plan), json!("only-one"));
    let error = rejected(
        world.plan(base(json!({"a": model("x"), "b": model("y")}))),
        "model_role_ambiguous",
        "models",
    );
    assert_eq!(error.adapter_id(), Some("nvidia.fabric.pi"));
    let plan = world
        .plan(json!({"harness": {"adapter_id": "nvidia.fabric.claude"}, "telemetry": {"providers": {"relay": {}}}, "relay": relay}))
        .expect("no models");
    assert_eq!(label(&plan), json!("unknown"));
    let overridden = json!({"observability": {"atif": {"enabled": true, "model_name": "label"}}});
    let plan = world
        .plan(json!({"harness": {"adapter_id": "nvidia.fabric.claude"}, "telemetry": {"providers": {"relay": {}}}, "relay": overridden}))
        .expect("override");
    assert_eq!(label(&plan), json!("label"));
}

#[test]
fn model_schema_is_applied_to_every_role() {
    let Some(world) = World::new() else {
        return;
    };
    world
        .plan(json!({"harness": {"adapter_id": "nvidia.fabric.claude"}, "models": {"default": {"provider": "anthropic", "model": "c"}}}))
        .expect("native provider");
    // Claude's schema requires base_url and api_key_env for other providers.
    let error = world
        .plan(json!({"harness": {"adapter_id": "nvidia.fabric.claude"}, "models": {"default": {"provider": "openai", "model": "c"}}}))
        .expect_err("schema");
    assert_eq!(error.code(), "config_schema_violation");
    assert!(
        error.path().expect("path").starts_with("models.default."),
        "{error}"
    );
    // Every role is validated, not only the selected one.
    rejected(
        world.plan(
            json!({"harness": {"adapter_id": "nvidia.fabric.pi"}, "models": {
            "default": {"provider": "openai", "model": "m", "api_key_env": "K"},
            "fast": {"provider": "openai", "model": "m"}}}),
        ),
        "config_schema_violation",
        "models.fast.api_key_env",
    );
    rejected(
        world.plan(json!({"harness": {"adapter_id": "test.fabric.everything"}, "models": {"default": {"provider": "p", "model": "m", "settings": {"reasoning_effort": "max"}}}})),
        "config_schema_violation",
        "models.default.settings.reasoning_effort",
    );
    world
        .plan(json!({"harness": {"adapter_id": "test.fabric.everything"}, "models": {"default": {"provider": "p", "model": "m", "settings": {"reasoning_effort": "low"}}}}))
        .expect("declared model setting");
}

#[test]
fn settings_schema_rules_and_no_defaults_applied() {
    let Some(world) = World::new() else {
        return;
    };
    let plan = world
        .plan(json!({"harness": {"adapter_id": "nvidia.fabric.claude", "settings": {"permission_mode": "default"}}}))
        .expect("declared setting");
    assert_eq!(
        plan.agent_config.harness.expect("harness").settings["permission_mode"],
        json!("default")
    );
    let error = rejected(
        world.plan(
            json!({"harness": {"adapter_id": "nvidia.fabric.claude", "settings": {"zzz": 1}}}),
        ),
        "config_schema_violation",
        "harness.settings.zzz",
    );
    // The error names the adapter, the descriptor source and file, and the settings path.
    let descriptor = world
        .base()
        .join("catalog/nvidia.fabric.claude.fabric-adapter.json");
    assert_eq!(error.file(), Some(descriptor.as_path()));
    let message = error.to_string();
    assert!(
        message.contains("nvidia.fabric.claude")
            && message.contains("explicit_local descriptor")
            && message.contains(&descriptor.display().to_string()),
        "{message}"
    );
    let info = fabric_config::ErrorInfo::from(&error);
    assert_eq!(info.metadata["descriptor_source"], json!("explicit_local"));
    // Absent settings_schema: only an empty map.
    world
        .plan(json!({"harness": {"adapter_id": "test.fabric.bare"}}))
        .expect("empty settings");
    rejected(
        world.plan(json!({"harness": {"adapter_id": "test.fabric.bare", "settings": {"a": 1}}})),
        "config_schema_violation",
        "harness.settings.a",
    );
    // Schema defaults are never applied.
    let plan = world
        .plan(json!({"harness": {"adapter_id": "test.fabric.everything"}}))
        .expect("defaults");
    assert!(plan.agent_config.harness.is_none());
    assert!(plan.config.harness.as_ref().expect("h").settings.is_empty());
    let plan = world
        .plan(json!({"harness": {"adapter_id": "test.fabric.everything", "settings": {"verbosity": 2}}}))
        .expect("settings");
    let settings = &plan.agent_config.harness.expect("h").settings;
    assert_eq!(settings.len(), 1);
    assert!(!settings.contains_key("mode"));
    rejected(
        world.plan(json!({"harness": {"adapter_id": "test.fabric.everything", "settings": {"verbosity": 9}}})),
        "config_schema_violation",
        "harness.settings.verbosity",
    );
}

#[test]
fn tool_definition_schema() {
    let Some(world) = World::new() else {
        return;
    };
    let model = json!({"default": {"provider": "openai", "model": "m", "api_key_env": "K"}});
    let plan = world
        .plan(
            json!({"harness": {"adapter_id": "nvidia.fabric.pi"}, "models": model,
                     "tools": {"definitions": {"t": {"kind": "module", "ref": "./tool.js"}}}}),
        )
        .expect("pi module tool");
    assert_eq!(
        plan.agent_config.tools.expect("tools").definitions["t"].reference,
        "./tool.js"
    );
    assert_eq!(
        plan.capability_plan.routes[0].target,
        CapabilityTarget::HarnessNative
    );
    rejected(
        world.plan(json!({"harness": {"adapter_id": "nvidia.fabric.pi"}, "models": model,
                          "tools": {"definitions": {"t": {"kind": "function", "ref": "./tool.js"}}}})),
        "config_schema_violation",
        "tools.definitions.t.kind",
    );
    // A local $ref inside the fixture's schema resolves.
    world
        .plan(json!({"harness": {"adapter_id": "test.fabric.everything"}, "tools": {"definitions": {"t": {"kind": "function", "ref": "pkg.mod:make"}}}}))
        .expect("local ref");
    rejected(
        world.plan(json!({"harness": {"adapter_id": "test.fabric.everything"}, "tools": {"definitions": {"t": {"kind": "function", "ref": "Bad Ref"}}}})),
        "config_schema_violation",
        "tools.definitions.t.ref",
    );
}

#[test]
fn extensions_need_a_declared_schema() {
    let Some(world) = World::new() else {
        return;
    };
    let model = |extra: Value| {
        let mut m = json!({"provider": "openai", "model": "m", "api_key_env": "K"});
        for (key, value) in extra.as_object().expect("o") {
            m[key] = value.clone();
        }
        json!({"default": m})
    };
    let plan = world
        .plan(json!({"harness": {"adapter_id": "nvidia.fabric.pi"}, "models": model(json!({"api": "openai-completions"}))}))
        .expect("declared model extension");
    assert_eq!(
        plan.agent_config.models["default"].extensions["api"],
        json!("openai-completions")
    );
    // Legacy: pi declares max_tokens through extension_schemas.model, so it travels there.
    let plan = world
        .plan(json!({"harness": {"adapter_id": "nvidia.fabric.pi"}, "models": model(json!({"max_tokens": 64}))}))
        .expect("legacy max_tokens");
    let pi_model = &plan.agent_config.models["default"];
    assert_eq!(
        (pi_model.max_tokens, &pi_model.extensions["max_tokens"]),
        (None, &json!(64))
    );
    let plan = world
        .plan(json!({"harness": {"adapter_id": "nvidia.fabric.hermes"}, "models": model(json!({"max_tokens": 64}))}))
        .expect("normalized max_tokens");
    assert_eq!(plan.agent_config.models["default"].max_tokens, Some(64));
    rejected(
        world.plan(json!({"harness": {"adapter_id": "nvidia.fabric.pi"}, "models": model(json!({"api": "nope"}))})),
        "config_schema_violation",
        "models.default.api",
    );
    rejected(
        world.plan(json!({"harness": {"adapter_id": "nvidia.fabric.claude"}, "models": {"default": {"provider": "anthropic", "model": "c", "zzz": 1}}})),
        "config_incompatible",
        "models.default.zzz",
    );
    world
        .plan(json!({"harness": {"adapter_id": "test.fabric.everything"}, "runtime": {"checkpoint_every": 2}}))
        .expect("runtime extension");
    rejected(
        world.plan(json!({"harness": {"adapter_id": "test.fabric.everything"}, "runtime": {"checkpoint_every": 0}})),
        "config_schema_violation",
        "runtime.checkpoint_every",
    );
    rejected(
        world.plan(
            json!({"harness": {"adapter_id": "nvidia.fabric.claude"}, "runtime": {"zzz": 1}}),
        ),
        "config_incompatible",
        "runtime.zzz",
    );
    rejected(
        world.plan(json!({"harness": {"adapter_id": "test.fabric.everything"}, "skills": {"paths": ["s"], "zzz": 1}})),
        "config_incompatible",
        "skills.zzz",
    );
}

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

#[test]
fn discovery_precedence_merging_and_ambiguity() {
    let Some(world) = World::new() else {
        return;
    };
    let root = world.base();
    let claude = world.catalog["adapters"]["nvidia.fabric.claude"]["descriptor"].clone();
    let write = |dir: &str, name: &str, value: &Value| {
        let dir = root.join(dir);
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join(name), value.to_string()).expect("write");
    };
    write("dup", "a.fabric-adapter.json", &claude);
    write("dup", "b.fabric-adapter.json", &claude);
    let config = |paths: Value| {
        world.config(json!({"harness": {"adapter_id": "nvidia.fabric.claude"}, "discovery": {"local_paths": paths}}))
    };
    let plan = fabric_plan::plan(&config(json!(["dup"])), root, &options())
        .expect("identical duplicates merge");
    let provenance = plan.adapter_descriptor.expect("a").provenance;
    assert_eq!(provenance.len(), 2);
    assert_eq!(provenance[0].root, root.join("dup").display().to_string());

    let mut changed = claude.clone();
    changed["x_variant"] = json!(1);
    write("dup", "c.fabric-adapter.json", &changed);
    let error =
        fabric_plan::plan(&config(json!(["dup"])), root, &options()).expect_err("ambiguous");
    assert_eq!(error.code(), "descriptor_ambiguous");
    let message = error.to_string();
    assert!(
        message.contains("a.fabric-adapter.json") && message.contains("c.fabric-adapter.json"),
        "{message}"
    );

    // Explicit local beats FABRIC_ADAPTER_PATH-style env paths, which beat installed and bundled.
    write("env", "claude.fabric-adapter.json", &changed);
    write(
        "prefix/share/nemo-fabric/adapters/claude",
        "claude.fabric-adapter.json",
        &changed,
    );
    let sources = DiscoveryOptions {
        local_paths: Vec::new(),
        env_paths: vec![root.join("env")],
        interpreter_prefix: None,
        installed_prefixes: vec![root.join("prefix")],
        bundled_root: Some(root.join("catalog")),
    };
    let opts = PlanOptions {
        discovery: Some(sources.clone()),
        ..PlanOptions::default()
    };
    let no_local = world.config(json!({"harness": {"adapter_id": "nvidia.fabric.claude"}, "discovery": {"local_paths": []}}));
    let plan = fabric_plan::plan(&no_local, root, &opts).expect("env path");
    assert_eq!(
        plan.adapter_descriptor.as_ref().expect("a").provenance[0].source,
        DescriptorSource::EnvPath
    );
    let plan = fabric_plan::plan(&config(json!(["catalog"])), root, &opts).expect("explicit");
    assert_eq!(
        plan.adapter_descriptor.as_ref().expect("a").provenance[0].source,
        DescriptorSource::ExplicitLocal
    );
    let installed_only = PlanOptions {
        discovery: Some(DiscoveryOptions {
            env_paths: Vec::new(),
            ..sources.clone()
        }),
        ..PlanOptions::default()
    };
    let plan = fabric_plan::plan(&no_local, root, &installed_only).expect("installed");
    assert_eq!(
        plan.adapter_descriptor.as_ref().expect("a").provenance[0].source,
        DescriptorSource::InstalledPackage
    );
    // The calling interpreter's prefix (CallOptions.python_prefix) beats the installed ones.
    write(
        "caller/share/nemo-fabric/adapters/claude",
        "claude.fabric-adapter.json",
        &changed,
    );
    let from_caller = PlanOptions {
        python_prefix: Some(root.join("caller")),
        ..installed_only.clone()
    };
    let plan = fabric_plan::plan(&no_local, root, &from_caller).expect("interpreter prefix");
    let provenance = &plan.adapter_descriptor.as_ref().expect("a").provenance[0];
    assert_eq!(provenance.source, DescriptorSource::InterpreterPrefix);
    assert!(
        provenance.path.contains("/caller/share/"),
        "{}",
        provenance.path
    );
    let bundled_only = PlanOptions {
        discovery: Some(DiscoveryOptions {
            bundled_root: Some(root.join("catalog")),
            ..DiscoveryOptions::default()
        }),
        ..PlanOptions::default()
    };
    let plan = fabric_plan::plan(&no_local, root, &bundled_only).expect("bundled");
    assert_eq!(
        plan.adapter_descriptor.as_ref().expect("a").provenance[0].source,
        DescriptorSource::Bundled
    );
    let error = fabric_plan::plan(
        &world.config(json!({"harness": {"adapter_id": "nope"}})),
        root,
        &options(),
    )
    .expect_err("unknown");
    assert_eq!(error.code(), "adapter_not_found");
    assert!(
        error.to_string().contains("nvidia.fabric.claude"),
        "lists available adapters: {error}"
    );
}

#[test]
fn invalid_files_in_searched_directories_are_skipped_unless_selected() {
    let Some(world) = World::new() else {
        return;
    };
    let mixed = world.base().join("mixed");
    std::fs::create_dir_all(&mixed).expect("mkdir");
    std::fs::write(
        mixed.join("claude.fabric-adapter.json"),
        world.catalog["adapters"]["nvidia.fabric.claude"]["descriptor"].to_string(),
    )
    .expect("write");
    for entry in std::fs::read_dir(repo().join("tests/fixtures/descriptors/invalid")).expect("dir")
    {
        let path = entry.expect("entry").path();
        std::fs::copy(&path, mixed.join(path.file_name().expect("name"))).expect("copy");
    }
    let config = |id: &str, paths: Value| {
        world.config(json!({"harness": {"adapter_id": id}, "discovery": {"local_paths": paths}}))
    };
    fabric_plan::plan(
        &config("nvidia.fabric.claude", json!(["mixed"])),
        world.base(),
        &options(),
    )
    .expect("invalid neighbours are skipped");
    // Selecting an invalid descriptor reports its own error.
    let error = fabric_plan::plan(
        &config("test.fabric.legacy", json!(["mixed"])),
        world.base(),
        &options(),
    )
    .expect_err("selected invalid");
    assert_eq!(error.path(), Some("harness"));
    // Not found: the skipped files are named.
    let error = fabric_plan::plan(&config("nope", json!(["mixed"])), world.base(), &options())
        .expect_err("missing");
    assert!(
        error.to_string().contains("v1alpha1.fabric-adapter.json"),
        "{error}"
    );
    // An explicitly named invalid file fails.
    let error = fabric_plan::plan(
        &config(
            "nvidia.fabric.claude",
            json!(["mixed/remote-ref.fabric-adapter.json", "mixed"]),
        ),
        world.base(),
        &options(),
    )
    .expect_err("explicit invalid file");
    assert_eq!(error.code(), "descriptor_invalid_schema");
    let catalog = fabric_plan::discovery::discover_all(&DiscoveryOptions::explicit(vec![mixed]))
        .expect("catalog");
    assert_eq!(catalog.adapters.len(), 1);
    assert_eq!(catalog.invalid.len(), 4);
}

#[test]
fn invalid_fixture_descriptors_are_rejected_with_file_and_path() {
    let dir = repo().join("tests/fixtures/descriptors/invalid");
    let expected = [
        ("legacy-harness.fabric-adapter.json", "harness"),
        ("v1alpha1.fabric-adapter.json", "contract_version"),
        (
            "remote-ref.fabric-adapter.json",
            "settings_schema.properties.a.$ref",
        ),
        (
            "modes-without-system.fabric-adapter.json",
            "config.system_instruction_modes",
        ),
    ];
    for (name, path) in expected {
        let file = dir.join(name);
        let error = fabric_plan::load_adapter_descriptor(&file).expect_err(name);
        assert_eq!(error.path(), Some(path), "{error}");
        assert_eq!(error.file(), Some(file.as_path()));
        assert!(error.to_string().contains(name), "{error}");
    }
}

#[test]
fn doctor_collects_every_finding_without_stopping() {
    let Some(world) = World::new() else {
        return;
    };
    let config = world.config(json!({
        "harness": {"adapter_id": "nvidia.fabric.mini-swe-agent", "settings": {"zzz": 1}},
        "skills": {"paths": ["./missing-skills"]},
        "mcp": {"servers": {"gh": {"transport": "stdio", "url": "gh"}}},
        "runtime": {"max_turns": 2},
        "models": {"default": {"provider": "openai", "model": "m", "api_key_env": "FABRIC_DOCTOR_TEST_UNSET_KEY"}},
        "environment": {"workspace": "./no-such-workspace", "env_names": ["FABRIC_DOCTOR_TEST_UNSET_NAME"]}
    }));
    let report = doctor_with(&config, world.base(), &options());
    assert_eq!(report.status, DoctorStatus::Fail);
    let failing: Vec<(String, Option<String>)> = report
        .checks
        .iter()
        .filter(|check| check.status == DoctorStatus::Fail)
        .map(|check| (check.name.clone(), check.path.clone()))
        .collect();
    for expected in [
        ("compatibility", "harness.settings.zzz"),
        ("compatibility", "skills"),
        ("compatibility", "mcp.servers.gh"),
        ("requirement.env", "models.default.api_key_env"),
        ("requirement.env", "environment.env_names[0]"),
        ("skills.path", "skills.paths[0]"),
        ("environment.workspace", "environment.workspace"),
    ] {
        assert!(
            failing
                .iter()
                .any(|(name, path)| name == expected.0 && path.as_deref() == Some(expected.1)),
            "{expected:?} missing from {failing:?}"
        );
    }
    // runtime.max_turns is accepted by mini-swe-agent: no finding.
    assert!(
        !failing
            .iter()
            .any(|(_, path)| path.as_deref() == Some("runtime.max_turns"))
    );

    // Missing binary and file requirements; then a passing report.
    let report = doctor_with(
        &world.config(json!({"harness": {"adapter_id": "test.fabric.bare"}})),
        world.base(),
        &options(),
    );
    let codes: Vec<&str> = report
        .checks
        .iter()
        .map(|check| check.code.as_str())
        .collect();
    assert!(
        codes.contains(&"missing_binary") && codes.contains(&"missing_file"),
        "{codes:?}"
    );
    std::fs::create_dir_all(world.base().join("ws")).expect("ws");
    let passing = world.config(
        json!({"harness": {"adapter_id": "nvidia.fabric.claude", "resolution": "preinstalled"},
                                      "environment": {"workspace": "ws"}}),
    );
    let report = doctor_with(&passing, world.base(), &options());
    // The catalog's adapter modules are usually not installed where the tests run: the import
    // check asks the interpreter that would run the host, and the only failure may be that.
    assert!(
        report
            .checks
            .iter()
            .filter(|check| check.status == DoctorStatus::Fail)
            .all(|check| check.name == "requirement.python_module"
                && check.code == "python_module_missing"),
        "{report:?}"
    );
    // An interpreter that finds the module (a stand-in answering "found"): a passing report.
    let python = world.base().join("python-that-finds-everything");
    std::fs::write(&python, "#!/bin/sh\nexit 0\n").expect("write");
    std::fs::set_permissions(&python, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let finds = PlanOptions {
        python_interpreter: Some(python),
        ..options()
    };
    let report = doctor_with(&passing, world.base(), &finds);
    assert!(report.passed(), "{report:?}");
    assert!(
        report
            .checks
            .iter()
            .any(|check| check.name == "requirement.python_module" && check.code == "ok"),
        "{report:?}"
    );
    // An unresolvable adapter is a failed check, not an early return.
    let report = doctor_with(
        &world.config(json!({"harness": {"adapter_id": "nope"}})),
        world.base(),
        &options(),
    );
    assert!(
        report
            .checks
            .iter()
            .any(|c| c.name == "adapter_descriptor" && c.code == "adapter_not_found")
    );
    assert!(report.checks.iter().any(|c| c.name == "environment"));
}

#[test]
fn inspect_profiles() {
    let Some(world) = World::new() else {
        return;
    };
    let descriptor = |id: &str| {
        fabric_plan::parse_adapter_descriptor(
            world.catalog["adapters"][id]["descriptor"].clone(),
            Path::new("d"),
        )
        .expect("descriptor")
    };
    for id in world.adapter_ids() {
        let config = world.config(json!({"harness": {"adapter_id": id}}));
        let d = descriptor(&id);
        let result = inspect(&config, Some(&d), None);
        // remote-agent requires settings; every other catalog adapter admits a bare config.
        if id == "nvidia.fabric.remote-agent" {
            assert_eq!(
                result.expect_err("settings").code(),
                "config_schema_violation"
            );
            continue;
        }
        let profile = result.unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(
            profile.descriptor_sha256,
            Some(world.upstream.catalog_sha256(&id)),
            "{id}"
        );
        assert_eq!(
            profile.skills,
            world.accepts(&id, AdapterConfigField::Skills),
            "{id}"
        );
        assert_eq!(
            profile.mcp,
            world.accepts(&id, AdapterConfigField::Mcp),
            "{id}"
        );
        assert!(!profile.atif);
    }
    // No descriptor: false claims, no fingerprint; requested skills/MCP/telemetry rejected.
    let bare = world.config(json!({"harness": {"adapter_id": "nvidia.fabric.claude"}}));
    let profile = inspect(&bare, None, None).expect("basic execution");
    assert_eq!(
        (
            profile.skills,
            profile.mcp,
            profile.atif,
            profile.descriptor_sha256
        ),
        (false, false, false, None)
    );
    for (partial, path) in [
        (json!({"skills": {"paths": ["s"]}}), "skills"),
        (
            json!({"mcp": {"servers": {"gh": {"transport": "stdio", "url": "gh"}}}}),
            "mcp",
        ),
        (
            json!({"telemetry": {"providers": {"relay": {}}}}),
            "telemetry.providers",
        ),
    ] {
        let mut partial = partial;
        partial["harness"] = json!({"adapter_id": "nvidia.fabric.claude"});
        let error = inspect(&world.config(partial), None, None).expect_err(path);
        assert_eq!(error.path(), Some(path));
    }
    // Relay ATIF: confirmed with one enabled observability component and a declaring provider.
    let claude = descriptor("nvidia.fabric.claude");
    let relay = world.config(json!({"harness": {"adapter_id": "nvidia.fabric.claude"}, "telemetry": {"providers": {"relay": {}}},
                                    "relay": {"observability": {"atif": {"enabled": true}}}}));
    assert!(inspect(&relay, Some(&claude), None).expect("atif").atif);
    let off = world.config(json!({"harness": {"adapter_id": "nvidia.fabric.claude"}, "telemetry": {"providers": {"relay": {}}},
                                  "relay": {"observability": {"atif": {"enabled": false}}}}));
    assert!(!inspect(&off, Some(&claude), None).expect("no atif").atif);
    // Native ATIF needs the native provider to declare it.
    let everything = fabric_plan::load_adapter_descriptor(
        &repo().join("tests/fixtures/descriptors/everything.fabric-adapter.json"),
    )
    .expect("fixture");
    let native = world.config(json!({"harness": {"adapter_id": "test.fabric.everything"}, "telemetry": {"providers": {"native": {}}}}));
    assert!(
        inspect(&native, Some(&everything), None)
            .expect("native atif")
            .atif
    );
    let codex = descriptor("nvidia.fabric.codex");
    let codex_native = world.config(json!({"harness": {"adapter_id": "nvidia.fabric.codex"}, "telemetry": {"providers": {"native": {}}}}));
    assert!(
        !inspect(&codex_native, Some(&codex), None)
            .expect("codex native")
            .atif
    );
    // Mismatched descriptor, missing target metadata.
    assert_eq!(
        inspect(&bare, Some(&codex), None)
            .expect_err("mismatch")
            .path(),
        Some("harness.adapter_id")
    );
    let workflow = world.config(json!({"workflow": {"target_id": "nvidia.nooa.coding-agent"}}));
    assert_eq!(
        inspect(&workflow, Some(&descriptor("nvidia.fabric.nooa")), None)
            .expect_err("target")
            .code(),
        "target_mismatch"
    );
}

#[test]
fn plan_json_has_the_upstream_shape() {
    let Some(world) = World::new() else {
        return;
    };
    let plan = world
        .plan(json!({"harness": {"adapter_id": "nvidia.fabric.pi"},
                     "models": {"default": {"provider": "openai", "model": "gpt-5", "api_key_env": "OPENAI_API_KEY"}},
                     "skills": {"paths": ["./sk"]}, "telemetry": {"providers": {"relay": {}}}}))
        .expect("plan");
    let value = serde_json::to_value(&plan).expect("json");
    for key in [
        "agent_name",
        "base_dir",
        "config",
        "agent_config",
        "capabilities",
        "adapter_descriptor",
        "capability_plan",
        "telemetry_plan",
    ] {
        assert!(value.get(key).is_some(), "{key}");
    }
    assert_eq!(value["capability_plan"]["tools"], json!({}));
    assert_eq!(
        value["capability_plan"]["managed"],
        json!({"tools_configured": false})
    );
    assert_eq!(value["telemetry_plan"]["providers"], json!(["relay"]));
    assert_eq!(
        value["telemetry_plan"]["adapter_outputs"],
        json!(["atif", "openinference", "otel"])
    );
    assert_eq!(
        value["adapter_descriptor"]["provenance"][0]["source"],
        json!("explicit_local")
    );
    assert_eq!(
        value["agent_config"]["models"]["default"],
        json!({"provider": "openai", "model": "gpt-5", "api_key_env": "OPENAI_API_KEY"})
    );
    // Round trip.
    let back: fabric_config::plan::RunPlan = serde_json::from_value(value).expect("decode");
    assert_eq!(back, plan);
}

#[test]
fn secret_values_never_appear_in_errors_or_doctor_reports() {
    let Some(world) = World::new() else {
        return;
    };
    const SENTINEL: &str = "SENTINEL-SECRET-7f3a";
    let config = world.config(json!({
        "harness": {"adapter_id": "nvidia.fabric.claude", "settings": {"max_budget_usd": SENTINEL, "zzz": SENTINEL}},
        "models": {"default": {"provider": "anthropic", "model": "m", "settings": {"token": SENTINEL}}},
        "environment": {"env": {"TOKEN": SENTINEL}},
        "mcp": {"servers": {"web": {"transport": "sse", "url": "https://x", "custom_headers": {"Authorization": SENTINEL}}}},
        "tools": {"definitions": {"t": {"kind": "module", "ref": "x", "settings": {"k": SENTINEL}}}}
    }));
    let report = doctor_with(&config, world.base(), &options());
    let text = serde_json::to_string(&report).expect("json");
    assert!(text.contains("harness.settings.zzz"), "{text}");
    assert!(!text.contains(SENTINEL), "{text}");
    let error = plan(&config, world.base(), &options()).expect_err("incompatible");
    let info = fabric_config::ErrorInfo::from(&error);
    assert!(
        !serde_json::to_string(&info)
            .expect("json")
            .contains(SENTINEL)
    );
    let profile = inspect(&config, None, None).expect_err("mcp without descriptor");
    assert!(!profile.to_string().contains(SENTINEL));
}
