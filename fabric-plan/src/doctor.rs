//! `doctor`: every preflight finding as a check, without starting anything.

use fabric_config::codes;
use std::path::{Component, Path, PathBuf};

use fabric_config::FabricConfig;
use fabric_config::config::McpAuthentication;
use fabric_config::path::resolve_path;
use fabric_config::plan::{DoctorCheck, DoctorReport, DoctorStatus};
use serde_json::{Map, Value};

use crate::compat::Checker;
use crate::discovery::find_on;
use crate::error::PlanError;
use crate::planner::{self, PlanOptions};

pub(crate) fn check(name: &str, status: DoctorStatus, code: &str, message: String) -> DoctorCheck {
    DoctorCheck {
        name: name.to_owned(),
        status,
        code: code.to_owned(),
        message,
        path: None,
        metadata: Map::new(),
    }
}

fn from_error(name: &str, error: &PlanError) -> DoctorCheck {
    let info = fabric_config::ErrorInfo::from(error);
    let mut metadata = info.metadata.clone();
    metadata.remove("path");
    DoctorCheck {
        name: name.to_owned(),
        status: DoctorStatus::Fail,
        code: info.code,
        message: info.message,
        path: error.path().map(str::to_owned),
        metadata,
    }
}

/// Runs every preflight check for `config` with sources from the environment.
pub fn doctor(config: &FabricConfig, base_dir: &Path) -> DoctorReport {
    doctor_with(config, base_dir, &PlanOptions::default())
}

/// [`doctor`] with explicit options (discovery sources, expected fingerprint).
pub fn doctor_with(config: &FabricConfig, base_dir: &Path, options: &PlanOptions) -> DoctorReport {
    let base_dir = planner::absolute_base(base_dir);
    let mut checks = Vec::new();
    let config_findings = planner::config_findings(config);
    if config_findings.is_empty() {
        checks.push(check(
            "config",
            DoctorStatus::Pass,
            "ok",
            "config is valid".to_owned(),
        ));
    }
    for finding in &config_findings {
        checks.push(from_error("config", finding));
    }
    if let Err(error) = planner::resolve_base_dir(&base_dir) {
        // Every later check would look at a lossily converted path.
        checks.push(from_error("base_dir", &error));
        return DoctorReport::new(config.metadata.name.clone(), checks);
    }

    let discovery = planner::discovery_options(config, &base_dir, options);
    let resolution = planner::resolve(config, &discovery);
    match &resolution {
        Ok(resolution) => {
            let first = &resolution.adapter.provenance[0];
            let descriptor_root = Some(first.root.clone());
            let mut ok = check(
                "adapter_descriptor",
                DoctorStatus::Pass,
                "ok",
                format!(
                    "resolved {} adapter descriptor `{}`",
                    first.source.as_str(),
                    resolution.adapter.loaded.descriptor.adapter_id
                ),
            );
            ok.metadata
                .insert("source".to_owned(), Value::from(first.source.as_str()));
            ok.metadata
                .insert("file".to_owned(), Value::from(first.path.clone()));
            ok.metadata.insert(
                "descriptor_sha256".to_owned(),
                Value::from(resolution.adapter.loaded.sha256.clone()),
            );
            checks.push(ok);
            if let Some(target) = &resolution.target {
                let first = &target.provenance[0];
                let mut ok = check(
                    "adapter_target_descriptor",
                    DoctorStatus::Pass,
                    "ok",
                    format!(
                        "resolved {} target descriptor `{}`",
                        first.source.as_str(),
                        target.loaded.descriptor.id
                    ),
                );
                ok.metadata
                    .insert("file".to_owned(), Value::from(first.path.clone()));
                checks.push(ok);
            }
            let adapter = &resolution.adapter.loaded;
            let target = resolution.target.as_ref().map(|target| &*target.loaded);
            let (adapter_origin, target_origin) = resolution.origins();
            let findings = Checker::new(config, adapter, target)
                .with_origins(adapter_origin, target_origin)
                .run();
            if findings.is_empty() {
                checks.push(check(
                    "compatibility",
                    DoctorStatus::Pass,
                    "ok",
                    format!(
                        "adapter `{}` can implement every configured field",
                        adapter.descriptor.adapter_id
                    ),
                ));
            }
            for finding in &findings {
                checks.push(from_error("compatibility", finding));
            }
            if let Some(expected) = &options.expected_descriptor_sha256 {
                let actual = planner::fingerprint(adapter, target);
                if *expected != actual {
                    checks.push(from_error(
                        "descriptor_fingerprint",
                        &PlanError::DescriptorMismatch {
                            adapter_id: adapter.descriptor.adapter_id.clone(),
                            expected: expected.clone(),
                            actual,
                        },
                    ));
                } else {
                    checks.push(check(
                        "descriptor_fingerprint",
                        DoctorStatus::Pass,
                        "ok",
                        "descriptor fingerprint matches".to_owned(),
                    ));
                }
            }
            requirements(
                config,
                adapter,
                descriptor_root.as_deref(),
                options,
                &mut checks,
            );
            checks.extend(crate::python_check::module_check(
                config,
                adapter.descriptor.adapter_kind,
                &adapter.descriptor.runner,
                options.python_interpreter.as_deref(),
            ));
        }
        Err(error) => checks.push(from_error("adapter_descriptor", error)),
    }

    match config
        .harness
        .as_ref()
        .and_then(|harness| harness.resolution)
    {
        None => checks.push(check(
            "resolution",
            DoctorStatus::Warn,
            "no_resolution_strategy",
            "no resolution strategy selected".to_owned(),
        )),
        Some(_) => checks.push(check(
            "resolution",
            DoctorStatus::Pass,
            "ok",
            "resolution strategy selected".to_owned(),
        )),
    }
    environment(config, &base_dir, &mut checks);
    paths_outside_base(config, &base_dir, &mut checks);
    for key in config.tolerated_unknown_keys() {
        // A key a failed check already names (with its hint) is not warned about again.
        let failed_at = |check: &DoctorCheck| {
            check.status == DoctorStatus::Fail && check.path.as_deref() == Some(&key.path)
        };
        if checks.iter().any(failed_at) {
            continue;
        }
        let (name, code) = if key.extension {
            ("config.extension_key", "extension_key_near_field")
        } else {
            ("config.unknown_key", "unknown_key_tolerated")
        };
        let mut item = check(name, DoctorStatus::Warn, code, key.message());
        if let Some(suggestion) = &key.suggestion {
            item.metadata
                .insert("suggestion".to_owned(), suggestion.clone().into());
        }
        item.path = Some(key.path);
        checks.push(item);
    }
    DoctorReport::new(config.metadata.name.clone(), checks)
}

fn requirements(
    config: &FabricConfig,
    adapter: &crate::load::LoadedAdapter,
    descriptor_root: Option<&str>,
    options: &PlanOptions,
    checks: &mut Vec<DoctorCheck>,
) {
    let requirements = &adapter.descriptor.requirements;
    let path = match &options.binary_path {
        Some(path) => Some(path.clone()),
        None => std::env::var_os("PATH"),
    };
    for binary in &requirements.binaries {
        checks.push(match find_on(binary, path.as_deref()) {
            Some(_) => check(
                "requirement.binary",
                DoctorStatus::Pass,
                "ok",
                format!("binary `{binary}` is available on PATH"),
            ),
            None => check(
                "requirement.binary",
                DoctorStatus::Fail,
                "missing_binary",
                format!("binary `{binary}` was not found on PATH"),
            ),
        });
    }
    let mut names: Vec<(String, String)> = requirements
        .env
        .iter()
        .map(|name| (name.clone(), "requirements.env".to_owned()))
        .collect();
    for (role, model) in &config.models {
        if let Some(name) = &model.api_key_env {
            names.push((name.clone(), format!("models.{role}.api_key_env")));
        }
    }
    if let Some(environment) = &config.environment {
        for (index, name) in environment.env_names.iter().enumerate() {
            names.push((name.clone(), format!("environment.env_names[{index}]")));
        }
    }
    if let Some(mcp) = &config.mcp {
        for (server, value) in &mcp.servers {
            let secret = match &value.authentication {
                Some(McpAuthentication::Oauth2(oauth)) => oauth.client_secret_env.clone(),
                Some(McpAuthentication::ServiceAccount(account)) => {
                    Some(account.client_secret_env.clone())
                }
                None => None,
            };
            if let Some(name) = secret {
                names.push((
                    name,
                    format!("mcp.servers.{server}.authentication.client_secret_env"),
                ));
            }
        }
    }
    for (name, source) in names {
        let set = std::env::var_os(&name).is_some_and(|value| !value.is_empty());
        let mut item = if set {
            check(
                "requirement.env",
                DoctorStatus::Pass,
                "ok",
                format!("environment variable `{name}` is set"),
            )
        } else {
            check(
                "requirement.env",
                DoctorStatus::Fail,
                "missing_env",
                format!("environment variable `{name}` (named by {source}) is not set"),
            )
        };
        item.path = Some(source);
        checks.push(item);
    }
    for file in &requirements.files {
        let path = match descriptor_root {
            Some(root) => resolve_path(Path::new(root), file),
            None => Path::new(file).to_path_buf(),
        };
        checks.push(if path.exists() {
            check(
                "requirement.file",
                DoctorStatus::Pass,
                "ok",
                format!("required file `{file}` exists"),
            )
        } else {
            check(
                "requirement.file",
                DoctorStatus::Fail,
                "missing_file",
                format!("required file `{file}` does not exist"),
            )
        });
    }
    for service in &requirements.services {
        checks.push(check(
            "requirement.service",
            DoctorStatus::Warn,
            "unverified_requirement",
            format!("required service `{service}` cannot be verified before start"),
        ));
    }
    for hook in &requirements.plugin_hooks {
        checks.push(check(
            "requirement.plugin_hook",
            DoctorStatus::Warn,
            "unverified_requirement",
            format!("required plugin hook `{hook}` cannot be verified before start"),
        ));
    }
}

/// Paths the adapter reads or writes (skills, workspace, artifact roots) stay the author's
/// choice, but one that resolves outside the base directory — `..`, an absolute path, or a
/// symlink leading out — is worth a second look: one `path_outside_base_dir` warning each.
/// Discovery paths (where the core looks for descriptors) are not checked.
fn paths_outside_base(config: &FabricConfig, base_dir: &Path, checks: &mut Vec<DoctorCheck>) {
    let mut paths: Vec<(String, &str)> = Vec::new();
    if let Some(skills) = &config.skills {
        for (index, entry) in skills.paths.iter().enumerate() {
            paths.push((format!("skills.paths[{index}]"), entry));
        }
    }
    if let Some(environment) = config
        .environment
        .as_ref()
        .filter(|e| e.provider == "local")
    {
        if let Some(workspace) = &environment.workspace {
            paths.push(("environment.workspace".to_owned(), workspace));
        }
        if let Some(artifacts) = &environment.artifacts {
            paths.push(("environment.artifacts".to_owned(), artifacts));
        }
    }
    if let Some(artifacts) = &config.runtime.artifacts {
        paths.push(("runtime.artifacts".to_owned(), artifacts));
    }
    let base = real_path(base_dir);
    for (field, entry) in paths {
        if entry.trim().is_empty() || real_path(&resolve_path(base_dir, entry)).starts_with(&base) {
            continue;
        }
        let mut item = check(
            "config.path",
            DoctorStatus::Warn,
            codes::PATH_OUTSIDE_BASE_DIR,
            format!("`{field}` resolves outside the base directory"),
        );
        item.path = Some(field);
        checks.push(item);
    }
}

/// The path with symlinks resolved as far as it exists, and `.`/`..` collapsed lexically
/// for the part that does not exist yet.
fn real_path(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    let resolved = loop {
        if let Ok(real) = std::fs::canonicalize(&existing) {
            break real;
        }
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_owned());
                existing = parent.to_path_buf();
            }
            _ => break existing,
        }
    };
    let mut out = resolved;
    for component in rest.iter().rev() {
        out.push(component);
    }
    let mut normal = PathBuf::new();
    for component in out.components() {
        match component {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other.as_os_str()),
        }
    }
    normal
}

fn environment(config: &FabricConfig, base_dir: &Path, checks: &mut Vec<DoctorCheck>) {
    if let Some(skills) = &config.skills {
        for (index, entry) in skills.paths.iter().enumerate() {
            let path = resolve_path(base_dir, entry);
            let mut item = if path.exists() {
                check(
                    "skills.path",
                    DoctorStatus::Pass,
                    "ok",
                    format!("skill path `{}` exists", path.display()),
                )
            } else {
                check(
                    "skills.path",
                    DoctorStatus::Fail,
                    "missing_path",
                    format!("skill path `{}` does not exist", path.display()),
                )
            };
            item.path = Some(format!("skills.paths[{index}]"));
            checks.push(item);
        }
    }
    let Some(environment) = &config.environment else {
        checks.push(check(
            "environment",
            DoctorStatus::Warn,
            "no_environment",
            "no environment configured; using caller-owned local context".to_owned(),
        ));
        return;
    };
    if environment.provider != "local" {
        checks.push(check(
            "environment",
            DoctorStatus::Warn,
            "remote_environment",
            format!(
                "environment provider `{}` paths are not checked locally",
                environment.provider
            ),
        ));
        return;
    }
    checks.push(check(
        "environment",
        DoctorStatus::Pass,
        "ok",
        "local environment configured".to_owned(),
    ));
    if let Some(workspace) = &environment.workspace {
        let path = resolve_path(base_dir, workspace);
        let mut item = if path.is_dir() {
            check(
                "environment.workspace",
                DoctorStatus::Pass,
                "ok",
                format!("workspace `{}` exists", path.display()),
            )
        } else {
            check(
                "environment.workspace",
                DoctorStatus::Fail,
                "missing_path",
                format!(
                    "workspace `{}` is not an existing directory",
                    path.display()
                ),
            )
        };
        item.path = Some("environment.workspace".to_owned());
        checks.push(item);
    }
}
