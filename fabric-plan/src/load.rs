//! Loading and structurally validating adapter and target descriptor files.
//!
//! Validation runs over the raw JSON value first so every error names the file and the JSON
//! path (`config.accepts[3]`); only then is the value decoded into the normalized types of
//! [`fabric_config::descriptor`]. Embedded schemas are meta-validated against JSON Schema
//! 2020-12, checked for local-only references and compiled once.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use fabric_config::descriptor::{
    ADAPTER_CONTRACT_VERSION, AdapterConfigField, AdapterDescriptor, AdapterKind, ExtensionPoint,
    SystemInstructionMode, TargetDescriptor,
};
use serde_json::{Map, Value};

use crate::error::PlanError;
use crate::fingerprint;
use crate::schema::{self, CompiledSchema};

/// The compiled schemas of one adapter descriptor.
#[derive(Debug, Clone, Default)]
pub(crate) struct AdapterSchemas {
    pub settings: Option<CompiledSchema>,
    pub model: Option<CompiledSchema>,
    pub tool_definition: Option<CompiledSchema>,
    pub config: Option<CompiledSchema>,
    pub extensions: BTreeMap<ExtensionPoint, CompiledSchema>,
}

/// A validated adapter descriptor with its fingerprint and compiled schemas.
#[derive(Debug, Clone)]
pub struct LoadedAdapter {
    /// The normalized descriptor.
    pub descriptor: AdapterDescriptor,
    /// The normalized descriptor as JSON (what is fingerprinted and put in the plan).
    pub normalized: Value,
    /// sha256 of the canonical normalized descriptor.
    pub sha256: String,
    pub(crate) schemas: AdapterSchemas,
}

/// A validated target descriptor with its compiled settings schema.
#[derive(Debug, Clone)]
pub struct LoadedTarget {
    /// The normalized target descriptor.
    pub descriptor: TargetDescriptor,
    /// The normalized target as JSON.
    pub normalized: Value,
    /// sha256 of the canonical normalized target.
    pub sha256: String,
    pub(crate) settings: Option<CompiledSchema>,
}

/// Reads and validates an adapter descriptor file.
pub fn load_adapter_descriptor(file: &Path) -> Result<AdapterDescriptor, PlanError> {
    load_adapter(file).map(|loaded| loaded.descriptor)
}

/// Reads and validates a target descriptor file.
pub fn load_target_descriptor(file: &Path) -> Result<TargetDescriptor, PlanError> {
    load_target(file).map(|loaded| loaded.descriptor)
}

/// Validates an adapter descriptor given as JSON; `file` names it in errors.
pub fn parse_adapter_descriptor(value: Value, file: &Path) -> Result<AdapterDescriptor, PlanError> {
    parse_adapter_value(value, file).map(|loaded| loaded.descriptor)
}

/// Validates a target descriptor given as JSON; `file` names it in errors.
pub fn parse_target_descriptor(value: Value, file: &Path) -> Result<TargetDescriptor, PlanError> {
    parse_target_value(value, file).map(|loaded| loaded.descriptor)
}

/// Checks that `target` may be executed by `adapter`: same `adapter_id`, and the adapter lists
/// the target's type in `target_types`.
pub fn check_target_for_adapter(
    target: &TargetDescriptor,
    adapter: &AdapterDescriptor,
) -> Result<(), PlanError> {
    if target.adapter_id != adapter.adapter_id {
        return Err(PlanError::TargetMismatch {
            target_id: target.id.clone(),
            path: "adapter_id".to_owned(),
            reason: format!(
                "the target belongs to adapter `{}`, not `{}`",
                target.adapter_id, adapter.adapter_id
            ),
        });
    }
    if !adapter.target_types.contains(&target.target_type) {
        return Err(PlanError::TargetMismatch {
            target_id: target.id.clone(),
            path: "type".to_owned(),
            reason: format!(
                "adapter `{}` does not declare target type `{}` in target_types",
                adapter.adapter_id,
                target.target_type.as_str()
            ),
        });
    }
    Ok(())
}

pub(crate) fn read_json(file: &Path) -> Result<Value, PlanError> {
    let text = std::fs::read(file).map_err(|source| PlanError::DescriptorRead {
        file: file.to_path_buf(),
        source,
    })?;
    json_of(&text, file)
}

fn json_of(bytes: &[u8], file: &Path) -> Result<Value, PlanError> {
    serde_json::from_slice(bytes).map_err(|error| PlanError::DescriptorJson {
        file: file.to_path_buf(),
        line: error.line(),
        column: error.column(),
    })
}

pub(crate) fn load_adapter(file: &Path) -> Result<LoadedAdapter, PlanError> {
    parse_adapter_value(read_json(file)?, file)
}

pub(crate) fn load_target(file: &Path) -> Result<LoadedTarget, PlanError> {
    parse_target_value(read_json(file)?, file)
}

/// An adapter descriptor file's bytes, validated (`file` names it in errors).
pub(crate) fn adapter_from_bytes(bytes: &[u8], file: &Path) -> Result<LoadedAdapter, PlanError> {
    parse_adapter_value(json_of(bytes, file)?, file)
}

/// A target descriptor file's bytes, validated (`file` names it in errors).
pub(crate) fn target_from_bytes(bytes: &[u8], file: &Path) -> Result<LoadedTarget, PlanError> {
    parse_target_value(json_of(bytes, file)?, file)
}

struct Checker<'a> {
    file: &'a Path,
}

impl Checker<'_> {
    fn invalid(&self, path: &str, reason: impl Into<String>) -> PlanError {
        PlanError::invalid(self.file, path, reason)
    }

    fn object<'v>(
        &self,
        value: &'v Value,
        path: &str,
    ) -> Result<&'v Map<String, Value>, PlanError> {
        value
            .as_object()
            .ok_or_else(|| self.invalid(path, "must be an object"))
    }

    fn optional_object<'v>(
        &self,
        parent: &'v Map<String, Value>,
        key: &str,
        path: &str,
    ) -> Result<Option<&'v Map<String, Value>>, PlanError> {
        match parent.get(key) {
            None => Ok(None),
            Some(value) => self.object(value, path).map(Some),
        }
    }

    fn non_blank(
        &self,
        parent: &Map<String, Value>,
        key: &str,
        path: &str,
    ) -> Result<(), PlanError> {
        match parent.get(key) {
            None => Err(self.invalid(path, "is required")),
            Some(Value::String(text)) if !text.trim().is_empty() => Ok(()),
            Some(Value::String(_)) => Err(self.invalid(path, "must not be empty")),
            Some(_) => Err(self.invalid(path, "must be a string")),
        }
    }

    fn string_list(
        &self,
        parent: &Map<String, Value>,
        key: &str,
        path: &str,
    ) -> Result<(), PlanError> {
        let Some(value) = parent.get(key) else {
            return Ok(());
        };
        let items = value
            .as_array()
            .ok_or_else(|| self.invalid(path, "must be an array of strings"))?;
        for (index, item) in items.iter().enumerate() {
            if !item.is_string() {
                return Err(self.invalid(&format!("{path}[{index}]"), "must be a string"));
            }
        }
        Ok(())
    }

    fn contract_version(&self, root: &Map<String, Value>) -> Result<(), PlanError> {
        let contract = |reason: String| PlanError::DescriptorContract {
            file: self.file.to_path_buf(),
            path: "contract_version".to_owned(),
            reason,
        };
        match root.get("contract_version") {
            None => Err(contract("is required".to_owned())),
            Some(Value::String(version)) if version == ADAPTER_CONTRACT_VERSION => Ok(()),
            Some(Value::String(version)) if version == "fabric.adapter/v1alpha1" => {
                Err(contract(format!(
                    "contract version `fabric.adapter/v1alpha1` is no longer supported; \
                     expected `{ADAPTER_CONTRACT_VERSION}`"
                )))
            }
            Some(Value::String(version)) => Err(contract(format!(
                "unsupported contract version `{version}`; expected `{ADAPTER_CONTRACT_VERSION}`"
            ))),
            Some(_) => Err(contract("must be a string".to_owned())),
        }
    }

    /// Validates and compiles an optional embedded schema (`null` counts as absent).
    fn schema(
        &self,
        parent: &Map<String, Value>,
        key: &str,
        path: &str,
    ) -> Result<Option<CompiledSchema>, PlanError> {
        match parent.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(schema)) => self.compile(schema, path).map(Some),
            Some(_) => Err(self.invalid(path, "must be a JSON Schema object or null")),
        }
    }

    fn compile(
        &self,
        schema: &Map<String, Value>,
        path: &str,
    ) -> Result<CompiledSchema, PlanError> {
        schema::compile(schema).map_err(|(relative, reason)| PlanError::DescriptorSchema {
            file: self.file.to_path_buf(),
            path: schema::join(path, &relative),
            reason,
        })
    }
}

pub(crate) fn parse_adapter_value(value: Value, file: &Path) -> Result<LoadedAdapter, PlanError> {
    let check = Checker { file };
    let root = check.object(&value, "$")?;
    check.contract_version(root)?;
    if root.contains_key("harness") {
        return Err(check.invalid(
            "harness",
            "the legacy `harness` key is not part of fabric.adapter/v1alpha2; use `adapter_id`",
        ));
    }
    if root.contains_key("workflow_schema") {
        return Err(check.invalid(
            "workflow_schema",
            "the legacy `workflow_schema` key is not part of fabric.adapter/v1alpha2; \
             register a target descriptor with `spec.settings_schema`",
        ));
    }
    check.non_blank(root, "adapter_id", "adapter_id")?;
    match root.get("adapter_kind") {
        None => return Err(check.invalid("adapter_kind", "is required")),
        Some(Value::String(kind)) if AdapterKind::parse(kind).is_some() => {}
        Some(_) => {
            return Err(check.invalid(
                "adapter_kind",
                "must be one of `process`, `http`, `python`, `native_plugin`",
            ));
        }
    }
    if let Some(runner) = check.optional_object(root, "runner", "runner")? {
        for key in ["module", "command", "script"] {
            if let Some(value) = runner.get(key)
                && !value.is_string()
            {
                return Err(check.invalid(&format!("runner.{key}"), "must be a string"));
            }
        }
        check.string_list(runner, "args", "runner.args")?;
    }
    if let Some(capabilities) = check.optional_object(root, "capabilities", "capabilities")? {
        for key in ["cancellation", "service", "streaming", "updates"] {
            if let Some(value) = capabilities.get(key)
                && !value.is_boolean()
            {
                return Err(check.invalid(&format!("capabilities.{key}"), "must be a boolean"));
            }
        }
        check.optional_object(capabilities, "metadata", "capabilities.metadata")?;
    }
    let mut schemas = AdapterSchemas::default();
    if let Some(config) = check.optional_object(root, "config", "config")? {
        check_config_support(&check, config)?;
        schemas.config = check.schema(config, "schema", "config.schema")?;
    }
    if let Some(requirements) = check.optional_object(root, "requirements", "requirements")? {
        for key in ["binaries", "env", "files", "plugin_hooks", "services"] {
            check.string_list(requirements, key, &format!("requirements.{key}"))?;
        }
    }
    if let Some(telemetry) = check.optional_object(root, "telemetry", "telemetry")?
        && let Some(providers) =
            check.optional_object(telemetry, "providers", "telemetry.providers")?
    {
        for (name, support) in providers {
            let path = format!("telemetry.providers.{name}");
            if name != "relay" && name != "native" {
                return Err(check.invalid(
                    &path,
                    "unknown telemetry provider; expected `relay` or `native`",
                ));
            }
            let support = check.object(support, &path)?;
            check.string_list(support, "outputs", &format!("{path}.outputs"))?;
            check.string_list(
                support,
                "integration_modes",
                &format!("{path}.integration_modes"),
            )?;
        }
    }
    schemas.settings = check.schema(root, "settings_schema", "settings_schema")?;
    schemas.model = check.schema(root, "model_schema", "model_schema")?;
    schemas.tool_definition =
        check.schema(root, "tool_definition_schema", "tool_definition_schema")?;
    if let Some(extensions) =
        check.optional_object(root, "extension_schemas", "extension_schemas")?
    {
        for (name, schema) in extensions {
            let path = format!("extension_schemas.{name}");
            let point = ExtensionPoint::parse(name)
                .ok_or_else(|| check.invalid(&path, "unknown extension point"))?;
            let schema = check.object(schema, &path)?;
            schemas
                .extensions
                .insert(point, check.compile(schema, &path)?);
        }
    }
    if let Some(types) = root.get("target_types") {
        let items = types
            .as_array()
            .ok_or_else(|| check.invalid("target_types", "must be an array"))?;
        for (index, item) in items.iter().enumerate() {
            if item.as_str() != Some("workflow") {
                return Err(check.invalid(
                    &format!("target_types[{index}]"),
                    "unknown target type; expected `workflow`",
                ));
            }
        }
    }
    let descriptor: AdapterDescriptor = serde_json::from_value(value)
        .map_err(|error| check.invalid("$", format!("cannot decode descriptor: {error}")))?;
    let normalized = fingerprint::normalized_value(&descriptor);
    let sha256 = fingerprint::sha256_canonical(&normalized);
    Ok(LoadedAdapter {
        descriptor,
        normalized,
        sha256,
        schemas,
    })
}

fn check_config_support(check: &Checker<'_>, config: &Map<String, Value>) -> Result<(), PlanError> {
    let mut accepts_system = false;
    if let Some(accepts) = config.get("accepts") {
        let items = accepts
            .as_array()
            .ok_or_else(|| check.invalid("config.accepts", "must be an array of field names"))?;
        for (index, item) in items.iter().enumerate() {
            let path = format!("config.accepts[{index}]");
            let name = item
                .as_str()
                .ok_or_else(|| check.invalid(&path, "must be a string"))?;
            match AdapterConfigField::parse(name) {
                Some(AdapterConfigField::InstructionsSystem) => accepts_system = true,
                Some(_) => {}
                None => {
                    return Err(
                        check.invalid(&path, format!("unknown normalized config field `{name}`"))
                    );
                }
            }
        }
    }
    match config.get("system_instruction_modes") {
        None | Some(Value::Null) => {}
        Some(Value::Array(modes)) => {
            if !accepts_system {
                return Err(check.invalid(
                    "config.system_instruction_modes",
                    "config.system_instruction_modes requires config.accepts to include `instructions.system`",
                ));
            }
            if modes.is_empty() {
                return Err(check.invalid(
                    "config.system_instruction_modes",
                    "config.system_instruction_modes must contain at least one mode",
                ));
            }
            let mut seen = HashSet::new();
            for (index, mode) in modes.iter().enumerate() {
                let path = format!("config.system_instruction_modes[{index}]");
                let mode = mode
                    .as_str()
                    .and_then(SystemInstructionMode::parse)
                    .ok_or_else(|| check.invalid(&path, "must be `replace` or `append`"))?;
                if !seen.insert(mode) {
                    return Err(check.invalid(
                        &path,
                        "config.system_instruction_modes must not contain duplicate modes",
                    ));
                }
            }
        }
        Some(_) => {
            return Err(check.invalid(
                "config.system_instruction_modes",
                "must be an array or null",
            ));
        }
    }
    check.string_list(config, "generates", "config.generates")?;
    Ok(())
}

pub(crate) fn parse_target_value(value: Value, file: &Path) -> Result<LoadedTarget, PlanError> {
    let check = Checker { file };
    let root = check.object(&value, "$")?;
    check.contract_version(root)?;
    check.non_blank(root, "id", "id")?;
    check.non_blank(root, "adapter_id", "adapter_id")?;
    match root.get("type") {
        None => return Err(check.invalid("type", "is required")),
        Some(Value::String(kind)) if kind == "workflow" => {}
        Some(_) => return Err(check.invalid("type", "unknown target type; expected `workflow`")),
    }
    let spec = root
        .get("spec")
        .ok_or_else(|| check.invalid("spec", "is required"))?;
    let spec = check.object(spec, "spec")?;
    let entrypoint = spec
        .get("entrypoint")
        .ok_or_else(|| check.invalid("spec.entrypoint", "is required"))?;
    let entrypoint = check.object(entrypoint, "spec.entrypoint")?;
    check.non_blank(entrypoint, "kind", "spec.entrypoint.kind")?;
    check.non_blank(entrypoint, "ref", "spec.entrypoint.ref")?;
    let settings = check.schema(spec, "settings_schema", "spec.settings_schema")?;
    let descriptor: TargetDescriptor = serde_json::from_value(value)
        .map_err(|error| check.invalid("$", format!("cannot decode target descriptor: {error}")))?;
    let normalized = serde_json::to_value(&descriptor).unwrap_or(Value::Null);
    let sha256 = fingerprint::sha256_canonical(&normalized);
    Ok(LoadedTarget {
        descriptor,
        normalized,
        sha256,
        settings,
    })
}

/// Descriptor kind from a file name, by suffix.
pub(crate) fn kind_of(file: &Path) -> Option<DescriptorFileKind> {
    let name = file.file_name()?.to_str()?;
    if name.ends_with(fabric_config::descriptor::ADAPTER_DESCRIPTOR_SUFFIX) {
        Some(DescriptorFileKind::Adapter)
    } else if name.ends_with(fabric_config::descriptor::TARGET_DESCRIPTOR_SUFFIX) {
        Some(DescriptorFileKind::Target)
    } else {
        None
    }
}

/// Which descriptor a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum DescriptorFileKind {
    Adapter,
    Target,
}
