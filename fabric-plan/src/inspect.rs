//! `inspect`: the capability profile of a config against supplied descriptor metadata, for a
//! host that cannot see the task's installed adapter. No discovery, no adapter code.

use std::path::Path;

use fabric_config::FabricConfig;
use fabric_config::config::TelemetryProvider;
use fabric_config::descriptor::{AdapterConfigField, AdapterDescriptor, TargetDescriptor};
use fabric_config::plan::AdapterCapabilityProfile;
use serde_json::Value;

use crate::compat::Checker;
use crate::error::PlanError;
use crate::load;
use crate::planner;

const HOST_FILE: &str = "host.fabric-adapter.json";
const HOST_TARGET_FILE: &str = "host.fabric-target.json";

/// Reports declared skills/MCP support and ATIF availability of `config` against `descriptor`
/// (and `target` for a registered workflow), running every planning rule.
///
/// `None` descriptor: basic execution with false claims and no fingerprint; requested skills,
/// MCP servers or telemetry providers are rejected. The fingerprint is the descriptor's
/// ([`crate::descriptor_sha256`]) or, with a target, [`crate::combined_sha256`].
pub fn inspect(
    config: &FabricConfig,
    descriptor: Option<&AdapterDescriptor>,
    target: Option<&TargetDescriptor>,
) -> Result<AdapterCapabilityProfile, PlanError> {
    if let Some(first) = planner::config_findings(config).into_iter().next() {
        return Err(first);
    }
    let target_loaded = match (&config.workflow, target) {
        (Some(workflow), Some(target)) => {
            let value = serde_json::to_value(target).unwrap_or(Value::Null);
            let loaded = load::parse_target_value(value, Path::new(HOST_TARGET_FILE))?;
            if loaded.descriptor.id != workflow.target_id {
                return Err(PlanError::TargetMismatch {
                    target_id: loaded.descriptor.id.clone(),
                    path: "workflow.target_id".to_owned(),
                    reason: "the supplied target descriptor does not match the configured target"
                        .to_owned(),
                });
            }
            Some(loaded)
        }
        (Some(workflow), None) => {
            return Err(PlanError::TargetMismatch {
                target_id: workflow.target_id.clone(),
                path: "workflow.target_id".to_owned(),
                reason: "a registered workflow requires its target descriptor metadata".to_owned(),
            });
        }
        (None, Some(target)) => {
            return Err(PlanError::TargetMismatch {
                target_id: target.id.clone(),
                path: "workflow.target_id".to_owned(),
                reason:
                    "a target descriptor was supplied but the config selects no workflow target"
                        .to_owned(),
            });
        }
        (None, None) => None,
    };
    let adapter_id = match (&config.harness, &target_loaded) {
        (Some(harness), _) => harness.adapter_id.clone(),
        (None, Some(target)) => target.descriptor.adapter_id.clone(),
        (None, None) => String::new(),
    };
    let Some(descriptor) = descriptor else {
        let skills = config
            .skills
            .as_ref()
            .is_some_and(|skills| !skills.paths.is_empty());
        let mcp = config
            .mcp
            .as_ref()
            .is_some_and(|mcp| !mcp.servers.is_empty());
        let telemetry = config
            .telemetry
            .as_ref()
            .is_some_and(|t| !t.providers.is_empty());
        let requested = [
            (skills, "skills"),
            (mcp, "mcp"),
            (telemetry, "telemetry.providers"),
        ];
        if let Some((_, path)) = requested.into_iter().find(|(requested, _)| *requested) {
            return Err(PlanError::incompatible(
                &adapter_id,
                path,
                "cannot confirm requested skills, MCP, or telemetry: host descriptor metadata is unavailable",
            ));
        }
        return Ok(AdapterCapabilityProfile {
            adapter_id,
            descriptor_sha256: None,
            skills: false,
            mcp: false,
            atif: false,
        });
    };
    if descriptor.adapter_id != adapter_id {
        return Err(PlanError::incompatible(
            &adapter_id,
            "harness.adapter_id",
            format!(
                "the supplied descriptor is for adapter `{}`",
                descriptor.adapter_id
            ),
        ));
    }
    let value = serde_json::to_value(descriptor).unwrap_or(Value::Null);
    let adapter = load::parse_adapter_value(value, Path::new(HOST_FILE))?;
    if let Some(target) = &target_loaded {
        load::check_target_for_adapter(&target.descriptor, &adapter.descriptor)?;
    }
    if let Some(first) = Checker::new(config, &adapter, target_loaded.as_ref())
        .run()
        .into_iter()
        .next()
    {
        return Err(first);
    }
    let providers = config
        .telemetry
        .as_ref()
        .map(|telemetry| {
            telemetry
                .providers
                .keys()
                .filter_map(|name| TelemetryProvider::parse(name))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let declares_atif = |name: &str| {
        adapter
            .descriptor
            .telemetry
            .providers
            .get(name)
            .is_some_and(|support| support.outputs.iter().any(|output| output == "atif"))
    };
    let native_atif = providers.contains(&TelemetryProvider::Native) && declares_atif("native");
    let relay_atif = if providers.contains(&TelemetryProvider::Relay) {
        relay_atif(config, &adapter_id, declares_atif("relay"))?
    } else {
        false
    };
    Ok(AdapterCapabilityProfile {
        adapter_id,
        descriptor_sha256: Some(planner::fingerprint(&adapter, target_loaded.as_ref())),
        skills: adapter.descriptor.accepts(AdapterConfigField::Skills),
        mcp: adapter.descriptor.accepts(AdapterConfigField::Mcp),
        atif: native_atif || relay_atif,
    })
}

/// Relay ATIF is confirmed when exactly one observability component enables ATIF and the
/// descriptor's relay provider declares the `atif` output. A requested but unconfirmable ATIF
/// output fails.
fn relay_atif(config: &FabricConfig, adapter_id: &str, declared: bool) -> Result<bool, PlanError> {
    let relay = crate::relay::relay_config(config);
    let observability: Vec<&Value> = relay
        .get("components")
        .and_then(Value::as_array)
        .map(|components| {
            components
                .iter()
                .filter(|component| {
                    component.get("kind").and_then(Value::as_str) == Some("observability")
                })
                .collect()
        })
        .unwrap_or_default();
    let mut enabled = Vec::new();
    for component in &observability {
        let active = component
            .get("enabled")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        let atif = component
            .get("config")
            .and_then(|config| config.get("atif"));
        let on = match atif {
            None | Some(Value::Null) => false,
            Some(Value::Object(atif)) => match atif.get("enabled") {
                None => false,
                Some(Value::Bool(flag)) => *flag,
                Some(_) => {
                    return Err(PlanError::incompatible(
                        adapter_id,
                        "relay.observability.atif.enabled",
                        "Relay ATIF admission requires an object with a boolean enabled field",
                    ));
                }
            },
            Some(_) => {
                return Err(PlanError::incompatible(
                    adapter_id,
                    "relay.observability.atif",
                    "Relay ATIF admission requires an object with a boolean enabled field",
                ));
            }
        };
        enabled.push(active && on);
    }
    let requested = enabled.iter().any(|on| *on);
    if requested && (observability.len() != 1 || !declared) {
        return Err(PlanError::incompatible(
            adapter_id,
            "relay.observability.atif",
            "cannot confirm requested Relay ATIF output: the provider must declare ATIF and exactly one observability component must enable it",
        ));
    }
    Ok(observability.len() == 1 && enabled[0])
}
