//! Codes of the surfaces: the C ABI, the `fabric` command, the bindings and the Ray
//! runtime pool.

use super::{ErrorCode, Origin as O, code, state};
use crate::error::Stage as S;

/// fabric-ffi.
pub(super) const ABI: &[ErrorCode] = &[
    code(
        "null_argument",
        None,
        O::Abi,
        "a required pointer argument is NULL",
    ),
    code(
        "invalid_utf8",
        None,
        O::Abi,
        "a string argument is not UTF-8",
    ),
    state(code("null_handle", None, O::Abi, "a handle argument is 0")),
    state(code(
        "unknown_handle",
        None,
        O::Abi,
        "a handle argument was never issued",
    )),
    state(code(
        "stale_handle",
        None,
        O::Abi,
        "a handle argument was already freed",
    )),
    state(code(
        "wrong_handle_kind",
        None,
        O::Abi,
        "a handle argument is of another kind",
    )),
    code(
        "internal_panic",
        None,
        O::Abi,
        "a bug: a panic was caught at the C ABI boundary",
    ),
    code(
        "internal_encode",
        None,
        O::Abi,
        "a bug: a result could not be encoded as JSON",
    ),
    code(
        "handle_space_exhausted",
        None,
        O::Abi,
        "no more handle ids can be issued",
    ),
];

/// The fabric CLI.
pub(super) const CLI: &[ErrorCode] = &[
    code(
        "config_read_failed",
        Some(S::Config),
        O::Cli,
        "the config file cannot be read",
    ),
    code(
        "request_read_failed",
        Some(S::Config),
        O::Cli,
        "the --request file cannot be read",
    ),
    code(
        "inputs_read_failed",
        Some(S::Config),
        O::Cli,
        "the --inputs file cannot be read",
    ),
    code(
        "unknown_schema",
        Some(S::Config),
        O::Cli,
        "`fabric schema` was given an unknown schema name",
    ),
    code(
        "export_read_failed",
        Some(S::Config),
        O::Cli,
        "a `fabric export` input file cannot be read",
    ),
    code(
        "export_line_invalid",
        Some(S::Config),
        O::Cli,
        "a `fabric export` input line is not a RunResult or an ATOF record",
    ),
];

/// The bindings.
pub(super) const BINDINGS: &[ErrorCode] = &[
    code(
        "native_library_missing",
        Some(S::Config),
        O::Binding,
        "the native library was not found",
    ),
    code(
        "native_library_unloadable",
        Some(S::Config),
        O::Binding,
        "the native library exists but cannot be loaded",
    ),
    code(
        "native_symbol_missing",
        Some(S::Config),
        O::Binding,
        "the native library lacks a required symbol",
    ),
    code(
        "abi_version_mismatch",
        Some(S::Config),
        O::Binding,
        "the native library speaks another ABI version",
    ),
    code(
        "invalid_argument",
        None,
        O::Binding,
        "an argument cannot be passed to the native library (NUL byte, wrong type)",
    ),
    code(
        "invalid_config_type",
        Some(S::Config),
        O::Binding,
        "a config value has the wrong type for its field",
    ),
    code(
        "invalid_json_value",
        Some(S::Config),
        O::Binding,
        "a value cannot be encoded as JSON",
    ),
    code(
        "invalid_native_json",
        None,
        O::Binding,
        "the native library returned text that is not the documented JSON",
    ),
    code(
        "target_refused",
        Some(S::Config),
        O::Binding,
        "a health target the binding cannot check was given",
    ),
];

/// The Ray runtime pool of the Python binding (fabric_core.ray, docs/scale-out.md).
pub(super) const RAY: &[ErrorCode] = &[
    code(
        "node_lost",
        Some(S::Invoke),
        O::Binding,
        "the Ray actor or node that ran the invocation or held the session's runtime died; the invocation's effects are unknown",
    ),
    state(code(
        "pool_closed",
        None,
        O::Binding,
        "the runtime pool was closed",
    )),
];
