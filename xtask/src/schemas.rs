//! `schemas/<name>.schema.json`: the JSON Schemas of `fabric_config::schema::all`.
//!
//! The directory is wholly generated: a committed schema nothing generates any more (a
//! renamed or removed type) is stale too, and `cargo xtask codegen` removes it.

use std::path::Path;

use serde_json::Value;

pub const DIR: &str = "schemas";

/// The path of the schema called `name` (`sdk/agent` → `schemas/sdk/agent.schema.json`).
pub fn path(name: &str) -> String {
    format!("{DIR}/{name}.schema.json")
}

/// The file of each schema of `fabric_config::schema::all()`.
pub fn render(schemas: &[(&'static str, Value)]) -> Vec<(String, String)> {
    schemas
        .iter()
        .map(|(name, schema)| (path(name), fabric_config::schema::to_file_text(schema)))
        .collect()
}

/// The committed `*.schema.json` files, one directory deep, as paths from the root.
pub fn committed(root: &Path) -> Vec<String> {
    let mut paths = Vec::new();
    let Ok(groups) = std::fs::read_dir(root.join(DIR)) else {
        return paths;
    };
    for group in groups.flatten().filter(|entry| entry.path().is_dir()) {
        let Ok(files) = std::fs::read_dir(group.path()) else {
            continue;
        };
        for file in files.flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            if name.ends_with(".schema.json") {
                let group = group.file_name().to_string_lossy().into_owned();
                paths.push(format!("{DIR}/{group}/{name}"));
            }
        }
    }
    paths.sort();
    paths
}
