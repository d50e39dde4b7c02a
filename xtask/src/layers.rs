//! `cargo xtask check-layers`: the crate graph of `ARCHITECTURE.md` against the workspace's
//! manifests. The table between `<!-- layers` and `<!-- /layers -->` says what each crate
//! may import; a crate that gains another workspace dependency (or a crate missing from the
//! table) is a finding.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// What one crate may import: `(normal dependencies, extra dev-dependencies)`.
pub type Rules = BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)>;

/// Reads the layers table of `ARCHITECTURE.md`.
pub fn rules(architecture: &str) -> Result<Rules, String> {
    let start = architecture
        .find("<!-- layers")
        .ok_or("ARCHITECTURE.md has no `<!-- layers` table")?;
    let end = architecture[start..]
        .find("<!-- /layers -->")
        .map(|end| start + end)
        .ok_or("ARCHITECTURE.md's layers table has no `<!-- /layers -->` end")?;
    let names = |cell: &str| -> BTreeSet<String> {
        cell.split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let mut rules = Rules::new();
    for line in architecture[start..end].lines() {
        let cells: Vec<&str> = line.trim().trim_matches('|').split('|').collect();
        if cells.len() != 3 || cells[0].trim() == "crate" || cells[0].trim().starts_with("---") {
            continue;
        }
        rules.insert(
            cells[0].trim().to_owned(),
            (names(cells[1]), names(cells[2])),
        );
    }
    if rules.is_empty() {
        return Err("ARCHITECTURE.md's layers table is empty".into());
    }
    Ok(rules)
}

/// The workspace's crates and their workspace dependencies, from `cargo metadata`:
/// `name → (normal, dev)`.
pub fn workspace(root: &Path) -> Result<Rules, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(root)
        .output()
        .map_err(|error| format!("cannot run cargo metadata: {error}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|error| format!("cargo metadata is not JSON: {error}"))?;
    let packages = metadata["packages"].as_array().cloned().unwrap_or_default();
    let members: BTreeSet<String> = packages
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_owned))
        .collect();
    let mut graph = Rules::new();
    for package in &packages {
        let name = package["name"].as_str().unwrap_or_default().to_owned();
        let (mut normal, mut dev) = (BTreeSet::new(), BTreeSet::new());
        for dependency in package["dependencies"].as_array().into_iter().flatten() {
            let dependency_name = dependency["name"].as_str().unwrap_or_default();
            if !members.contains(dependency_name) {
                continue;
            }
            match dependency["kind"].as_str() {
                Some("dev") => dev.insert(dependency_name.to_owned()),
                Some("build") | None => normal.insert(dependency_name.to_owned()),
                Some(_) => false,
            };
        }
        graph.insert(name, (normal, dev));
    }
    Ok(graph)
}

/// Every way the workspace breaks the table.
pub fn findings(rules: &Rules, graph: &Rules) -> Vec<String> {
    let mut findings = Vec::new();
    for (name, (normal, dev)) in graph {
        let Some((allowed, tests)) = rules.get(name) else {
            findings.push(format!("`{name}` is not in ARCHITECTURE.md's layers table"));
            continue;
        };
        for dependency in normal.difference(allowed) {
            findings.push(format!(
                "`{name}` depends on `{dependency}`, which ARCHITECTURE.md does not allow"
            ));
        }
        for dependency in dev {
            if !allowed.contains(dependency) && !tests.contains(dependency) {
                findings.push(format!(
                    "`{name}`'s tests depend on `{dependency}`, which ARCHITECTURE.md does not allow"
                ));
            }
        }
    }
    for name in rules.keys() {
        if !graph.contains_key(name) {
            findings.push(format!(
                "ARCHITECTURE.md names `{name}`, which is not a workspace crate"
            ));
        }
    }
    findings
}

/// The findings for the repository at `root`.
pub fn check(root: &Path) -> Result<Vec<String>, String> {
    let architecture = std::fs::read_to_string(root.join("ARCHITECTURE.md"))
        .map_err(|error| format!("cannot read ARCHITECTURE.md: {error}"))?;
    Ok(findings(&rules(&architecture)?, &workspace(root)?))
}
