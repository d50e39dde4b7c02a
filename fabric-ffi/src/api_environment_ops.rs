//! Caller operations on a prepared or attached environment: `fabric_environment_exec`,
//! `fabric_environment_write_file`, `fabric_environment_read_file`,
//! `fabric_environment_list` (docs/sandbox.md, "Verifying inside the environment").

use std::ffi::c_char;

use fabric_config::Stage;
use fabric_config::environment_ops::FileWriteRequest;
use fabric_host::Environment;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::boundary::{ffi_boundary, json_arg, str_arg, to_json};
use crate::fabric_environment;
use crate::objects::EnvironmentObject;
use crate::registry;

/// The entry-point body every operation shares, inside the C ABI boundary: the environment
/// by its handle, `request_json` decoded as `R`, `run`'s output encoded into `*out`.
///
/// # Safety
/// `request_json` must be NULL or a NUL-terminated string valid for the call; `out` must be
/// NULL or valid for writing one `char *`.
unsafe fn operation<R: DeserializeOwned, T: Serialize>(
    stage: Stage,
    environment: fabric_environment,
    request_json: *const c_char,
    out: *mut *mut c_char,
    run: impl FnOnce(&Environment, &R) -> Result<T, fabric_host::HostError>,
) -> i32 {
    ffi_boundary!(stage, out, {
        let object = registry::get::<EnvironmentObject>(stage, "environment", environment)?;
        // SAFETY: forwarded from the caller's contract.
        let text = unsafe { str_arg(stage, "request_json", request_json) }?;
        let request: R = json_arg(stage, "request_json", text)?;
        let output = run(&object.environment, &request)?;
        to_json(stage, &output)
    })
}

/// `write_file` with its output document, `{"path"}`.
fn write_file(
    environment: &Environment,
    request: &FileWriteRequest,
) -> Result<Value, fabric_host::HostError> {
    environment
        .write_file(request)
        .map(|()| json!({"path": request.path}))
}

/// Runs one command in the environment: `request_json` is an ExecRequest (`argv`, optional
/// `cwd` relative to the workspace, `env`, `stdin_hex`, `timeout_seconds` (default 60),
/// `output_limit_bytes` (default and at most 1 MiB per stream)). Never through a shell
/// unless `argv` names one. The command runs in its own process group, killed whole at the
/// deadline (`timed_out: true`) and when the command exits (nothing is left behind).
/// `*out` is an ExecResult: `exit_code` (null when a signal ended it), `signal`, `stdout`,
/// `stderr`, `stdout_truncated`, `stderr_truncated`, `timed_out`, `duration_ms`. Works on
/// every provider until the environment is released, with or without runtimes in it.
///
/// Ownership: `request_json` is borrowed for the call; `*out` is owned by the caller
/// (`fabric_string_free`).
/// Errors: `FABRIC_STATUS_CONFIG` (`invalid_environment_request` with `metadata.path`
/// naming the field; a `cwd` through a link is `path_refused`), `FABRIC_STATUS_RUNTIME`
/// (`exec_failed`: the program could not be started; `provider_*`),
/// `FABRIC_STATUS_STATE` (`environment_released`), `FABRIC_STATUS_INVALID_ARGUMENT` (NULL
/// `request_json`/`out`, invalid UTF-8 or JSON; handle 0, stale, unknown or of another
/// kind).
/// Blocking: yes — until the command exits or its deadline passes (plus 2 s for a
/// provider's answer). Thread-safe.
///
/// # Safety
/// `request_json` must be NULL or a NUL-terminated string valid for the duration of the
/// call; `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_environment_exec(
    environment: fabric_environment,
    request_json: *const c_char,
    out: *mut *mut c_char,
) -> i32 {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        operation(
            Stage::Invoke,
            environment,
            request_json,
            out,
            Environment::exec_request,
        )
    }
}

/// Writes one file beneath the environment's workspace (or artifact root):
/// `request_json` is a FileWriteRequest (`path` relative to the root, `content_hex`, at most
/// 16 MiB decoded, optional `mode`, `root`: `workspace` (default) or `artifacts`). Missing
/// parents are created; a symbolic link anywhere on the path is refused, never followed.
/// `*out` is `{"path": ...}`.
///
/// Ownership: as `fabric_environment_exec`.
/// Errors: `FABRIC_STATUS_CONFIG` (`invalid_environment_request` naming the field),
/// `FABRIC_STATUS_RUNTIME` (`path_refused`: a link or a special file on the path;
/// `provider_*`), `FABRIC_STATUS_STATE` (`environment_released`),
/// `FABRIC_STATUS_INVALID_ARGUMENT` as `fabric_environment_exec`.
/// Blocking: yes — file system work or a provider's answer (60 s at most). Thread-safe.
///
/// # Safety
/// As `fabric_environment_exec`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_environment_write_file(
    environment: fabric_environment,
    request_json: *const c_char,
    out: *mut *mut c_char,
) -> i32 {
    // SAFETY: forwarded from this function's contract.
    unsafe { operation(Stage::Artifact, environment, request_json, out, write_file) }
}

/// Reads one regular file beneath the environment's workspace (or artifact root):
/// `request_json` is a FileReadRequest (`path`, `max_bytes` (default and at most 4 MiB),
/// `root`). `*out` is a FileContent: `path`, `content_hex`, `size`, `truncated` (the file is
/// longer than what was read).
///
/// Ownership: as `fabric_environment_exec`.
/// Errors: as `fabric_environment_write_file`, plus `file_not_found`.
/// Blocking: yes — file system work or a provider's answer (60 s at most). Thread-safe.
///
/// # Safety
/// As `fabric_environment_exec`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_environment_read_file(
    environment: fabric_environment,
    request_json: *const c_char,
    out: *mut *mut c_char,
) -> i32 {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        operation(
            Stage::Artifact,
            environment,
            request_json,
            out,
            Environment::read_file,
        )
    }
}

/// Lists one directory beneath the environment's workspace (or artifact root):
/// `request_json` is a FileListRequest (`path`, `""` for the root itself, `root`). `*out`
/// is a FileListing: `path`, `entries` (`name`, `kind`: `file`, `directory`, `symlink` or
/// `other`, `size`; links are listed, never followed), `truncated` (above 4096 entries).
///
/// Ownership: as `fabric_environment_exec`.
/// Errors: as `fabric_environment_read_file`.
/// Blocking: yes — file system work or a provider's answer (60 s at most). Thread-safe.
///
/// # Safety
/// As `fabric_environment_exec`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_environment_list(
    environment: fabric_environment,
    request_json: *const c_char,
    out: *mut *mut c_char,
) -> i32 {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        operation(
            Stage::Artifact,
            environment,
            request_json,
            out,
            Environment::list_files,
        )
    }
}
