//! Reading Relay ATOF records into scopes: a scope is a start record and its end record
//! (same `uuid`, `kind: "scope"`, `scope_category` `start`/`end`); marks are point records.
//! Records are joined to a RunResult as a collector routes them: the scope start whose
//! `metadata.nemo_fabric_request_id` is the result's request id is the invocation's root
//! scope; every other record belongs to the root reached through `parent_uuid`.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Map, Value};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// One scope (tool, LLM, agent, ...), from its start and end records.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scope {
    pub uuid: String,
    pub parent_uuid: Option<String>,
    pub name: Option<String>,
    pub category: Option<String>,
    pub category_profile: Map<String, Value>,
    /// Start and end metadata merged (end wins).
    pub metadata: Map<String, Value>,
    /// Unix nanoseconds.
    pub started_at: Option<i128>,
    /// Unix nanoseconds.
    pub completed_at: Option<i128>,
    pub ended: bool,
    /// `otel.status_code: "ERROR"` on the end record.
    pub error: bool,
    pub end_data: Option<Value>,
    /// Input position of the start (else end) record: keeps output order stable.
    pub position: usize,
}

/// One mark record.
#[derive(Debug, Clone)]
pub(crate) struct Mark {
    pub parent_uuid: Option<String>,
    pub name: Option<String>,
    pub category: Option<String>,
    pub data: Value,
    /// Unix nanoseconds.
    pub observed_at: Option<i128>,
}

/// Every scope and mark of a record list.
#[derive(Debug, Default)]
pub(crate) struct Records {
    pub scopes: BTreeMap<String, Scope>,
    pub marks: Vec<Mark>,
    /// Records that are neither scopes nor marks with a `uuid` (skipped).
    pub skipped: usize,
}

/// Unix nanoseconds of an RFC 3339 timestamp (durations are exact differences of these).
pub(crate) fn unix_nanos(text: &str) -> Option<i128> {
    Some(
        OffsetDateTime::parse(text, &Rfc3339)
            .ok()?
            .unix_timestamp_nanos(),
    )
}

/// Unix seconds of an RFC 3339 timestamp.
pub(crate) fn unix_seconds(text: &str) -> Option<f64> {
    unix_nanos(text).map(seconds)
}

/// Nanoseconds as seconds.
pub(crate) fn seconds(nanos: i128) -> f64 {
    nanos as f64 / 1e9
}

fn text(record: &Value, key: &str) -> Option<String> {
    record.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn object(record: &Value, key: &str) -> Map<String, Value> {
    record
        .get(key)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

impl Records {
    /// Reads `records` (anything that is not an ATOF scope or mark is counted and skipped).
    pub fn read(records: &[Value]) -> Records {
        let mut out = Records::default();
        for (position, record) in records.iter().enumerate() {
            let uuid = text(record, "uuid");
            let timestamp = record
                .get("timestamp")
                .and_then(Value::as_str)
                .and_then(unix_nanos);
            match (record.get("kind").and_then(Value::as_str), uuid) {
                (Some("scope"), Some(uuid)) => {
                    let scope = out.scopes.entry(uuid.clone()).or_insert_with(|| Scope {
                        uuid,
                        position,
                        ..Scope::default()
                    });
                    scope.parent_uuid = scope.parent_uuid.take().or(text(record, "parent_uuid"));
                    scope.name = scope.name.take().or(text(record, "name"));
                    scope.category = scope.category.take().or(text(record, "category"));
                    scope
                        .category_profile
                        .extend(object(record, "category_profile"));
                    scope.metadata.extend(object(record, "metadata"));
                    match record.get("scope_category").and_then(Value::as_str) {
                        Some("start") => scope.started_at = timestamp,
                        Some("end") => {
                            scope.ended = true;
                            scope.completed_at = timestamp;
                            scope.end_data = record.get("data").filter(|d| !d.is_null()).cloned();
                            scope.error = record
                                .get("metadata")
                                .and_then(|m| m.get("otel.status_code"))
                                .and_then(Value::as_str)
                                == Some("ERROR");
                        }
                        _ => out.skipped += 1,
                    }
                }
                (Some("mark"), Some(_)) => out.marks.push(Mark {
                    parent_uuid: text(record, "parent_uuid"),
                    name: text(record, "name"),
                    category: text(record, "category"),
                    data: record.get("data").cloned().unwrap_or(Value::Null),
                    observed_at: timestamp,
                }),
                _ => out.skipped += 1,
            }
        }
        out
    }

    /// The root scope of the invocation with `request_id`.
    pub fn root_of_request(&self, request_id: &str) -> Option<&Scope> {
        self.scopes.values().find(|scope| {
            scope
                .metadata
                .get("nemo_fabric_request_id")
                .and_then(Value::as_str)
                == Some(request_id)
        })
    }

    /// The chain of scope uuids above `parent` (nearest first), stopping at a cycle or an
    /// unknown uuid.
    pub fn ancestors(&self, parent: Option<&str>) -> Vec<&Scope> {
        let mut chain = Vec::new();
        let mut seen = HashSet::new();
        let mut current = parent;
        while let Some(uuid) = current {
            if !seen.insert(uuid) {
                break;
            }
            let Some(scope) = self.scopes.get(uuid) else {
                break;
            };
            chain.push(scope);
            current = scope.parent_uuid.as_deref();
        }
        chain
    }
}

impl Scope {
    /// Start, Unix seconds.
    pub fn started(&self) -> Option<f64> {
        self.started_at.map(seconds)
    }

    /// End, Unix seconds, when it is not before the start.
    pub fn completed(&self) -> Option<f64> {
        match (self.started_at, self.completed_at) {
            (Some(start), Some(end)) if end < start => None,
            (_, end) => end.map(seconds),
        }
    }

    /// Milliseconds from start to end, when both are known and in order.
    pub fn duration_ms(&self) -> Option<f64> {
        match (self.started_at, self.completed_at) {
            (Some(start), Some(end)) if end >= start => Some((end - start) as f64 / 1e6),
            _ => None,
        }
    }

    /// Whether the scope's category is `category`.
    pub fn is(&self, category: &str) -> bool {
        self.category.as_deref() == Some(category)
    }

    /// A string member of the category profile or the metadata.
    pub fn reported(&self, key: &str) -> Option<&Value> {
        self.category_profile
            .get(key)
            .or_else(|| self.metadata.get(key))
            .filter(|value| !value.is_null())
    }
}
