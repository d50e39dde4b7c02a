//! Compatibility of a config with the selected descriptor(s): every rule of the spec's
//! "Normalized Configuration Compatibility" section. Findings are collected (doctor reports
//! all of them; planning fails with the first). Nothing here changes the config.

use fabric_config::FabricConfig;
use fabric_config::config::{Extensions, McpAuthentication, McpExposure, ModelConfig};
use fabric_config::descriptor::{AdapterConfigField as Field, ExtensionPoint};
use serde_json::{Map, Value};

use crate::error::{DescriptorOrigin, PlanError};

const TARGET_SETTINGS_SCHEMA: &str = "adapter target settings schema";
use crate::load::{LoadedAdapter, LoadedTarget};
use crate::schema::{self, CompiledSchema};

/// Whether a legacy descriptor receives `top_p`/`max_tokens` through `extension_schemas.model`
/// (instead of the normalized `models.top_p`/`models.max_tokens` fields).
pub(crate) fn legacy_model_field(adapter: &LoadedAdapter, field: Field, name: &str) -> bool {
    !adapter.descriptor.accepts(field)
        && adapter
            .descriptor
            .extension_schema(ExtensionPoint::Model)
            .and_then(|schema| schema.get("properties"))
            .and_then(Value::as_object)
            .is_some_and(|properties| properties.contains_key(name))
}

/// Adds "did you mean `max_turns`?" to each finding at an extension key that is one slip
/// away from a field its section defines (`FabricConfig::extension_near_misses`), so that
/// `plan`, `doctor` and every start that plans say it, not only `validate`'s warning.
fn suggest_fields(config: &FabricConfig, findings: &mut [PlanError]) {
    let near = config.extension_near_misses();
    if near.is_empty() {
        return;
    }
    for finding in findings {
        let (PlanError::Incompatible { path, reason, .. }
        | PlanError::SchemaViolation { path, reason, .. }) = finding
        else {
            continue;
        };
        let suggestion = near
            .iter()
            .find(|miss| miss.path == *path)
            .and_then(|miss| miss.suggestion.as_deref());
        if let Some(field) = suggestion {
            reason.push_str(&format!(" (did you mean `{field}`?)"));
        }
    }
}

/// The model role selected for labels: `default`, else the only role; `Err` when several
/// roles exist without `default`; `Ok(None)` when there are no models.
pub(crate) fn selected_model(config: &FabricConfig) -> Result<Option<(&str, &ModelConfig)>, ()> {
    if let Some(model) = config.models.get("default") {
        return Ok(Some(("default", model)));
    }
    let mut roles = config.models.iter();
    match (roles.next(), roles.next()) {
        (None, _) => Ok(None),
        (Some((role, model)), None) => Ok(Some((role.as_str(), model))),
        (Some(_), Some(_)) => Err(()),
    }
}

pub(crate) struct Checker<'a> {
    pub config: &'a FabricConfig,
    pub adapter: &'a LoadedAdapter,
    pub target: Option<&'a LoadedTarget>,
    pub findings: Vec<PlanError>,
    /// Where the adapter descriptor came from (named in schema errors).
    pub adapter_origin: Option<DescriptorOrigin>,
    /// Where the target descriptor came from.
    pub target_origin: Option<DescriptorOrigin>,
}

impl<'a> Checker<'a> {
    pub(crate) fn new(
        config: &'a FabricConfig,
        adapter: &'a LoadedAdapter,
        target: Option<&'a LoadedTarget>,
    ) -> Self {
        Checker {
            config,
            adapter,
            target,
            findings: Vec::new(),
            adapter_origin: None,
            target_origin: None,
        }
    }

    /// Names the descriptor files in schema errors.
    pub(crate) fn with_origins(
        mut self,
        adapter: Option<DescriptorOrigin>,
        target: Option<DescriptorOrigin>,
    ) -> Self {
        self.adapter_origin = adapter;
        self.target_origin = target;
        self
    }

    fn violation(&self, schema: &'static str, path: String, reason: String) -> PlanError {
        let origin = if schema == TARGET_SETTINGS_SCHEMA {
            self.target_origin.clone()
        } else {
            self.adapter_origin.clone()
        };
        PlanError::SchemaViolation {
            adapter_id: self.id().to_owned(),
            schema,
            path,
            reason,
            origin,
        }
    }

    fn id(&self) -> &str {
        &self.adapter.descriptor.adapter_id
    }

    fn accepts(&self, field: Field) -> bool {
        self.adapter.descriptor.accepts(field)
    }

    fn incompatible(&mut self, path: impl Into<String>, reason: impl Into<String>) {
        let error = PlanError::incompatible(self.id(), path, reason);
        self.findings.push(error);
    }

    fn schema_violations(
        &mut self,
        schema: &CompiledSchema,
        name: &'static str,
        prefix: &str,
        instance: &Value,
    ) {
        for violation in schema.violations(instance) {
            self.findings.push(self.violation(
                name,
                schema::join(prefix, &violation.path),
                violation.reason,
            ));
        }
    }

    /// Checks `extensions` found on a typed config object at `path`.
    fn extensions(&mut self, point: ExtensionPoint, path: &str, extensions: &Extensions) {
        if extensions.is_empty() {
            return;
        }
        match self.adapter.schemas.extensions.get(&point).cloned() {
            None => {
                // The key named is the one that nearly spells a field, when there is one
                // (`runtime.max_turn`): that is the likelier slip, and it carries the hint.
                let near = self.config.extension_near_misses();
                let key = extensions
                    .keys()
                    .find(|key| {
                        let full = schema::join(path, key);
                        near.iter().any(|miss| miss.path == full)
                    })
                    .or_else(|| extensions.keys().next())
                    .map(String::as_str)
                    .unwrap_or_default();
                self.incompatible(
                    schema::join(path, key),
                    format!(
                        "the adapter descriptor does not declare an extension schema for {}",
                        point.as_str()
                    ),
                );
            }
            Some(compiled) => {
                let instance = Value::Object(
                    extensions
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                );
                self.schema_violations(&compiled, "adapter extension schema", path, &instance);
            }
        }
    }

    /// Runs every rule.
    pub(crate) fn run(mut self) -> Vec<PlanError> {
        self.harness();
        self.models();
        self.instructions();
        self.runtime();
        self.tools();
        self.skills();
        self.mcp();
        self.telemetry();
        self.workflow();
        self.config_schema();
        suggest_fields(self.config, &mut self.findings);
        self.findings
    }

    fn harness(&mut self) {
        let settings = self
            .config
            .harness
            .as_ref()
            .map(|harness| harness.settings.clone())
            .unwrap_or_default();
        match self.adapter.schemas.settings.clone() {
            None if !settings.is_empty() => {
                let key = settings.keys().next().cloned().unwrap_or_default();
                self.findings.push(self.violation("adapter settings schema", format!("harness.settings.{key}"), "the resolved descriptor does not declare a settings_schema, so only an empty settings map is accepted".to_owned()));
            }
            None => {}
            Some(compiled) => {
                let instance = Value::Object(settings.into_iter().collect());
                self.schema_violations(
                    &compiled,
                    "adapter settings schema",
                    "harness.settings",
                    &instance,
                );
            }
        }
        if let Some(harness) = &self.config.harness {
            let extensions = harness.extensions.clone();
            self.extensions(ExtensionPoint::Harness, "harness", &extensions);
        }
    }

    fn models(&mut self) {
        let config = self.config;
        if config.models.is_empty() {
            return;
        }
        if !self.accepts(Field::Models) {
            self.incompatible(
                "models",
                "the adapter does not consume normalized model configuration",
            );
            return;
        }
        if selected_model(config).is_err() {
            self.findings.push(PlanError::ModelRoleAmbiguous {
                adapter_id: self.id().to_owned(),
            });
        }
        let legacy_top_p = legacy_model_field(self.adapter, Field::ModelsTopP, "top_p");
        let legacy_max_tokens =
            legacy_model_field(self.adapter, Field::ModelsMaxTokens, "max_tokens");
        for (role, model) in &config.models {
            let path = format!("models.{role}");
            if model.base_url.is_some() && !self.accepts(Field::ModelsBaseUrl) {
                self.incompatible(
                    format!("{path}.base_url"),
                    "the adapter does not declare custom endpoint support",
                );
            }
            if model.temperature.is_some() && !self.accepts(Field::ModelsTemperature) {
                self.incompatible(
                    format!("{path}.temperature"),
                    "the adapter does not declare an equivalent native mapping",
                );
            }
            if model.top_p.is_some() && !self.accepts(Field::ModelsTopP) && !legacy_top_p {
                self.incompatible(
                    format!("{path}.top_p"),
                    "the adapter does not declare an equivalent native mapping",
                );
            }
            if model.max_tokens.is_some()
                && !self.accepts(Field::ModelsMaxTokens)
                && !legacy_max_tokens
            {
                self.incompatible(
                    format!("{path}.max_tokens"),
                    "the adapter does not declare an equivalent native mapping",
                );
            }
            // Extensions, including legacy top_p/max_tokens moved into them.
            let mut extensions = model.extensions.clone();
            if legacy_top_p && let Some(top_p) = model.top_p {
                extensions.insert("top_p".to_owned(), Value::from(top_p));
            }
            if legacy_max_tokens && let Some(max_tokens) = model.max_tokens {
                extensions.insert("max_tokens".to_owned(), Value::from(max_tokens));
            }
            self.extensions(ExtensionPoint::Model, &path, &extensions);
            if let Some(compiled) = self.adapter.schemas.model.clone() {
                let instance = model_schema_instance(model, legacy_top_p, legacy_max_tokens);
                self.schema_violations(&compiled, "adapter model schema", &path, &instance);
            }
        }
    }

    fn instructions(&mut self) {
        let Some(instructions) = &self.config.instructions else {
            return;
        };
        if let Some(system) = &instructions.system {
            if !self.accepts(Field::InstructionsSystem) {
                self.incompatible(
                    "instructions.system",
                    "the adapter does not declare an equivalent native mapping",
                );
            } else {
                let modes = self.adapter.descriptor.config.instruction_modes();
                if !modes
                    .iter()
                    .any(|mode| mode.as_str() == system.mode.as_str())
                {
                    let supported: Vec<&str> = modes.iter().map(|mode| mode.as_str()).collect();
                    self.incompatible(
                        "instructions.system.mode",
                        format!(
                            "mode `{}` is not supported; supported modes: {}",
                            system.mode.as_str(),
                            supported.join(", ")
                        ),
                    );
                }
            }
            self.extensions(
                ExtensionPoint::Instruction,
                "instructions.system",
                &system.extensions,
            );
        }
        self.extensions(
            ExtensionPoint::Instructions,
            "instructions",
            &instructions.extensions,
        );
    }

    fn runtime(&mut self) {
        let runtime = &self.config.runtime;
        if runtime.max_turns.is_some() && !self.accepts(Field::RuntimeMaxTurns) {
            self.incompatible(
                "runtime.max_turns",
                "the adapter does not declare an equivalent native mapping",
            );
        }
        self.extensions(ExtensionPoint::Runtime, "runtime", &runtime.extensions);
    }

    fn tools(&mut self) {
        let Some(tools) = &self.config.tools else {
            return;
        };
        if !tools.definitions.is_empty() {
            if !self.accepts(Field::ToolsDefinitions) {
                self.incompatible(
                    "tools.definitions",
                    "selected adapter does not explicitly declare named tool definitions support and NeMo Fabric-managed tools are not implemented",
                );
            } else {
                let compiled = self.adapter.schemas.tool_definition.clone();
                for (name, definition) in &tools.definitions {
                    let path = format!("tools.definitions.{name}");
                    match &compiled {
                        None => self.findings.push(
                            self.violation(
                                "adapter tool definition schema",
                                path.clone(),
                                "the resolved descriptor does not declare a tool_definition_schema"
                                    .to_owned(),
                            ),
                        ),
                        Some(compiled) => {
                            let mut instance = Map::new();
                            instance
                                .insert("kind".to_owned(), Value::from(definition.kind.clone()));
                            instance.insert(
                                "ref".to_owned(),
                                Value::from(definition.reference.clone()),
                            );
                            if !definition.settings.is_empty() {
                                instance.insert(
                                    "settings".to_owned(),
                                    Value::Object(
                                        definition.settings.clone().into_iter().collect(),
                                    ),
                                );
                            }
                            self.schema_violations(
                                compiled,
                                "adapter tool definition schema",
                                &path,
                                &Value::Object(instance),
                            );
                        }
                    }
                    self.extensions(
                        ExtensionPoint::ToolDefinition,
                        &path,
                        &definition.extensions,
                    );
                }
            }
        }
        if tools.enabled.is_some() && !self.accepts(Field::ToolsEnabled) {
            self.incompatible(
                "tools.enabled",
                "selected adapter does not explicitly declare enabled-tools selection support and NeMo Fabric-managed enforcement is not implemented",
            );
        }
        if !tools.blocked.is_empty() && !self.accepts(Field::ToolsBlocked) {
            self.incompatible(
                "tools.blocked",
                "selected adapter does not explicitly declare blocked-tools policy support and NeMo Fabric-managed enforcement is not implemented",
            );
        }
        self.extensions(ExtensionPoint::Tools, "tools", &tools.extensions);
    }

    fn skills(&mut self) {
        let Some(skills) = &self.config.skills else {
            return;
        };
        if !skills.paths.is_empty() && !self.accepts(Field::Skills) {
            self.incompatible(
                "skills",
                "selected adapter does not declare native skills support and NeMo Fabric-managed skills are not implemented",
            );
        }
        self.extensions(ExtensionPoint::Skills, "skills", &skills.extensions);
    }

    fn mcp(&mut self) {
        let Some(mcp) = &self.config.mcp else {
            return;
        };
        for (name, server) in &mcp.servers {
            let path = format!("mcp.servers.{name}");
            if server.exposure == McpExposure::FabricManaged {
                self.incompatible(
                    path,
                    "MCP server explicitly requests NeMo Fabric-managed exposure but NeMo Fabric-managed MCP is not implemented",
                );
                continue;
            }
            if !self.accepts(Field::Mcp) {
                self.incompatible(
                    path,
                    "selected adapter does not declare native MCP support and NeMo Fabric-managed MCP is not implemented",
                );
                continue;
            }
            if !self.accepts(Field::McpToolFilters) {
                if server.allowed_tools.is_some() {
                    self.incompatible(
                        format!("{path}.allowed_tools"),
                        "the adapter does not declare per-server MCP tool-filter support",
                    );
                }
                if !server.blocked_tools.is_empty() {
                    self.incompatible(
                        format!("{path}.blocked_tools"),
                        "the adapter does not declare per-server MCP tool-filter support",
                    );
                }
            }
            match &server.authentication {
                Some(McpAuthentication::Oauth2(_)) if !self.accepts(Field::McpAuthOauth2) => {
                    self.incompatible(
                        format!("{path}.authentication"),
                        "the adapter does not declare OAuth 2.0 MCP authentication support (mcp.auth.oauth2)",
                    );
                }
                Some(McpAuthentication::ServiceAccount(_))
                    if !self.accepts(Field::McpAuthServiceAccount) =>
                {
                    self.incompatible(
                        format!("{path}.authentication"),
                        "the adapter does not declare service-account MCP authentication support (mcp.auth.service_account)",
                    );
                }
                _ => {}
            }
            self.extensions(ExtensionPoint::McpServer, &path, &server.extensions);
        }
        self.extensions(ExtensionPoint::Mcp, "mcp", &mcp.extensions);
    }

    fn telemetry(&mut self) {
        let Some(telemetry) = &self.config.telemetry else {
            return;
        };
        for name in telemetry.providers.keys() {
            if !self.adapter.descriptor.telemetry.declares(name) {
                self.incompatible(
                    format!("telemetry.providers.{name}"),
                    format!("the adapter does not declare telemetry provider `{name}`"),
                );
            }
        }
    }

    fn workflow(&mut self) {
        let Some(workflow) = &self.config.workflow else {
            return;
        };
        let Some(target) = self.target else {
            self.incompatible(
                "workflow.target_id",
                "workflow target was configured but no adapter target descriptor was resolved",
            );
            return;
        };
        match target.settings.clone() {
            None if !workflow.settings.is_empty() => {
                let key = workflow.settings.keys().next().cloned().unwrap_or_default();
                self.findings.push(self.violation("adapter target settings schema", format!("workflow.settings.{key}"), "the resolved target descriptor does not declare a settings_schema, so only an empty settings map is accepted".to_owned()));
            }
            None => {}
            Some(compiled) => {
                let instance = Value::Object(workflow.settings.clone().into_iter().collect());
                self.schema_violations(
                    &compiled,
                    "adapter target settings schema",
                    "workflow.settings",
                    &instance,
                );
            }
        }
        let extensions = workflow.extensions.clone();
        self.extensions(ExtensionPoint::Workflow, "workflow", &extensions);
    }

    fn config_schema(&mut self) {
        if let Some(compiled) = self.adapter.schemas.config.clone() {
            let instance = serde_json::to_value(self.config).unwrap_or(Value::Null);
            self.schema_violations(&compiled, "adapter config schema", "", &instance);
        }
    }
}

/// The model as the descriptor's `model_schema` sees it: the normalized fields, without
/// extensions (and without legacy fields that travel as extensions).
pub(crate) fn model_schema_instance(
    model: &ModelConfig,
    legacy_top_p: bool,
    legacy_max_tokens: bool,
) -> Value {
    let mut object = Map::new();
    object.insert("provider".to_owned(), Value::from(model.provider.clone()));
    object.insert("model".to_owned(), Value::from(model.model.clone()));
    if let Some(value) = &model.api_key_env {
        object.insert("api_key_env".to_owned(), Value::from(value.clone()));
    }
    if let Some(value) = &model.base_url {
        object.insert("base_url".to_owned(), Value::from(value.clone()));
    }
    if let Some(value) = model.temperature {
        object.insert("temperature".to_owned(), Value::from(value));
    }
    if let Some(value) = model.top_p.filter(|_| !legacy_top_p) {
        object.insert("top_p".to_owned(), Value::from(value));
    }
    if let Some(value) = model.max_tokens.filter(|_| !legacy_max_tokens) {
        object.insert("max_tokens".to_owned(), Value::from(value));
    }
    if !model.settings.is_empty() {
        let settings: Map<String, Value> = model.settings.clone().into_iter().collect();
        object.insert("settings".to_owned(), Value::Object(settings));
    }
    Value::Object(object)
}
