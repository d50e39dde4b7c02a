//! The scripted adapter's software evidence report: the `execution` member of its `start`
//! output, taken once per host at start, only when the start payload says
//! `provenance.enabled: true`. `harness.settings.evidence` shapes it for bound tests.

use serde_json::{Map, Value, json};

use crate::settings::{Result, boolean, closed, object, uint};

/// `harness.settings.evidence`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvidenceSettings {
    /// Send no report (as an upstream-built host does).
    pub omit: bool,
    /// Inventories reported (each its own context).
    pub inventories: u64,
    /// Extra dependency entries per inventory.
    pub entries: u64,
    /// Length of each extra entry's version value.
    pub value_bytes: u64,
}

impl Default for EvidenceSettings {
    fn default() -> Self {
        EvidenceSettings {
            omit: false,
            inventories: 1,
            entries: 0,
            value_bytes: 5,
        }
    }
}

impl EvidenceSettings {
    pub fn parse(v: &Value, path: &str) -> Result<EvidenceSettings> {
        let map = object(v, path)?;
        closed(
            map,
            path,
            &["omit", "inventories", "entries", "value_bytes"],
        )?;
        let mut out = EvidenceSettings::default();
        if let Some(v) = map.get("omit") {
            out.omit = boolean(v, &format!("{path}.omit"))?;
        }
        if let Some(v) = map.get("inventories") {
            out.inventories = uint(v, &format!("{path}.inventories"), 1, 64)?;
        }
        if let Some(v) = map.get("entries") {
            out.entries = uint(v, &format!("{path}.entries"), 0, 1000)?;
        }
        if let Some(v) = map.get("value_bytes") {
            out.value_bytes = uint(v, &format!("{path}.value_bytes"), 1, 100_000)?;
        }
        Ok(out)
    }
}

/// Whether the start payload asks for a report (`provenance.enabled: true`; a core that
/// sends no `provenance` would not read one, so nothing is collected then).
pub fn enabled(payload: &Map<String, Value>) -> bool {
    payload
        .get("provenance")
        .and_then(|p| p.get("enabled"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The report (`None`: omitted).
pub fn report(settings: &EvidenceSettings) -> Option<Value> {
    if settings.omit {
        return None;
    }
    let at = crate::atof::now();
    let observed = |value: String| {
        json!({"value": value, "source": "adapter:compiled_version", "origin": "adapter",
               "observed_at": at})
    };
    let inventories: Vec<Value> = (0..settings.inventories)
        .map(|i| {
            let mut entries = vec![json!({
                "role": "adapter", "kind": "executable", "name": "fabric-adapter-scripted",
                "version": observed(env!("CARGO_PKG_VERSION").to_owned()),
            })];
            entries.extend((0..settings.entries).map(|j| {
                let width = usize::try_from(settings.value_bytes).unwrap_or(5);
                json!({"role": "dependency", "kind": "package",
                       "name": format!("scripted-dep-{i}-{j}"),
                       "version": observed(format!("{:0>width$}", j))})
            }));
            json!({"context_ref": format!("scripted-{i}"),
                   "participants": ["guest_sdk", "adapter"],
                   "availability": "available", "coverage": {"status": "complete"},
                   "entries": entries})
        })
        .collect();
    Some(json!({"inventories": inventories}))
}

/// Adds the report to a `start` output (`null` becomes an object; a non-object output
/// cannot carry it and is returned unchanged).
pub fn attach(output: Value, report: Option<Value>) -> Value {
    match (output, report) {
        (Value::Null, Some(report)) => json!({ "execution": report }),
        (Value::Object(mut map), Some(report)) => {
            map.insert("execution".to_owned(), report);
            Value::Object(map)
        }
        (output, _) => output,
    }
}
