//! The error registry, stages and statuses as plain data for the renderers.

use fabric_config::codes::{self, ErrorClass};

/// Error class → (class key, Go type, Python/TypeScript class).
pub const CLASS_NAMES: &[(&str, &str, &str)] = &[
    ("config", "ConfigError", "FabricConfigError"),
    ("capability", "CapabilityError", "FabricCapabilityError"),
    ("runtime", "RuntimeError", "FabricRuntimeError"),
    ("state", "StateError", "FabricStateError"),
    (
        "resource_unavailable",
        "ResourceUnavailableError",
        "ResourceObservationUnavailableError",
    ),
    (
        "resource_unsupported",
        "ResourceUnsupportedError",
        "ResourceObservationUnsupportedError",
    ),
    (
        "native_unavailable",
        "NativeUnavailableError",
        "FabricNativeUnavailableError",
    ),
];

#[derive(Debug)]
pub struct Status {
    pub status: i32,
    pub name: String,
    pub class: Option<String>,
}

#[derive(Debug)]
pub struct Code {
    pub code: String,
    pub stage: Option<String>,
    pub retryable: bool,
    pub class: Option<String>,
    pub origin: String,
    pub summary: String,
    pub reason: bool,
    pub hint: Option<String>,
}

#[derive(Debug)]
pub struct Registry {
    pub abi_version: u32,
    pub stages: Vec<String>,
    pub statuses: Vec<Status>,
    pub codes: Vec<Code>,
}

/// The name of a code's constant in the Python and TypeScript `Code` tables: its spelling
/// upper-cased, as the Rust registry's constant (`runtime_busy` → `RUNTIME_BUSY`).
pub fn constant(code: &str) -> String {
    code.to_ascii_uppercase()
}

fn class(class: ErrorClass) -> String {
    class.as_str().to_owned()
}

pub fn read() -> Registry {
    let mut all = codes::all();
    all.sort_by(|a, b| a.code.cmp(b.code));
    Registry {
        abi_version: codes::ABI_VERSION,
        stages: codes::STAGES
            .iter()
            .map(|s| s.as_str().to_owned())
            .collect(),
        statuses: codes::STATUSES
            .iter()
            .map(|s| Status {
                status: s.status,
                name: s.name.to_owned(),
                class: s.class.map(class),
            })
            .collect(),
        codes: all
            .into_iter()
            .map(|c| Code {
                code: c.code.to_owned(),
                stage: c.stage.map(|s| s.as_str().to_owned()),
                retryable: c.retryable,
                class: c.class.map(class),
                origin: c.origin.as_str().to_owned(),
                summary: c.summary.to_owned(),
                reason: c.kind == codes::CodeKind::Reason,
                hint: c.hint.map(str::to_owned),
            })
            .collect(),
    }
}
