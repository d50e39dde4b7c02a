//! Codes of the surfaces: the C ABI, the `fabric` command, the bindings and the Ray
//! runtime pool.

use super::{Origin as O, code, declare, hints, state};
use crate::error::Stage as S;

declare! {
    /// fabric-ffi.
    pub(super) ABI = [
        NULL_ARGUMENT = "null_argument" => code(
            None,
            O::Abi,
            "a required pointer argument is NULL",
        ),
        INVALID_UTF8 = "invalid_utf8" => code(None, O::Abi, "a string argument is not UTF-8"),
        NULL_HANDLE = "null_handle" => state(code(None, O::Abi, "a handle argument is 0")),
        UNKNOWN_HANDLE = "unknown_handle" => state(code(
            None,
            O::Abi,
            "a handle argument was never issued",
        )),
        STALE_HANDLE = "stale_handle" => state(code(
            None,
            O::Abi,
            "a handle argument was already freed",
        )),
        WRONG_HANDLE_KIND = "wrong_handle_kind" => state(code(
            None,
            O::Abi,
            "a handle argument is of another kind",
        )),
        INTERNAL_PANIC = "internal_panic" => code(
            None,
            O::Abi,
            "a bug: a panic was caught at the C ABI boundary",
        ),
        INTERNAL_ENCODE = "internal_encode" => code(
            None,
            O::Abi,
            "a bug: a result could not be encoded as JSON",
        ),
        HANDLE_SPACE_EXHAUSTED = "handle_space_exhausted" => code(
            None,
            O::Abi,
            "no more handle ids can be issued",
        ),
    ];
}

declare! {
    /// The fabric CLI.
    pub(super) CLI = [
        CONFIG_READ_FAILED = "config_read_failed" => code(
            Some(S::Config),
            O::Cli,
            "the config file cannot be read",
        )
        .with_hint(hints::CHECK_FILE),
        REQUEST_READ_FAILED = "request_read_failed" => code(
            Some(S::Config),
            O::Cli,
            "the --request file cannot be read",
        )
        .with_hint(hints::CHECK_FILE),
        INPUTS_READ_FAILED = "inputs_read_failed" => code(
            Some(S::Config),
            O::Cli,
            "the --inputs file cannot be read",
        )
        .with_hint(hints::CHECK_FILE),
        UNKNOWN_SCHEMA = "unknown_schema" => code(
            Some(S::Config),
            O::Cli,
            "`fabric schema` was given an unknown schema name",
        ),
        EXPORT_READ_FAILED = "export_read_failed" => code(
            Some(S::Config),
            O::Cli,
            "a `fabric export` input file cannot be read",
        ),
        EXPORT_LINE_INVALID = "export_line_invalid" => code(
            Some(S::Config),
            O::Cli,
            "a `fabric export` input line is not a RunResult or an ATOF record",
        ),
        INTERRUPTED = "interrupted" => code(
            None,
            O::Cli,
            "the command was interrupted by SIGINT or SIGTERM and stopped its runtimes",
        ),
    ];
}

declare! {
    /// The bindings.
    pub(super) BINDINGS = [
        NATIVE_LIBRARY_MISSING = "native_library_missing" => code(
            Some(S::Config),
            O::Binding,
            "the native library was not found",
        ),
        NATIVE_LIBRARY_UNLOADABLE = "native_library_unloadable" => code(
            Some(S::Config),
            O::Binding,
            "the native library exists but cannot be loaded",
        ),
        NATIVE_SYMBOL_MISSING = "native_symbol_missing" => code(
            Some(S::Config),
            O::Binding,
            "the native library lacks a required symbol",
        ),
        ABI_VERSION_MISMATCH = "abi_version_mismatch" => code(
            Some(S::Config),
            O::Binding,
            "the native library speaks another ABI version",
        ),
        INVALID_ARGUMENT = "invalid_argument" => code(
            None,
            O::Binding,
            "an argument cannot be passed to the native library (NUL byte, wrong type)",
        ),
        INVALID_CONFIG_TYPE = "invalid_config_type" => code(
            Some(S::Config),
            O::Binding,
            "a config value has the wrong type for its field",
        ),
        INVALID_JSON_VALUE = "invalid_json_value" => code(
            Some(S::Config),
            O::Binding,
            "a value cannot be encoded as JSON",
        ),
        INVALID_NATIVE_JSON = "invalid_native_json" => code(
            None,
            O::Binding,
            "the native library returned text that is not the documented JSON",
        ),
        TARGET_REFUSED = "target_refused" => code(
            Some(S::Config),
            O::Binding,
            "a health target the binding cannot check was given",
        ),
    ];
}

declare! {
    /// The Ray runtime pool of the Python binding (fabric_core.ray, docs/scale-out.md).
    pub(super) RAY = [
        NODE_LOST = "node_lost" => code(
            Some(S::Invoke),
            O::Binding,
            "the Ray actor or node that ran the invocation or held the session's runtime died; the invocation's effects are unknown",
        ),
        POOL_CLOSED = "pool_closed" => state(code(
            None,
            O::Binding,
            "the runtime pool was closed",
        )),
    ];
}
