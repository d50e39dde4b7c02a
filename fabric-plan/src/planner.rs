//! `plan`: resolve descriptors, check compatibility, project the southbound `AgentConfig`, and
//! route capabilities and telemetry.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use fabric_config::FabricConfig;
use fabric_config::agent::{
    AgentConfig, AgentHarnessConfig, AgentInstructionConfig, AgentInstructionsConfig,
    AgentMcpConfig, AgentMcpServerConfig, AgentModelConfig, AgentRuntimeConfig, AgentSkillConfig,
    AgentToolDefinition, AgentToolsConfig, AgentWorkflowConfig, AgentWorkflowEntrypointConfig,
};
use fabric_config::config::{McpExposure, TelemetryProvider};
use fabric_config::descriptor::AdapterConfigField as Field;
use fabric_config::path::resolve_path;
use fabric_config::plan::{
    CapabilityKind, CapabilityPlan, CapabilityRoute, CapabilityTarget, EnvironmentPlan,
    ResolvedAdapterDescriptor, ResolvedTargetDescriptor, RunPlan, TelemetryPlan, ToolsPlan,
};
use serde_json::Value;

use crate::compat::{Checker, legacy_model_field};
use crate::discovery::{self, Discovered, DiscoveryOptions};
use crate::error::{DescriptorOrigin, PlanError};
use crate::fingerprint;
use crate::load::{LoadedAdapter, LoadedTarget};

/// Options of [`plan`](crate::plan()) and [`doctor_with`](crate::doctor_with).
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    /// Discovery sources other than the config's `discovery.local_paths` (which always come
    /// first). `None` (the default) reads them from the environment: `FABRIC_ADAPTER_PATH`,
    /// installed prefixes and the bundled adapters directory.
    pub discovery: Option<DiscoveryOptions>,
    /// When set, planning fails with `descriptor_mismatch` unless the plan's fingerprint
    /// (adapter descriptor, plus the target descriptor when a workflow target is selected)
    /// equals this value.
    pub expected_descriptor_sha256: Option<String>,
    /// The calling Python interpreter's prefix (`CallOptions.python_prefix`): a discovery
    /// source of its own (`interpreter_prefix`), searched before the installed prefixes.
    /// Used only when the discovery options do not set one.
    pub python_prefix: Option<PathBuf>,
    /// The calling Python interpreter (`CallOptions.python_interpreter`): the interpreter
    /// `doctor`'s import check asks, after `$ADAPTER_PYTHON` (see
    /// [`crate::python_interpreter`]).
    pub python_interpreter: Option<PathBuf>,
    /// The `PATH` `doctor` looks required binaries up on. Default (`None`): this process's.
    /// The conformance kit checks that a binary missing from it is reported.
    pub binary_path: Option<std::ffi::OsString>,
}

/// Descriptors selected for a config.
#[derive(Debug, Clone)]
pub(crate) struct Resolution {
    pub adapter: Discovered<LoadedAdapter>,
    pub target: Option<Discovered<LoadedTarget>>,
}

impl Resolution {
    /// The first provenance record of each selected descriptor.
    pub(crate) fn origins(&self) -> (Option<DescriptorOrigin>, Option<DescriptorOrigin>) {
        let origin = |provenance: &[fabric_config::plan::DescriptorProvenance]| {
            provenance.first().map(|first| DescriptorOrigin {
                source: first.source,
                file: PathBuf::from(&first.path),
            })
        };
        (
            origin(&self.adapter.provenance),
            self.target
                .as_ref()
                .and_then(|target| origin(&target.provenance)),
        )
    }
}

/// The absolute, lexically normalized base directory, refused when it is not valid UTF-8
/// ([`PlanError::BaseDirNotUtf8`]): the plan and the adapter's config carry the paths
/// anchored at it as JSON strings, which a lossy conversion would silently change.
pub fn resolve_base_dir(base_dir: &Path) -> Result<PathBuf, PlanError> {
    let absolute = absolute_base(base_dir);
    if absolute.to_str().is_none() {
        return Err(PlanError::BaseDirNotUtf8 { base_dir: absolute });
    }
    Ok(absolute)
}

/// Absolute, lexically normalized base directory.
pub(crate) fn absolute_base(base_dir: &Path) -> PathBuf {
    let absolute = if base_dir.is_absolute() {
        base_dir.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(base_dir))
            .unwrap_or_else(|_| base_dir.to_path_buf())
    };
    resolve_path(&absolute, ".")
}

pub(crate) fn discovery_options(
    config: &FabricConfig,
    base_dir: &Path,
    options: &PlanOptions,
) -> DiscoveryOptions {
    let local: &[String] = config
        .discovery
        .as_ref()
        .map(|discovery| discovery.local_paths.as_slice())
        .unwrap_or_default();
    let mut discovery = match &options.discovery {
        None => DiscoveryOptions::from_env(local, base_dir),
        Some(given) => {
            let mut merged = given.clone();
            let mut paths: Vec<PathBuf> = local
                .iter()
                .map(|entry| resolve_path(base_dir, entry))
                .collect();
            paths.append(&mut merged.local_paths);
            merged.local_paths = paths;
            merged
        }
    };
    if discovery.interpreter_prefix.is_none() {
        discovery.interpreter_prefix = options.python_prefix.clone();
    }
    discovery
}

/// Config rules that are independent of any descriptor (fabric-config's `validate_all`).
pub(crate) fn config_findings(config: &FabricConfig) -> Vec<PlanError> {
    config
        .validate_all()
        .into_iter()
        .map(PlanError::from)
        .collect()
}

pub(crate) fn resolve(
    config: &FabricConfig,
    discovery: &DiscoveryOptions,
) -> Result<Resolution, PlanError> {
    let target = match &config.workflow {
        Some(workflow) => Some(discovery::find_target(discovery, &workflow.target_id)?),
        None => None,
    };
    let adapter_id = config
        .selected_adapter(target.as_ref().map(|target| &target.loaded.descriptor))?
        .to_owned();
    let adapter = discovery::find_adapter(discovery, &adapter_id)?;
    if let Some(target) = &target {
        crate::load::check_target_for_adapter(
            &target.loaded.descriptor,
            &adapter.loaded.descriptor,
        )
        .map_err(|error| match error {
            PlanError::TargetMismatch {
                target_id, reason, ..
            } => PlanError::TargetMismatch {
                target_id,
                path: "workflow.target_id".to_owned(),
                reason,
            },
            other => other,
        })?;
    }
    Ok(Resolution { adapter, target })
}

/// Plans `config` against the descriptors discovered for it. See the crate docs.
pub fn plan(
    config: &FabricConfig,
    base_dir: &Path,
    options: &PlanOptions,
) -> Result<RunPlan, PlanError> {
    plan_with_inputs(config, base_dir, options).map(|(plan, _)| plan)
}

/// What a plan was made from besides the config and the [`PlanOptions`]: the base directory
/// and the descriptors discovery resolved, with their provenance. Planning is a pure
/// function of the config, the options and these, so a caller may keep a plan and reuse it
/// for the same config and options while [`plan_inputs`] returns equal inputs (what the C
/// ABI's `fabric_plan` does).
///
/// Descriptors compare by identity: discovery keeps one parse per file content (see
/// [`crate::discovery`]), so an edited, replaced, added or removed descriptor file makes the
/// inputs differ.
#[derive(Debug, Clone)]
pub struct PlanInputs {
    base_dir: PathBuf,
    resolution: Resolution,
}

impl PartialEq for PlanInputs {
    fn eq(&self, other: &PlanInputs) -> bool {
        fn same<T>(a: &Discovered<T>, b: &Discovered<T>) -> bool {
            Arc::ptr_eq(&a.loaded, &b.loaded) && a.provenance == b.provenance
        }
        self.base_dir == other.base_dir
            && same(&self.resolution.adapter, &other.resolution.adapter)
            && match (&self.resolution.target, &other.resolution.target) {
                (None, None) => true,
                (Some(a), Some(b)) => same(a, b),
                _ => false,
            }
    }
}

/// The inputs a plan of `config` would be made from now (discovery only: no compatibility
/// check, no plan). Fails as discovery in [`plan`] fails.
pub fn plan_inputs(
    config: &FabricConfig,
    base_dir: &Path,
    options: &PlanOptions,
) -> Result<PlanInputs, PlanError> {
    let base_dir = resolve_base_dir(base_dir)?;
    // The first source holding a record of the wanted id wins, so when the config's own
    // `local_paths` resolve everything, the other sources cannot change the result: try
    // them alone first (no environment, no installed prefixes, no bundled directory to
    // look up), and search every source only when that fails.
    if options.discovery.is_none()
        && let Some(local) = config.discovery.as_ref().map(|d| &d.local_paths)
        && !local.is_empty()
    {
        let explicit = DiscoveryOptions::explicit(
            local
                .iter()
                .map(|entry| resolve_path(&base_dir, entry))
                .collect(),
        );
        if let Ok(resolution) = resolve(config, &explicit) {
            return Ok(PlanInputs {
                base_dir,
                resolution,
            });
        }
    }
    let discovery = discovery_options(config, &base_dir, options);
    let resolution = resolve(config, &discovery)?;
    Ok(PlanInputs {
        base_dir,
        resolution,
    })
}

/// [`plan`], also returning the [`PlanInputs`] the plan was made from.
pub fn plan_with_inputs(
    config: &FabricConfig,
    base_dir: &Path,
    options: &PlanOptions,
) -> Result<(RunPlan, PlanInputs), PlanError> {
    resolve_base_dir(base_dir)?;
    if let Some(first) = config_findings(config).into_iter().next() {
        return Err(first);
    }
    let inputs = plan_inputs(config, base_dir, options)?;
    let resolution = &inputs.resolution;
    let adapter: &LoadedAdapter = &resolution.adapter.loaded;
    let target: Option<&LoadedTarget> = resolution.target.as_ref().map(|target| &*target.loaded);
    let (adapter_origin, target_origin) = resolution.origins();
    if let Some(first) = Checker::new(config, adapter, target)
        .with_origins(adapter_origin, target_origin)
        .run()
        .into_iter()
        .next()
    {
        return Err(first);
    }
    let sha = fingerprint(adapter, target);
    if let Some(expected) = &options.expected_descriptor_sha256
        && *expected != sha
    {
        return Err(PlanError::DescriptorMismatch {
            adapter_id: adapter.descriptor.adapter_id.clone(),
            expected: expected.clone(),
            actual: sha,
        });
    }
    let plan = build_plan(config, &inputs.base_dir, resolution, sha);
    Ok((plan, inputs))
}

pub(crate) fn fingerprint(adapter: &LoadedAdapter, target: Option<&LoadedTarget>) -> String {
    match target {
        None => adapter.sha256.clone(),
        Some(target) => {
            fingerprint::pair_sha256(adapter.normalized.clone(), target.normalized.clone())
        }
    }
}

fn build_plan(
    config: &FabricConfig,
    base_dir: &Path,
    resolution: &Resolution,
    sha: String,
) -> RunPlan {
    let adapter = &resolution.adapter.loaded;
    let target = resolution
        .target
        .as_ref()
        .map(|target| Arc::clone(&target.loaded));
    RunPlan {
        agent_name: config.metadata.name.clone(),
        base_dir: base_dir.display().to_string(),
        config: config.clone(),
        agent_config: agent_config(config, adapter, target.as_deref(), base_dir),
        adapter: Some(RunPlan::adapter_info(&adapter.descriptor)),
        adapter_descriptor: Some(ResolvedAdapterDescriptor {
            provenance: resolution.adapter.provenance.clone(),
            descriptor: adapter.descriptor.clone(),
        }),
        adapter_target_descriptor: resolution.target.as_ref().map(|target| {
            ResolvedTargetDescriptor {
                provenance: target.provenance.clone(),
                descriptor: target.loaded.descriptor.clone(),
            }
        }),
        resolution: config
            .harness
            .as_ref()
            .and_then(|harness| harness.resolution),
        capability_plan: capability_plan(config, adapter, base_dir),
        capabilities: adapter.descriptor.capabilities.clone(),
        environment_plan: environment_plan(config, base_dir),
        telemetry_plan: telemetry_plan(config, adapter, base_dir),
        descriptor_sha256: Some(sha),
    }
}

fn resolve_string(base_dir: &Path, entry: &str) -> String {
    resolve_path(base_dir, entry).display().to_string()
}

/// The southbound projection of `config` for the selected adapter (and target).
pub(crate) fn agent_config(
    config: &FabricConfig,
    adapter: &LoadedAdapter,
    target: Option<&LoadedTarget>,
    base_dir: &Path,
) -> AgentConfig {
    let mut agent = AgentConfig::default();
    if let Some(harness) = &config.harness
        && (!harness.settings.is_empty() || !harness.extensions.is_empty())
    {
        agent.harness = Some(AgentHarnessConfig {
            settings: harness.settings.clone(),
            extensions: harness.extensions.clone(),
        });
    }
    let legacy_top_p = legacy_model_field(adapter, Field::ModelsTopP, "top_p");
    let legacy_max_tokens = legacy_model_field(adapter, Field::ModelsMaxTokens, "max_tokens");
    for (role, model) in &config.models {
        let mut extensions = model.extensions.clone();
        let mut top_p = model.top_p;
        let mut max_tokens = model.max_tokens;
        if legacy_top_p && let Some(value) = top_p.take() {
            extensions.insert("top_p".to_owned(), Value::from(value));
        }
        if legacy_max_tokens && let Some(value) = max_tokens.take() {
            extensions.insert("max_tokens".to_owned(), Value::from(value));
        }
        agent.models.insert(
            role.clone(),
            AgentModelConfig {
                provider: model.provider.trim().to_lowercase(),
                model: model.model.clone(),
                api_key_env: model.api_key_env.clone(),
                temperature: model.temperature,
                top_p,
                max_tokens,
                base_url: model.base_url.clone(),
                settings: model.settings.clone(),
                extensions,
            },
        );
    }
    if let Some(instructions) = &config.instructions
        && (instructions.system.is_some() || !instructions.extensions.is_empty())
    {
        agent.instructions = Some(AgentInstructionsConfig {
            system: instructions
                .system
                .as_ref()
                .map(|system| AgentInstructionConfig {
                    content: system.content.clone(),
                    mode: system.mode,
                    extensions: system.extensions.clone(),
                }),
            extensions: instructions.extensions.clone(),
        });
    }
    let runtime = &config.runtime;
    if runtime.max_turns.is_some() || !runtime.extensions.is_empty() {
        agent.runtime = Some(AgentRuntimeConfig {
            max_turns: runtime
                .max_turns
                .and_then(|turns| u32::try_from(turns).ok()),
            extensions: runtime.extensions.clone(),
        });
    }
    if let Some(skills) = &config.skills
        && (!skills.paths.is_empty() || !skills.extensions.is_empty())
    {
        agent.skills = Some(AgentSkillConfig {
            paths: skills
                .paths
                .iter()
                .map(|path| resolve_string(base_dir, path))
                .collect(),
            extensions: skills.extensions.clone(),
        });
    }
    if let Some(mcp) = &config.mcp {
        let servers = mcp
            .servers
            .iter()
            .filter(|(_, server)| server.exposure == McpExposure::HarnessNative)
            .map(|(name, server)| {
                (
                    name.clone(),
                    AgentMcpServerConfig {
                        transport: server.transport.as_str().to_owned(),
                        url: server.url.clone(),
                        args: server.args.clone(),
                        env: server.env.clone(),
                        authentication: server.authentication.clone(),
                        custom_headers: server.custom_headers.clone(),
                        allowed_tools: server.allowed_tools.clone(),
                        blocked_tools: server.blocked_tools.clone(),
                        extensions: server.extensions.clone(),
                    },
                )
            })
            .collect::<std::collections::BTreeMap<_, _>>();
        if !servers.is_empty() || !mcp.extensions.is_empty() {
            agent.mcp = Some(AgentMcpConfig {
                servers,
                extensions: mcp.extensions.clone(),
            });
        }
    }
    if let Some(tools) = &config.tools
        && (!tools.definitions.is_empty()
            || tools.enabled.is_some()
            || !tools.blocked.is_empty()
            || !tools.extensions.is_empty())
    {
        agent.tools = Some(AgentToolsConfig {
            definitions: tools
                .definitions
                .iter()
                .map(|(name, definition)| {
                    (
                        name.clone(),
                        AgentToolDefinition {
                            kind: definition.kind.clone(),
                            reference: definition.reference.clone(),
                            settings: definition.settings.clone(),
                            extensions: definition.extensions.clone(),
                        },
                    )
                })
                .collect(),
            enabled: tools.enabled.clone(),
            blocked: tools.blocked.clone(),
            extensions: tools.extensions.clone(),
        });
    }
    if let (Some(workflow), Some(target)) = (&config.workflow, target) {
        let entrypoint = &target.descriptor.spec.entrypoint;
        agent.workflow = Some(AgentWorkflowConfig {
            entrypoint: AgentWorkflowEntrypointConfig {
                kind: entrypoint.kind.clone(),
                reference: entrypoint.reference.clone(),
                extensions: Default::default(),
            },
            settings: workflow.settings.clone(),
            extensions: workflow.extensions.clone(),
        });
    }
    agent
}

fn capability_plan(
    config: &FabricConfig,
    adapter: &LoadedAdapter,
    base_dir: &Path,
) -> CapabilityPlan {
    let descriptor = &adapter.descriptor;
    let mut plan = CapabilityPlan::default();
    if let Some(tools) = &config.tools {
        plan.tools = ToolsPlan {
            definitions: tools.definitions.clone(),
            enabled: tools.enabled.clone(),
            blocked: tools.blocked.clone(),
        };
        let parts = [
            (
                !tools.definitions.is_empty(),
                Field::ToolsDefinitions,
                "tools.definitions",
                "named tool definitions",
            ),
            (
                tools.enabled.is_some(),
                Field::ToolsEnabled,
                "tools.enabled",
                "enabled-tools selection",
            ),
            (
                !tools.blocked.is_empty(),
                Field::ToolsBlocked,
                "tools.blocked",
                "blocked-tools policy",
            ),
        ];
        for (configured, field, name, label) in parts {
            if !configured {
                continue;
            }
            plan.tools_configured = true;
            let native = descriptor.accepts(field);
            let route = if native {
                plan.native.tools_configured = true;
                CapabilityRoute {
                    kind: CapabilityKind::Tools,
                    name: name.to_owned(),
                    target: CapabilityTarget::HarnessNative,
                    reason: format!("selected adapter explicitly supports the NeMo Fabric {label}"),
                }
            } else {
                plan.unsupported.tools_configured = true;
                CapabilityRoute {
                    kind: CapabilityKind::Tools,
                    name: name.to_owned(),
                    target: CapabilityTarget::Unsupported,
                    reason: format!(
                        "selected adapter does not explicitly declare {label} support and NeMo Fabric-managed enforcement is not implemented"
                    ),
                }
            };
            plan.routes.push(route);
        }
    }
    if let Some(skills) = &config.skills
        && !skills.paths.is_empty()
    {
        let paths: Vec<String> = skills
            .paths
            .iter()
            .map(|path| resolve_string(base_dir, path))
            .collect();
        plan.skill_paths = paths.clone();
        if descriptor.accepts(Field::Skills) {
            plan.native.skill_paths = paths;
            plan.routes.push(CapabilityRoute {
                kind: CapabilityKind::Skills,
                name: "skills".to_owned(),
                target: CapabilityTarget::HarnessNative,
                reason: "selected adapter accepts NeMo Fabric skills config".to_owned(),
            });
        } else {
            plan.unsupported.skill_paths = paths;
            plan.routes.push(CapabilityRoute {
                kind: CapabilityKind::Skills,
                name: "skills".to_owned(),
                target: CapabilityTarget::Unsupported,
                reason: "selected adapter does not declare native skills support and NeMo Fabric-managed skills are not implemented".to_owned(),
            });
        }
    }
    if let Some(mcp) = &config.mcp {
        for (name, server) in &mcp.servers {
            plan.mcp_servers.insert(name.clone(), server.clone());
            let (target, reason) = if server.exposure == McpExposure::FabricManaged {
                (
                    CapabilityTarget::Unsupported,
                    "MCP server explicitly requests NeMo Fabric-managed exposure but NeMo Fabric-managed MCP is not implemented",
                )
            } else if descriptor.accepts(Field::Mcp) {
                (
                    CapabilityTarget::HarnessNative,
                    "MCP server uses harness_native exposure and adapter accepts mcp",
                )
            } else {
                (
                    CapabilityTarget::Unsupported,
                    "selected adapter does not declare native MCP support and NeMo Fabric-managed MCP is not implemented",
                )
            };
            let bucket = match target {
                CapabilityTarget::HarnessNative => &mut plan.native,
                CapabilityTarget::FabricManaged => &mut plan.managed,
                CapabilityTarget::Unsupported => &mut plan.unsupported,
            };
            bucket.mcp_servers.insert(name.clone(), server.clone());
            plan.routes.push(CapabilityRoute {
                kind: CapabilityKind::Mcp,
                name: name.clone(),
                target,
                reason: reason.to_owned(),
            });
        }
    }
    plan
}

fn environment_plan(config: &FabricConfig, base_dir: &Path) -> Option<EnvironmentPlan> {
    let environment = config.environment.as_ref()?;
    Some(EnvironmentPlan {
        provider: environment.provider.clone(),
        control_location: environment.control_location,
        ownership: environment.ownership,
        workspace: environment
            .workspace
            .as_deref()
            .map(|path| resolve_string(base_dir, path)),
        artifacts: environment
            .artifacts
            .as_deref()
            .map(|path| resolve_string(base_dir, path)),
        env: environment.env.clone(),
        env_names: environment.env_names.clone(),
        connection: environment.connection.clone().into_iter().collect(),
        metadata: environment.metadata.clone().into_iter().collect(),
        settings: environment.settings.clone().into_iter().collect(),
    })
}

fn telemetry_plan(
    config: &FabricConfig,
    adapter: &LoadedAdapter,
    base_dir: &Path,
) -> Option<TelemetryPlan> {
    let telemetry = config
        .telemetry
        .as_ref()
        .filter(|telemetry| !telemetry.providers.is_empty())?;
    let providers: Vec<TelemetryProvider> = telemetry
        .providers
        .keys()
        .filter_map(|name| TelemetryProvider::parse(name))
        .collect();
    let mut outputs = BTreeSet::new();
    for name in telemetry.providers.keys() {
        if let Some(support) = adapter.descriptor.telemetry.providers.get(name) {
            outputs.extend(support.outputs.iter().cloned());
        }
    }
    let relay_enabled = telemetry.providers.contains_key("relay");
    let relay = config.relay.as_ref().filter(|_| relay_enabled);
    Some(TelemetryPlan {
        providers,
        relay_enabled,
        relay_project: relay.and_then(|relay| relay.project.clone()),
        relay_output_dir: relay
            .and_then(|relay| relay.output_dir.as_deref())
            .map(|dir| resolve_string(base_dir, dir)),
        relay_config: relay
            .map(|_| crate::relay::relay_config(config))
            .filter(|value| !value.is_null()),
        native_config: telemetry
            .providers
            .get("native")
            .and_then(|native| native.config.clone()),
        adapter_outputs: outputs.into_iter().collect(),
    })
}
