//! Doctor, inspect, the plan's JSON shape and secret redaction across them.

use std::path::Path;

use fabric_config::descriptor::AdapterConfigField;
use fabric_config::plan::DoctorStatus;
use fabric_plan::{PlanOptions, doctor_with, inspect, plan};
use serde_json::json;

use super::world::{World, options, repo};

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

/// A config that selects no adapter fails the `config` check and the `adapter_descriptor`
/// check with the one finding of fabric-config's selector rule (code and path).
#[test]
fn doctor_reports_a_missing_selector_with_its_rule_code() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = fabric_config::FabricConfig::from_value(json!({"metadata": {"name": "none"}}))
        .expect("decodes");
    let report = doctor_with(&config, dir.path(), &options());
    let failing: Vec<(&str, &str, Option<&str>)> = report
        .checks
        .iter()
        .filter(|check| check.status == DoctorStatus::Fail)
        .map(|check| {
            (
                check.name.as_str(),
                check.code.as_str(),
                check.path.as_deref(),
            )
        })
        .collect();
    let missing = ("missing_adapter_selector", Some("harness.adapter_id"));
    assert_eq!(
        failing,
        [
            ("config", missing.0, missing.1),
            ("adapter_descriptor", missing.0, missing.1)
        ],
        "{report:?}"
    );
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

/// Issue 33 item 9: a base directory that is not UTF-8 is refused by plan and doctor with
/// an error naming it (bytes escaped), never converted lossily into the plan's paths.
#[test]
fn a_base_dir_that_is_not_utf8_is_refused_naming_it() {
    use std::os::unix::ffi::OsStrExt;
    let config = fabric_config::FabricConfig::parse(
        &json!({
            "schema_version": "fabric.agent/v1alpha1",
            "metadata": {"name": "non-utf8"},
            "harness": {"adapter_id": "fabric.scripted"}
        })
        .to_string(),
    )
    .expect("config");
    let base = Path::new(std::ffi::OsStr::from_bytes(b"/srv/d\xff/job"));
    let error = plan(&config, base, &PlanOptions::default()).expect_err("refused");
    assert_eq!(error.code(), "base_dir_not_utf8");
    assert_eq!(error.path(), Some("base_dir"));
    let message = error.to_string();
    assert!(message.contains(r"`/srv/d\xFF/job`"), "{message}");
    assert!(!message.contains('\u{FFFD}'), "{message}");
    assert_eq!(
        fabric_plan::resolve_base_dir(Path::new("/srv/job")).expect("utf-8"),
        Path::new("/srv/job")
    );

    let report = doctor_with(&config, base, &PlanOptions::default());
    assert_eq!(report.status, DoctorStatus::Fail);
    let failing: Vec<&str> = report
        .checks
        .iter()
        .filter(|check| check.status == DoctorStatus::Fail)
        .map(|check| check.code.as_str())
        .collect();
    assert_eq!(failing, ["base_dir_not_utf8"], "{report:?}");
}
