//! The error-code registry: every `ErrorInfo.code` and result reason any surface (core
//! crates, C ABI, CLI, bindings) can emit, declared once with its stage, class, retryable
//! flag, summary and CLI hint; the SDK error classes; and the C ABI status → class table.
//!
//! Each code is spelled once, in its list here (`declare!` makes a constant of it, e.g.
//! [`RUNTIME_BUSY`]), or — for the config rules — in `ConfigRule`'s table. Every other
//! place uses the constant: the crates' error types, the host's classification, the CLI's
//! hints, and what `cargo xtask codegen` writes (`docs/errors.md`, the bindings' tables,
//! `tests/fixtures/error-codes.json`). A test walks the sources for string literals that
//! spell a registered code outside its declaration. Codes are never renamed or reused.
//!
//! ```
//! use fabric_config::codes::{self, Origin};
//!
//! let busy = codes::find(codes::RUNTIME_BUSY).unwrap();
//! assert_eq!(busy.origin, Origin::Host);
//! assert_eq!(busy.class, Some(codes::ErrorClass::State));
//! assert!(codes::find("no_such_code").is_none());
//! ```

mod adapter;
mod batch;
mod decode;
mod environment_ops;
mod gym;
mod host;
mod observe;
mod plan;
mod reasons;
mod sandbox;
mod surfaces;
mod view;

use std::collections::HashMap;
use std::sync::OnceLock;

pub use adapter::*;
pub use batch::*;
pub use decode::*;
pub use environment_ops::*;
pub use gym::*;
pub use host::*;
pub use observe::*;
pub use plan::*;
pub use reasons::*;
pub use sandbox::*;
pub use surfaces::*;
pub use view::*;

use crate::error::{ConfigRule, Stage};

/// Declares a list of codes: for each entry a constant holding its spelling (the only place
/// the code is written) and the registry entry that carries it.
macro_rules! declare {
    (
        $(#[$meta:meta])*
        $vis:vis $list:ident = [
            $( $name:ident = $code:literal => $entry:expr ),* $(,)?
        ];
    ) => {
        $(
            #[doc = concat!("The registered code `", $code, "`.")]
            pub const $name: &str = $code;
        )*
        $(#[$meta])*
        $vis const $list: &[$crate::codes::ErrorCode] = &[
            $( $crate::codes::ErrorCode { code: $name, ..$entry } ),*
        ];
    };
}
pub(crate) use declare;

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
    /// What the `fabric` command suggests to a user who meets it (human output).
    pub hint: Option<&'static str>,
}

impl ErrorCode {
    /// The same entry with a CLI hint.
    pub(crate) const fn with_hint(self, hint: &'static str) -> ErrorCode {
        ErrorCode {
            hint: Some(hint),
            ..self
        }
    }

    /// The same entry with an SDK class that holds whatever the status (a provider's or
    /// the bridge's code for a setting or request the caller must change is a config
    /// error).
    pub(crate) const fn with_class(self, class: ErrorClass) -> ErrorCode {
        ErrorCode {
            class: Some(class),
            ..self
        }
    }
}

/// Hints shared by several codes.
mod hints {
    /// A host process that died.
    pub(super) const HOST_DIED: &str = "the adapter host died; its stderr is in \
        metadata.stderr_tail (`--json`); `fabric doctor CONFIG` checks the adapter's requirements";
    /// A config the adapter cannot take.
    pub(super) const INSPECT: &str =
        "`fabric inspect CONFIG` shows what the selected adapter supports";
    /// A file that could not be read.
    pub(super) const CHECK_FILE: &str = "check the file's path and permissions";
}

/// What a registered code names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodeKind {
    /// An `ErrorInfo.code`.
    Error,
    /// A `reason` or diagnostic `code` inside a result (stats observations, provenance).
    Reason,
}

/// An `ErrorInfo.code` entry (its spelling is set by `declare!`).
pub(crate) const fn code(stage: Option<Stage>, origin: Origin, summary: &'static str) -> ErrorCode {
    ErrorCode {
        code: "",
        stage,
        retryable: false,
        class: None,
        origin,
        summary,
        kind: CodeKind::Error,
        hint: None,
    }
}

/// A reason entry (its spelling is set by `declare!`).
pub(crate) const fn reason(origin: Origin, summary: &'static str) -> ErrorCode {
    ErrorCode {
        kind: CodeKind::Reason,
        ..code(None, origin, summary)
    }
}

/// An entry of a state error (`FabricStateError` whatever the status).
const fn state(code: ErrorCode) -> ErrorCode {
    ErrorCode {
        class: Some(ErrorClass::State),
        ..code
    }
}

/// The per-origin lists, in registry order (the config rules, declared by `ConfigRule`,
/// come first in [`all`]).
const LISTS: &[&[ErrorCode]] = &[
    decode::DECODE,
    sandbox::SANDBOX,
    sandbox::CONTAINER_PROVIDER,
    sandbox::PROVIDER_KIT,
    environment_ops::ENVIRONMENT_OPS,
    plan::PLAN,
    host::HOST,
    batch::BATCH,
    observe::STATS,
    observe::HEALTH,
    surfaces::ABI,
    surfaces::CLI,
    surfaces::BINDINGS,
    surfaces::RAY,
    adapter::ADAPTER,
    reasons::REASONS,
    gym::GYM,
    view::VIEW,
];

/// Every code except the config rules (declared by `ConfigRule`, added by [`all`]).
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
    let mut out = [code(None, Origin::Config, ""); N];
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

/// The whole registry: the config rules (reported at the stage of the call that read the
/// config: `config`, or `plan` for planning calls), then [`CODES`].
pub fn all() -> Vec<ErrorCode> {
    let mut all: Vec<ErrorCode> = ConfigRule::ALL
        .iter()
        .map(|rule| ErrorCode {
            code: rule.code(),
            ..code(None, Origin::Config, rule.description())
        })
        .collect();
    all.extend_from_slice(CODES);
    all
}

/// The registered code `name`, if any.
pub fn find(name: &str) -> Option<&'static ErrorCode> {
    static INDEX: OnceLock<(Vec<ErrorCode>, HashMap<&'static str, usize>)> = OnceLock::new();
    let (entries, index) = INDEX.get_or_init(|| {
        let entries = all();
        let index = entries
            .iter()
            .enumerate()
            .map(|(at, entry)| (entry.code, at))
            .collect();
        (entries, index)
    });
    index.get(name).map(|&at| &entries[at])
}

/// The registered code `name`, if any (a copy of [`find`]'s entry).
pub fn lookup(name: &str) -> Option<ErrorCode> {
    find(name).copied()
}

/// The SDK class a registered code always maps to, whatever the status (`None`: the
/// status's or the error's own class).
pub fn class_of(name: &str) -> Option<ErrorClass> {
    find(name).and_then(|entry| entry.class)
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
        for name in crate::error::ConfigError::all_codes() {
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
