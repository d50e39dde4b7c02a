//! The error-code registry: every `ErrorInfo.code` any surface (core crates, C ABI, CLI,
//! bindings) can emit, declared once, with its stage and retryable flag; the SDK error
//! classes; and the C ABI status → class table.
//!
//! The bindings' code and class tables are generated from this module (`cargo run -p xtask
//! -- codegen`); a test walks the sources for string-literal codes outside the registry.
//! Codes are never renamed or reused.
//!
//! ```
//! use fabric_config::codes::{self, Origin};
//!
//! let busy = codes::lookup("runtime_busy").unwrap();
//! assert_eq!(busy.origin, Origin::Host);
//! assert!(codes::lookup("no_such_code").is_none());
//! ```

mod adapter;
mod host;
mod observe;
mod plan;
mod reasons;
mod sandbox;
mod surfaces;

use crate::error::{ConfigError, Stage};

/// The SDK error class a failure maps to (`FabricConfigError`, `FabricStateError`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorClass {
    /// Invalid config, request, override or argument.
    Config,
    /// The selected adapter does not support the requested operation.
    Capability,
    /// Start, invoke or stop failed before a normalized result existed.
    Runtime,
    /// Invalid runtime state transition (overlapping invoke, invoke after stop).
    State,
    /// A resource observation could not be read now (`resource_observation_unavailable`).
    ResourceUnavailable,
    /// No resource reader exists for this runtime (`resource_observation_unsupported`).
    ResourceUnsupported,
    /// The native library is missing, unloadable or of another ABI version (bindings only).
    NativeUnavailable,
}

impl ErrorClass {
    /// Every class, in declaration order.
    pub const ALL: [ErrorClass; 7] = [
        ErrorClass::Config,
        ErrorClass::Capability,
        ErrorClass::Runtime,
        ErrorClass::State,
        ErrorClass::ResourceUnavailable,
        ErrorClass::ResourceUnsupported,
        ErrorClass::NativeUnavailable,
    ];

    /// Stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Config => "config",
            ErrorClass::Capability => "capability",
            ErrorClass::Runtime => "runtime",
            ErrorClass::State => "state",
            ErrorClass::ResourceUnavailable => "resource_unavailable",
            ErrorClass::ResourceUnsupported => "resource_unsupported",
            ErrorClass::NativeUnavailable => "native_unavailable",
        }
    }
}

/// The C ABI version (`fabric_abi_version()`, `FABRIC_ABI_VERSION`): incremented on every
/// incompatible change to `include/fabric.h`; the bindings' generated tables carry it.
/// 2: plan / doctor / run / start / prepare / validate take `options_json`.
pub const ABI_VERSION: u32 = 2;

/// One C ABI status and the class its errors map to (`None`: not an error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusClass {
    /// The `int32_t` status (numbers never change).
    pub status: i32,
    /// Stable snake_case name (`FABRIC_STATUS_<NAME>` upper-cased in C).
    pub name: &'static str,
    /// The SDK class of a failure with this status, unless its code overrides it.
    pub class: Option<ErrorClass>,
}

/// The C ABI statuses (fabric-ffi's `FabricStatus` must match; a test checks).
pub const STATUSES: &[StatusClass] = &[
    status(0, "ok", None),
    status(1, "config", Some(ErrorClass::Config)),
    status(2, "capability", Some(ErrorClass::Capability)),
    status(3, "runtime", Some(ErrorClass::Runtime)),
    status(4, "state", Some(ErrorClass::State)),
    status(
        5,
        "resource_unavailable",
        Some(ErrorClass::ResourceUnavailable),
    ),
    status(
        6,
        "resource_unsupported",
        Some(ErrorClass::ResourceUnsupported),
    ),
    status(7, "invalid_argument", Some(ErrorClass::Config)),
    status(8, "internal", Some(ErrorClass::Runtime)),
    status(100, "end", None),
    status(101, "timeout", None),
];

const fn status(status: i32, name: &'static str, class: Option<ErrorClass>) -> StatusClass {
    StatusClass {
        status,
        name,
        class,
    }
}

/// Who emits a code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Origin {
    /// Config decoding and validation (`fabric-config`).
    Config,
    /// Descriptors and planning (`fabric-plan`).
    Plan,
    /// Hosting and runtimes (`fabric-host`).
    Host,
    /// Health listeners (`fabric-health`).
    Health,
    /// Resource observation (`fabric-stats`).
    Stats,
    /// The C ABI layer (`fabric-ffi`).
    Abi,
    /// The `fabric` command.
    Cli,
    /// A language binding, before or around a native call.
    Binding,
    /// An adapter (upstream lifecycle codes the core passes through unchanged).
    Adapter,
    /// The sandbox runtime server and command bridge (`fabric-agent-ctl`).
    Sandbox,
}

impl Origin {
    /// Stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Origin::Config => "config",
            Origin::Plan => "plan",
            Origin::Host => "host",
            Origin::Health => "health",
            Origin::Stats => "stats",
            Origin::Abi => "abi",
            Origin::Cli => "cli",
            Origin::Binding => "binding",
            Origin::Adapter => "adapter",
            Origin::Sandbox => "sandbox",
        }
    }
}

/// One registered error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorCode {
    /// Stable snake_case code.
    pub code: &'static str,
    /// The stage it is always reported at, or `None` when it takes the stage of the
    /// failing call.
    pub stage: Option<Stage>,
    /// Whether retrying at the consumer boundary is safe.
    pub retryable: bool,
    /// A class that overrides the status's class (handle errors are state errors).
    pub class: Option<ErrorClass>,
    /// Who emits it.
    pub origin: Origin,
    /// What it means (one line).
    pub summary: &'static str,
    /// Whether this is an `ErrorInfo.code` or a reason/diagnostic code inside a result.
    pub kind: CodeKind,
}

/// What a registered code names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodeKind {
    /// An `ErrorInfo.code`.
    Error,
    /// A `reason` or diagnostic `code` inside a result (stats observations, provenance).
    Reason,
}

pub(crate) const fn code(
    code: &'static str,
    stage: Option<Stage>,
    origin: Origin,
    summary: &'static str,
) -> ErrorCode {
    ErrorCode {
        code,
        stage,
        retryable: false,
        class: None,
        origin,
        summary,
        kind: CodeKind::Error,
    }
}

pub(crate) const fn reason(name: &'static str, origin: Origin, summary: &'static str) -> ErrorCode {
    ErrorCode {
        kind: CodeKind::Reason,
        ..code(name, None, origin, summary)
    }
}

const fn state(code: ErrorCode) -> ErrorCode {
    ErrorCode {
        class: Some(ErrorClass::State),
        ..code
    }
}

/// The per-origin lists, in registry order.
const LISTS: &[&[ErrorCode]] = &[
    sandbox::SANDBOX,
    sandbox::CONTAINER_PROVIDER,
    sandbox::PROVIDER_KIT,
    plan::PLAN,
    host::HOST,
    observe::STATS,
    observe::HEALTH,
    surfaces::ABI,
    surfaces::CLI,
    surfaces::BINDINGS,
    surfaces::RAY,
    adapter::ADAPTER,
    reasons::REASONS,
];

/// Every code except the config rules and decode errors (those come from
/// [`ConfigError::all_codes`] and are added by [`all`]).
pub const CODES: &[ErrorCode] = &concat::<{ total(LISTS) }>(LISTS);

/// Codes in `lists` together.
const fn total(lists: &[&[ErrorCode]]) -> usize {
    let mut sum = 0;
    let mut list = 0;
    while list < lists.len() {
        sum += lists[list].len();
        list += 1;
    }
    sum
}

/// `lists` concatenated, in order (evaluated at compile time).
const fn concat<const N: usize>(lists: &[&[ErrorCode]]) -> [ErrorCode; N] {
    let mut out = [code("", None, Origin::Config, ""); N];
    let mut at = 0;
    let mut list = 0;
    while list < lists.len() {
        let mut item = 0;
        while item < lists[list].len() {
            out[at] = lists[list][item];
            at += 1;
            item += 1;
        }
        list += 1;
    }
    out
}

/// The whole registry: config decode and rule codes (reported at the stage of the call that
/// read the config: `config`, or `plan` for planning calls), then [`CODES`].
pub fn all() -> Vec<ErrorCode> {
    let mut all: Vec<ErrorCode> = ConfigError::all_codes()
        .into_iter()
        .map(|name| code(name, None, Origin::Config, config_summary(name)))
        .collect();
    all.extend_from_slice(CODES);
    all.extend_from_slice(crate::gym::CODES);
    all
}

fn config_summary(name: &str) -> &'static str {
    crate::error::ConfigRule::ALL
        .iter()
        .find(|rule| rule.code() == name)
        .map(|rule| rule.description())
        .unwrap_or("the config is not the JSON its schema describes")
}

/// The registered code `name`, if any.
pub fn lookup(name: &str) -> Option<ErrorCode> {
    all().into_iter().find(|entry| entry.code == name)
}

/// Every lifecycle stage, in declaration order.
pub const STAGES: [Stage; 8] = [
    Stage::Config,
    Stage::Plan,
    Stage::Prepare,
    Stage::Start,
    Stage::Invoke,
    Stage::Stop,
    Stage::Release,
    Stage::Artifact,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_snake_case() {
        let all = all();
        let mut seen = std::collections::BTreeSet::new();
        for entry in &all {
            assert!(seen.insert(entry.code), "duplicate code {}", entry.code);
            assert!(
                entry
                    .code
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{} is not snake_case",
                entry.code
            );
            assert!(!entry.summary.is_empty(), "{} has no summary", entry.code);
        }
    }

    #[test]
    fn config_codes_are_registered() {
        for name in ConfigError::all_codes() {
            let entry = lookup(name).expect(name);
            assert_eq!(entry.origin, Origin::Config, "{name}");
        }
    }

    #[test]
    fn stages_cover_the_enum() {
        // Every spelling the Stage schema allows, in order, is listed (a new variant fails).
        let schema = serde_json::to_value(schemars::schema_for!(Stage)).unwrap();
        let allowed: Vec<&str> = schema["oneOf"]
            .as_array()
            .expect("oneOf")
            .iter()
            .map(|variant| variant["const"].as_str().expect("const"))
            .collect();
        let listed: Vec<&str> = STAGES.iter().map(|stage| stage.as_str()).collect();
        assert_eq!(listed, allowed);
    }

    #[test]
    fn gym_codes_are_registered() {
        for name in crate::gym::GymError::CODES {
            assert_eq!(lookup(name).expect(name).kind, CodeKind::Error, "{name}");
        }
        for name in crate::gym::GAP_CODES {
            assert_eq!(lookup(name).expect(name).kind, CodeKind::Reason, "{name}");
        }
    }

    #[test]
    fn statuses_are_ordered_and_unique() {
        let numbers: Vec<i32> = STATUSES.iter().map(|s| s.status).collect();
        let mut sorted = numbers.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(numbers, sorted);
    }
}
