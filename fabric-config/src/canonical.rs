//! Canonical JSON of a `FabricConfig`.
//!
//! The serde representation already omits `None` and empty maps/lists at every level
//! (except the meaningful empty allowlists `tools.enabled: []` and
//! `mcp.servers.<name>.allowed_tools: []`), writes Fabric-owned defaults, always writes
//! `schema_version` and `runtime`, and keeps an explicit `system_stats: null`. On top of that,
//! like upstream `to_mapping()`, top-level sections that serialize to `{}` or `[]` are
//! dropped (except `runtime`). Object keys are sorted.

use serde_json::{Map, Value};

use crate::config::FabricConfig;

/// Rebuilds every object with its keys in sorted order.
pub fn sort_keys(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let mut sorted = Map::new();
            for (key, item) in entries {
                sorted.insert(key, sort_keys(item));
            }
            Value::Object(sorted)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sort_keys).collect()),
        other => other,
    }
}

impl FabricConfig {
    /// The canonical JSON value (see the module docs).
    pub fn to_canonical_value(&self) -> Value {
        // Serializing these types cannot fail: every map has string keys.
        let value = serde_json::to_value(self).unwrap_or(Value::Null);
        let value = match value {
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .filter(|(key, item)| {
                        key == "runtime"
                            || !matches!(item, Value::Object(m) if m.is_empty())
                                && !matches!(item, Value::Array(a) if a.is_empty())
                    })
                    .collect(),
            ),
            other => other,
        };
        sort_keys(value)
    }

    /// Compact canonical JSON (sorted keys, `,`/`:` separators).
    pub fn to_canonical_json(&self) -> String {
        self.to_canonical_value().to_string()
    }

    /// Pretty-printed canonical JSON (sorted keys), as `fabric validate` prints it.
    pub fn to_canonical_json_pretty(&self) -> String {
        serde_json::to_string_pretty(&self.to_canonical_value()).unwrap_or_default()
    }
}
