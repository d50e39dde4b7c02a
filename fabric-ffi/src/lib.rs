//! The NeMo Fabric C ABI.
//!
//! Every fallible function returns an `int32_t` status ([`FabricStatus`]: 0 = ok) and
//! writes one JSON document to a caller-provided `char **out`: the result on success, an
//! ErrorInfo (`stage`, `code`, `message`, `retryable`, `metadata`) otherwise. Strings the
//! library returns are released only with [`fabric_string_free`]. Inputs are NUL-terminated
//! UTF-8 JSON strings; NULL pointers and invalid UTF-8 are `INVALID_ARGUMENT`, never a crash.
//! Runtimes, environments, streams and operations are integer handles (`fabric_runtime`,
//! `fabric_environment`, `fabric_stream`, `fabric_operation`):
//! nonzero, never reused, at most 2^53 − 1, released with their `_free` function; a stale,
//! unknown or wrong-kind id is `INVALID_ARGUMENT`. Every entry point catches panics and is
//! thread-safe; blocking calls may be made from any thread. See `docs/abi.md`.
//!
//! The header `include/fabric.h` is generated from this crate by cbindgen
//! (`cbindgen.toml` at the repository root); a test fails when it drifts.
//!
//! ```
//! use std::ffi::{CStr, c_char};
//! use fabric_ffi::{fabric_abi_version, fabric_string_free, fabric_validate, FabricStatus};
//!
//! assert_eq!(fabric_abi_version(), fabric_ffi::ABI_VERSION);
//! let mut out: *mut c_char = std::ptr::null_mut();
//! // SAFETY: NULL inputs are allowed (they are reported), `out` is a valid slot.
//! let status = unsafe { fabric_validate(std::ptr::null(), std::ptr::null(), &mut out) };
//! assert_eq!(status, FabricStatus::InvalidArgument as i32);
//! // SAFETY: `out` was written by the library and is freed once.
//! let error = unsafe { CStr::from_ptr(out) }.to_str().unwrap().to_owned();
//! unsafe { fabric_string_free(out) };
//! assert!(error.contains("null_argument"));
//! ```

#![allow(non_camel_case_types)]

mod at_exit;
mod boundary;
mod error;
mod objects;
mod operation;
mod plan_memo;
mod registry;
mod status;

mod api_batch;
mod api_config;
mod api_conformance;
mod api_environment;
mod api_environment_ops;
mod api_gym;
mod api_observe;
mod api_operation;
mod api_prewarm;
mod api_runtime;
mod api_service;
mod api_stream;

pub use api_batch::*;
pub use api_config::*;
pub use api_conformance::*;
pub use api_gym::*;
pub use api_observe::*;
pub use api_operation::*;
pub use api_prewarm::*;
pub use api_runtime::*;
pub use api_service::*;
pub use api_stream::*;
pub use at_exit::fabric_settle;
pub use status::FabricStatus;

use fabric_config::codes;
use std::ffi::{CString, c_char};

/// The C ABI version. Incremented on every incompatible change to `include/fabric.h`;
/// bindings refuse to load a library whose `fabric_abi_version()` differs.
/// 2: plan / doctor / run / start / prepare / validate take `options_json` (a CallOptions
/// object) instead of `base_dir`.
pub const ABI_VERSION: u32 = fabric_config::codes::ABI_VERSION;

/// Every `code` the C ABI layer itself reports (core codes come from the core crates).
/// Codes are never renamed or reused; `tests/fixtures/error-codes.json` lists them.
pub const ABI_ERROR_CODES: &[&str] = &[
    codes::NULL_ARGUMENT,
    codes::INVALID_UTF8,
    codes::INVALID_JSON,
    codes::NULL_HANDLE,
    codes::UNKNOWN_HANDLE,
    codes::STALE_HANDLE,
    codes::WRONG_HANDLE_KIND,
    codes::INTERNAL_PANIC,
    codes::INTERNAL_ENCODE,
    codes::HANDLE_SPACE_EXHAUSTED,
];

/// The library (Cargo package) version, NUL-terminated.
const VERSION_NUL: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");

/// A runtime handle: a nonzero integer id (0 is never a valid handle).
pub type fabric_runtime = u64;

/// An environment handle: a nonzero integer id (0 is never a valid handle).
pub type fabric_environment = u64;

/// A pull-stream handle: a nonzero integer id (0 is never a valid handle).
pub type fabric_stream = u64;

/// A shared-service handle: a nonzero integer id (0 is never a valid handle), valid only in
/// the process that created it.
pub type fabric_service = u64;

/// A non-blocking operation handle (`..._begin` calls): a nonzero integer id (0 is never a
/// valid handle).
pub type fabric_operation = u64;

/// A completion queue handle (one readiness descriptor for many operations): a nonzero
/// integer id; `0` means "no queue" where a queue is optional.
pub type fabric_completion_queue = u64;

/// A pool of prewarmed adapter hosts (`fabric_prewarm_start`); `0` is never a valid handle.
pub type fabric_prewarm = u64;
/// A batch handle (`fabric_batch_start`): a nonzero integer id (0 is never a valid handle).
pub type fabric_batch = u64;

/// Returns the library version (for example `"0.1.0"`).
///
/// Ownership: the string is static; do not free it.
/// Errors: none.
/// Blocking: no.
/// Safety: always safe to call, from any thread.
#[unsafe(no_mangle)]
pub extern "C" fn fabric_version() -> *const c_char {
    VERSION_NUL.as_ptr().cast()
}

/// Returns the C ABI version (`FABRIC_ABI_VERSION` in this header).
///
/// Ownership: none.
/// Errors: none.
/// Blocking: no.
/// Safety: always safe to call, from any thread.
#[unsafe(no_mangle)]
pub extern "C" fn fabric_abi_version() -> u32 {
    ABI_VERSION
}

/// Releases a string returned by this library through a `char **out` parameter.
///
/// Ownership: takes ownership of `s`; it must not be used afterwards.
/// Errors: none. `s == NULL` is a no-op.
/// Blocking: no.
///
/// # Safety
/// `s` must be NULL or a pointer written by this library to an `out` parameter that has
/// not been freed yet. Never pass strings from `fabric_version()` or from another allocator;
/// never free library strings with `free()`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_string_free(s: *mut c_char) {
    if s.is_null() {
        return;
    }
    // SAFETY: `s` was produced by `CString::into_raw` in `boundary::into_c_string` and is
    // released exactly once per the caller's contract. Dropping a CString cannot panic.
    drop(unsafe { CString::from_raw(s) });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_matches_cargo() {
        // SAFETY: static NUL-terminated string.
        let v = unsafe { std::ffi::CStr::from_ptr(fabric_version()) };
        assert_eq!(v.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
        assert_eq!(fabric_abi_version(), ABI_VERSION);
    }

    #[test]
    fn string_free_null_is_noop() {
        // SAFETY: NULL is allowed.
        unsafe { fabric_string_free(std::ptr::null_mut()) };
    }
}
