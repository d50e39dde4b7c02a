//! Instructions, model roles and the schemas descriptors declare (model, settings, tool
//! definitions, extensions).

use fabric_config::plan::CapabilityTarget;
use serde_json::{Value, json};

use super::world::{World, rejected};

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
