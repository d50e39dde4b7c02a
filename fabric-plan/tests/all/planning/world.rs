//! The shared test world: every catalog descriptor and the repository fixtures in one
//! base directory, and the planning helpers over it.

use std::path::{Path, PathBuf};

use fabric_config::FabricConfig;
use fabric_config::descriptor::AdapterConfigField;
use fabric_config::plan::DoctorStatus;
use fabric_plan::{DiscoveryOptions, PlanError, PlanOptions, doctor_with, plan};
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::support::upstream::{self, Upstream};

pub(crate) fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A base directory holding every catalog descriptor under `catalog/` and the repository
/// fixtures under `fixtures/`.
pub(crate) struct World {
    pub(crate) dir: TempDir,
    pub(crate) catalog: Value,
    pub(crate) upstream: &'static Upstream,
}

impl World {
    /// `None` when the upstream venv is missing (the test was reported skipped; it returns).
    pub(crate) fn new() -> Option<World> {
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

    pub(crate) fn base(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn adapter_ids(&self) -> Vec<String> {
        self.catalog["adapters"]
            .as_object()
            .expect("adapters")
            .keys()
            .cloned()
            .collect()
    }

    pub(crate) fn accepts(&self, adapter_id: &str, field: AdapterConfigField) -> bool {
        self.catalog["adapters"][adapter_id]["descriptor"]["config"]["accepts"]
            .as_array()
            .is_some_and(|items| {
                items
                    .iter()
                    .any(|item| item.as_str() == Some(field.as_str()))
            })
    }

    pub(crate) fn config(&self, partial: Value) -> FabricConfig {
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

    pub(crate) fn plan(&self, partial: Value) -> Result<fabric_config::plan::RunPlan, PlanError> {
        plan(&self.config(partial), self.base(), &options())
    }
}

pub(crate) fn options() -> PlanOptions {
    PlanOptions {
        discovery: Some(DiscoveryOptions::default()),
        ..PlanOptions::default()
    }
}

pub(crate) fn rejected(
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
pub(crate) fn incompatible_paths(world: &World, partial: Value) -> Vec<String> {
    let report = doctor_with(&world.config(partial), world.base(), &options());
    report
        .checks
        .iter()
        .filter(|check| check.name == "compatibility" && check.status == DoctorStatus::Fail)
        .filter_map(|check| check.path.clone())
        .collect()
}
