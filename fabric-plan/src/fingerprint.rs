//! Descriptor fingerprints: sha256 of the canonical JSON
//! ([`fabric_config::canonical::canonical_json`], byte-identical to Python's
//! `json.dumps(value, sort_keys=True, separators=(",", ":"))`) of the normalized descriptor.
//! This is what upstream NeMo Fabric 0.5.0 hashes, so fingerprints agree across
//! implementations.

use fabric_config::canonical::canonical_json;
use fabric_config::descriptor::{AdapterDescriptor, TargetDescriptor};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Hex sha256 of the canonical form of `value`.
pub fn sha256_canonical(value: &Value) -> String {
    hex::encode(Sha256::digest(canonical_json(value).as_bytes()))
}

/// The fingerprint of a normalized adapter descriptor (equal to upstream
/// `inspect_adapter(...).descriptor_sha256`).
pub fn descriptor_sha256(descriptor: &AdapterDescriptor) -> String {
    sha256_canonical(&normalized_value(descriptor))
}

/// The fingerprint of a normalized target descriptor on its own.
pub fn target_sha256(target: &TargetDescriptor) -> String {
    sha256_canonical(&serde_json::to_value(target).unwrap_or(Value::Null))
}

/// The fingerprint of an adapter descriptor together with a registered target: sha256 of the
/// canonical `{"adapter": <normalized adapter>, "target": <normalized target>}`. Without a
/// target this is [`descriptor_sha256`] (standalone fingerprints are unchanged).
pub fn combined_sha256(
    descriptor: &AdapterDescriptor,
    target: Option<&TargetDescriptor>,
) -> String {
    match target {
        None => descriptor_sha256(descriptor),
        Some(target) => pair_sha256(
            normalized_value(descriptor),
            serde_json::to_value(target).unwrap_or(Value::Null),
        ),
    }
}

/// sha256 of the canonical `{"adapter": adapter, "target": target}` (normalized values).
pub(crate) fn pair_sha256(adapter: Value, target: Value) -> String {
    let mut pair = serde_json::Map::new();
    pair.insert("adapter".to_owned(), adapter);
    pair.insert("target".to_owned(), target);
    sha256_canonical(&Value::Object(pair))
}

/// The normalized descriptor as a JSON value (what the fingerprint covers).
pub fn normalized_value(descriptor: &AdapterDescriptor) -> Value {
    // Serializing plain data (maps with string keys, finite numbers) cannot fail.
    serde_json::to_value(descriptor).unwrap_or(Value::Null)
}
