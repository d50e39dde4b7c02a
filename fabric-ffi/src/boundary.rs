//! The boundary every entry point runs in: panics caught, `*out` written once, arguments
//! checked for NULL and UTF-8 before any core code sees them.

use fabric_config::codes;
use std::ffi::{CStr, CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

use fabric_config::{ErrorInfo, Stage};
use serde::Serialize;

use crate::error::FfiError;
use crate::status::FabricStatus;

/// Runs one entry-point body inside the C ABI boundary.
///
/// * `ffi_boundary!(stage, out, { body })` — `out: *mut *mut c_char`; the body returns
///   `Result<String, FfiError>`. `*out` receives the result JSON on success or the ErrorInfo
///   JSON on failure; a NULL `out` returns `INVALID_ARGUMENT` without running the body.
/// * `ffi_boundary!(stage, { body })` — for functions without `out` (the `_free`
///   functions); the body returns `Result<(), FfiError>` and only the status is reported.
///
/// In both forms a panic is caught and becomes `INTERNAL` with code `internal_panic` (no
/// payload text crosses the boundary).
macro_rules! ffi_boundary {
    ($stage:expr, $out:expr, $body:block) => {{
        // The closure is built outside the `unsafe` block so its body is checked as safe
        // code: each unsafe operation inside carries its own `unsafe` and `SAFETY:`.
        let body = || $body;
        // SAFETY: the caller guarantees that a non-NULL `out` is valid for one write of a
        // `char *` (documented on every entry point).
        unsafe { $crate::boundary::run_with_out($stage, $out, body) }
    }};
    ($stage:expr, $body:block) => {{ $crate::boundary::run_status($stage, || $body) }};
}
pub(crate) use ffi_boundary;

/// See [`ffi_boundary!`].
///
/// # Safety
/// `out` must be NULL or valid for writing one `*mut c_char`.
pub(crate) unsafe fn run_with_out<F>(stage: Stage, out: *mut *mut c_char, body: F) -> i32
where
    F: FnOnce() -> Result<String, FfiError>,
{
    if out.is_null() {
        return FabricStatus::InvalidArgument.code();
    }
    // SAFETY: `out` is non-NULL and valid for writes per this function's contract. Clearing
    // it first means the caller never sees a stale pointer, even if writing fails below.
    unsafe { out.write(ptr::null_mut()) };
    let outcome = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(outcome) => outcome,
        Err(_payload) => Err(FfiError::internal_panic(stage)),
    };
    let (status, json) = match outcome {
        Ok(json) => (FabricStatus::Ok, json),
        Err(error) => (error.status, error_json(&error.info)),
    };
    // SAFETY: as above; ownership of the allocation passes to the caller, who releases it
    // with `fabric_string_free`.
    unsafe { out.write(into_c_string(json)) };
    status.code()
}

/// As [`run_with_out`] for pull streams: the body returns the status with an optional
/// document (`END` and `TIMEOUT` leave `*out` NULL).
///
/// # Safety
/// `out` must be NULL or valid for writing one `*mut c_char`.
pub(crate) unsafe fn run_with_status<F>(stage: Stage, out: *mut *mut c_char, body: F) -> i32
where
    F: FnOnce() -> Result<(FabricStatus, Option<String>), FfiError>,
{
    if out.is_null() {
        return FabricStatus::InvalidArgument.code();
    }
    // SAFETY: `out` is non-NULL and valid for writes per this function's contract.
    unsafe { out.write(ptr::null_mut()) };
    let outcome = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(outcome) => outcome,
        Err(_payload) => Err(FfiError::internal_panic(stage)),
    };
    let (status, json) = match outcome {
        Ok((status, json)) => (status, json),
        Err(error) => (error.status, Some(error_json(&error.info))),
    };
    if let Some(json) = json {
        // SAFETY: as above; the caller releases the string with `fabric_string_free`.
        unsafe { out.write(into_c_string(json)) };
    }
    status.code()
}

/// As [`run_with_status`] for the calls that hand out a descriptor (`fabric_*_ready_fd`,
/// `fabric_completion_queue_fd`): `fd_out` is checked for NULL, then `fd()` is written to
/// it; `*out` stays NULL on success.
///
/// # Safety
/// `fd_out` must be NULL or valid for writing one `i32`; `out` must be NULL or valid for
/// writing one `*mut c_char`.
pub(crate) unsafe fn run_with_fd<F>(
    stage: Stage,
    fd_out: *mut i32,
    out: *mut *mut c_char,
    fd: F,
) -> i32
where
    F: FnOnce() -> Result<i32, FfiError>,
{
    let body = || {
        if fd_out.is_null() {
            return Err(FfiError::null_argument(stage, "fd_out"));
        }
        let fd = fd()?;
        // SAFETY: checked non-NULL above; valid for one write per this function's contract.
        unsafe { fd_out.write(fd) };
        Ok((FabricStatus::Ok, None))
    };
    // SAFETY: per this function's contract.
    unsafe { run_with_status(stage, out, body) }
}

/// See [`ffi_boundary!`] (the form without `out`).
pub(crate) fn run_status<F>(stage: Stage, body: F) -> i32
where
    F: FnOnce() -> Result<(), FfiError>,
{
    let _ = stage;
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => FabricStatus::Ok.code(),
        Ok(Err(error)) => error.status.code(),
        Err(_payload) => FabricStatus::Internal.code(),
    }
}

/// Serializes an ErrorInfo; never fails (falls back to a fixed document).
pub(crate) fn error_json(info: &ErrorInfo) -> String {
    serde_json::to_string(info).unwrap_or_else(|_| {
        String::from(
            r#"{"stage":"config","code":"internal","message":"failed to encode an error","retryable":false}"#,
        )
    })
}

/// Serializes a result value.
pub(crate) fn to_json<T: Serialize + ?Sized>(stage: Stage, value: &T) -> Result<String, FfiError> {
    serde_json::to_string(value).map_err(|_| {
        FfiError::internal(
            stage,
            codes::INTERNAL_ENCODE,
            "failed to encode the result as JSON",
        )
    })
}

/// Moves a Rust string into a C allocation owned by the caller.
pub(crate) fn into_c_string(text: String) -> *mut c_char {
    let c = CString::new(text).unwrap_or_else(|error| {
        // JSON produced by serde_json never contains a raw NUL; keep the text before it.
        let mut bytes = error.into_vec();
        bytes.retain(|b| *b != 0);
        CString::new(bytes).unwrap_or_default()
    });
    c.into_raw()
}

/// Reads a required NUL-terminated UTF-8 string argument.
///
/// # Safety
/// `ptr` must be NULL or point to a NUL-terminated string that stays valid and unmodified
/// for the duration of the call.
pub(crate) unsafe fn str_arg<'a>(
    stage: Stage,
    param: &'static str,
    ptr: *const c_char,
) -> Result<&'a str, FfiError> {
    if ptr.is_null() {
        return Err(FfiError::null_argument(stage, param));
    }
    // SAFETY: non-NULL and NUL-terminated per this function's contract.
    let bytes = unsafe { CStr::from_ptr(ptr) }.to_bytes();
    std::str::from_utf8(bytes).map_err(|e| FfiError::invalid_utf8(stage, param, e.valid_up_to()))
}

/// Reads an optional NUL-terminated UTF-8 string argument (NULL → `None`).
///
/// # Safety
/// As [`str_arg`].
pub(crate) unsafe fn opt_str_arg<'a>(
    stage: Stage,
    param: &'static str,
    ptr: *const c_char,
) -> Result<Option<&'a str>, FfiError> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: forwarded contract.
    unsafe { str_arg(stage, param, ptr) }.map(Some)
}

/// Parses a JSON argument into a value.
pub(crate) fn json_arg<T: serde::de::DeserializeOwned>(
    stage: Stage,
    param: &'static str,
    text: &str,
) -> Result<T, FfiError> {
    serde_json::from_str(text).map_err(|e| FfiError::invalid_json(stage, param, &e))
}

/// Writes one handle id to a caller-provided slot (already NULL-checked).
///
/// # Safety
/// `slot` must be valid for writing one `u64`.
pub(crate) unsafe fn write_handle(slot: *mut u64, id: u64) {
    // SAFETY: per this function's contract.
    unsafe { slot.write(id) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn take(ptr: *mut c_char) -> String {
        assert!(!ptr.is_null());
        // SAFETY: produced by `into_c_string` in this test.
        let text = unsafe { CStr::from_ptr(ptr) }.to_str().unwrap().to_owned();
        // SAFETY: same allocation, released once.
        drop(unsafe { CString::from_raw(ptr) });
        text
    }

    #[test]
    fn panics_become_internal_panic_without_payload_text() {
        let mut out: *mut c_char = ptr::null_mut();
        let trigger = Some(1);
        let status = ffi_boundary!(Stage::Plan, &mut out, {
            if trigger.is_some() {
                panic!("secret-payload-text");
            }
            Ok(String::new())
        });
        assert_eq!(status, FabricStatus::Internal.code());
        let json = take(out);
        assert!(json.contains("\"internal_panic\""), "{json}");
        assert!(!json.contains("secret-payload-text"), "{json}");
    }

    #[test]
    fn panics_without_out_return_internal() {
        let status = ffi_boundary!(Stage::Stop, {
            let v: Vec<u8> = Vec::new();
            if v.is_empty() {
                panic!("boom");
            }
            Ok(())
        });
        assert_eq!(status, FabricStatus::Internal.code());
    }

    #[test]
    fn null_out_is_invalid_argument_and_body_not_run() {
        let mut ran = false;
        let status = ffi_boundary!(Stage::Config, ptr::null_mut(), {
            ran = true;
            Ok(String::new())
        });
        assert_eq!(status, FabricStatus::InvalidArgument.code());
        assert!(!ran);
    }

    #[test]
    fn string_arguments_are_checked() {
        // SAFETY: NULL is allowed by the contract.
        let err = unsafe { str_arg(Stage::Config, "config_json", ptr::null()) }.unwrap_err();
        assert_eq!(err.info.code, "null_argument");
        let bad = b"ab\xffcd\0";
        // SAFETY: NUL-terminated literal.
        let err =
            unsafe { str_arg(Stage::Config, "config_json", bad.as_ptr().cast()) }.unwrap_err();
        assert_eq!(err.status, FabricStatus::InvalidArgument);
        assert_eq!(err.info.code, "invalid_utf8");
        assert_eq!(err.info.metadata["offset"], 2);
        // SAFETY: NULL is allowed by the contract.
        assert!(
            unsafe { opt_str_arg(Stage::Config, "options_json", ptr::null()) }
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn invalid_json_does_not_echo_input() {
        let err = json_arg::<serde_json::Value>(Stage::Invoke, "request_json", "{\"k\": sekrit")
            .unwrap_err();
        assert_eq!(err.info.code, "invalid_json");
        assert_eq!(err.status, crate::status::FabricStatus::Config);
        assert!(!err.info.message.contains("sekrit"));
    }
}
