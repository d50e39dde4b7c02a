//! The core's own snapshot: its compiled version and the calling binding, captured once per
//! process and binding identity and reused (same `observed_at`) afterwards.

use fabric_config::codes;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use fabric_config::evidence::{
    Availability, EvidenceCoverage, EvidenceEntry, SoftwareInventory, VersionObservation,
};
use fabric_config::options::BindingIdentity;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The core's component name in evidence.
pub const CORE_NAME: &str = "fabric-core";
/// The core's executing version.
pub const CORE_VERSION: &str = env!("CARGO_PKG_VERSION");

type Cache = Mutex<HashMap<Option<BindingIdentity>, SoftwareInventory>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Cache::default)
}

static TAKEN: AtomicUsize = AtomicUsize::new(0);

/// How many core snapshots this process has taken (each binding identity once).
pub fn snapshots_taken() -> usize {
    TAKEN.load(Ordering::Relaxed)
}

/// Whether this process has taken the core snapshot for `binding`.
pub fn has_snapshot(binding: Option<&BindingIdentity>) -> bool {
    let cache = cache().lock().unwrap_or_else(|e| e.into_inner());
    cache.contains_key(&binding.cloned())
}

/// The current UTC time as RFC 3339 (`2026-01-01T00:00:00.123Z`).
pub fn now_rfc3339() -> String {
    OffsetDateTime::now_utc()
        .format(&Rfc3339)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".to_owned())
}

/// The core's inventory (core version, then the binding and its language runtime when
/// given). Captured at the first call for a binding identity, then reused: call it only
/// when evidence is enabled.
pub fn core_inventory(binding: Option<&BindingIdentity>) -> SoftwareInventory {
    let mut cache = cache().lock().unwrap_or_else(|e| e.into_inner());
    cache
        .entry(binding.cloned())
        .or_insert_with(|| {
            TAKEN.fetch_add(1, Ordering::Relaxed);
            take(binding)
        })
        .clone()
}

fn take(binding: Option<&BindingIdentity>) -> SoftwareInventory {
    let at = now_rfc3339();
    let observed = |value: &str, source: &str, origin: &str| {
        VersionObservation::observed(value, source, origin, at.clone())
    };
    let mut participants = vec!["core".to_owned()];
    let mut entries = vec![EvidenceEntry::new(
        "core",
        "native_library",
        CORE_NAME,
        observed(CORE_VERSION, "core:compiled_version", "core"),
    )];
    if let Some(binding) = binding {
        participants.push("sdk".to_owned());
        // A binding that cannot read its own version says "unknown" (a Go program built
        // inside the binding's checkout, a TypeScript build away from its manifest).
        let version = match binding.version.trim() {
            "" | "unknown" => VersionObservation::unavailable(codes::METADATA_NOT_FOUND),
            version => observed(version, "sdk:binding_identity", "sdk"),
        };
        entries.push(EvidenceEntry::new("sdk", "package", &binding.name, version));
        if let Some(runtime) = &binding.runtime_name {
            let version = match &binding.runtime_version {
                Some(version) => observed(version, "sdk:binding_identity", "sdk"),
                None => VersionObservation::unavailable(codes::METADATA_NOT_FOUND),
            };
            entries.push(EvidenceEntry::new(
                "interpreter",
                "runtime",
                runtime,
                version,
            ));
        }
    }
    SoftwareInventory {
        context_ref: "ctx-1".to_owned(),
        participants,
        availability: Availability::of(&entries),
        coverage: EvidenceCoverage::complete(),
        entries,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_is_taken_once_per_binding() {
        let binding = BindingIdentity {
            name: "snapshot-test".into(),
            version: "9.9.9".into(),
            runtime_name: Some("node".into()),
            runtime_version: None,
        };
        let first = core_inventory(Some(&binding));
        let taken = snapshots_taken();
        let second = core_inventory(Some(&binding));
        assert_eq!(first, second, "same observed_at: the snapshot is reused");
        assert_eq!(snapshots_taken(), taken);
        assert_eq!(first.participants, ["core", "sdk"]);
        assert_eq!(first.entries[1].version.value.as_deref(), Some("9.9.9"));
        assert_eq!(first.availability, Availability::Partial);
        assert!(first.entries.iter().all(EvidenceEntry::is_well_formed));
    }
}
