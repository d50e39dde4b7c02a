//! Shared services: prepare, attach, start a runtime on one, release, free.

use fabric_config::codes;
use std::ffi::c_char;

use fabric_config::plan::RunPlan;
use fabric_config::service::{ServiceInfo, ServiceReference};
use fabric_config::{ErrorInfo, Stage};
use fabric_host::{Fabric, RunOptions, Service};

use crate::api_runtime::{register, start_runtime_in};
use crate::boundary::{ffi_boundary, str_arg, to_json};
use crate::error::FfiError;
use crate::objects::{ServiceObject, plan_args};
use crate::registry;
use crate::status::FabricStatus;
use crate::{fabric_runtime, fabric_service};

/// Registers a started service and writes its id; on failure the service is dropped
/// (which stops its host).
///
/// # Safety
/// `service_out` must be non-NULL and valid for writing one `fabric_service`.
unsafe fn register_service(
    stage: Stage,
    service: Service,
    service_out: *mut fabric_service,
) -> Result<String, FfiError> {
    let mut info: ServiceInfo = service.info();
    // SAFETY: per this function's contract.
    unsafe {
        register(stage, ServiceObject { service }, service_out, |id| {
            info.handle = Some(id);
            to_json(stage, &info)
        })
    }
}

/// Plans a config and starts a Fabric-owned shared service: one adapter host whose
/// `start` payload carries `service: {operation: "prepare", connection_path}`.
///
/// On success `*service_out` receives a nonzero service handle and `*out` the ServiceInfo
/// (`service_id`, `status`, `service` — the SDK handle with `service_binding`,
/// `ownership`, `connection`, `metadata` —, `host_pid`, `fabric_home`, `handle`).
///
/// Ownership: inputs are borrowed for the call only; `*out` is owned by the caller
/// (`fabric_string_free`); the handle is owned by the caller: `fabric_service_release`,
/// then `fabric_service_free` (freeing an active service stops its host).
/// Errors: `FABRIC_STATUS_CONFIG` (config, options, plan), `FABRIC_STATUS_CAPABILITY`
/// (`service_unsupported`: the descriptor does not claim `capabilities.service`),
/// `FABRIC_STATUS_RUNTIME` (launch or start failed, `invalid_service_info`),
/// `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `config_json`/`service_out`/`out`, invalid UTF-8).
/// Blocking: yes — until the service host answered `start`. Thread-safe.
///
/// # Safety
/// `config_json` and `options_json` must be NULL or NUL-terminated strings valid for the
/// duration of the call; `service_out` must be NULL or valid for writing one
/// `fabric_service`; `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_service_prepare(
    config_json: *const c_char,
    options_json: *const c_char,
    service_out: *mut fabric_service,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Prepare;
    ffi_boundary!(stage, out, {
        if service_out.is_null() {
            return Err(FfiError::null_argument(stage, "service_out"));
        }
        // SAFETY: forwarded from this function's contract.
        let (plan, options) = unsafe { plan_args(config_json, options_json) }?;
        let service = Fabric::new().prepare_service_plan(&plan, &options.runtime)?;
        // SAFETY: checked non-NULL above; valid per this function's contract.
        unsafe { register_service(stage, service, service_out) }
    })
}

/// Plans a config and attaches to a caller-owned service: `reference_json` is a
/// ServiceReference (`adapter_id`, `service_type`, `connection`, `metadata`); the host's
/// `start` payload carries `service: {operation: "attach", connection_path, reference}`.
/// Results and ownership as `fabric_service_prepare`; release detaches (the deployment is
/// the caller's).
///
/// Errors: as `fabric_service_prepare`, plus `FABRIC_STATUS_CONFIG` for a reference that
/// is not a ServiceReference or names another adapter (`invalid_service_reference`,
/// `metadata.path`/`fields`).
/// Blocking: yes — until the service host answered `start`. Thread-safe.
///
/// # Safety
/// `config_json`, `reference_json` and `options_json` must be NULL or NUL-terminated
/// strings valid for the duration of the call; `service_out` must be NULL or valid for
/// writing one `fabric_service`; `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_service_attach(
    config_json: *const c_char,
    reference_json: *const c_char,
    options_json: *const c_char,
    service_out: *mut fabric_service,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Prepare;
    ffi_boundary!(stage, out, {
        if service_out.is_null() {
            return Err(FfiError::null_argument(stage, "service_out"));
        }
        // SAFETY: forwarded from this function's contract.
        let text = unsafe { str_arg(Stage::Config, "reference_json", reference_json) }?;
        let reference: ServiceReference = serde_json::from_str(text).map_err(|e| {
            let info = ErrorInfo::new(
                Stage::Config,
                codes::INVALID_SERVICE_REFERENCE,
                format!("reference_json is not a ServiceReference: {e}"),
            )
            .with_metadata("argument", "reference_json");
            FfiError::new(FabricStatus::Config, info)
        })?;
        // SAFETY: forwarded from this function's contract.
        let (plan, options) = unsafe { plan_args(config_json, options_json) }?;
        let service = Fabric::new().attach_service_plan(&plan, reference, &options.runtime)?;
        // SAFETY: checked non-NULL above; valid per this function's contract.
        unsafe { register_service(stage, service, service_out) }
    })
}

/// Plans a config and starts a runtime connected to `service` (its own host, started with
/// `service: {operation: "connect", service_id, connection_path}`). Options, results and
/// ownership as `fabric_runtime_start`; the runtime JSON names `service_id`.
///
/// Errors: as `fabric_runtime_start`, plus `FABRIC_STATUS_CONFIG` with
/// `service_not_active` ("service must be active": released or failed) or
/// `service_binding_mismatch` (the config differs from the service's; `metadata.fields`
/// names the sections: `metadata.name`, `harness`, `models`, `runtime.timeout_seconds`,
/// `environment`, `agent_config`), and `FABRIC_STATUS_INVALID_ARGUMENT` for a service
/// handle that is 0, stale, unknown or of another kind.
/// Blocking: yes — until the adapter host answered `start`; serialized with
/// `fabric_service_release` of the same service. Thread-safe.
///
/// # Safety
/// `config_json` and `options_json` must be NULL or NUL-terminated strings valid for the
/// duration of the call; `runtime_out` must be NULL or valid for writing one
/// `fabric_runtime`; `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_service_start_runtime(
    service: fabric_service,
    config_json: *const c_char,
    options_json: *const c_char,
    runtime_out: *mut fabric_runtime,
    out: *mut *mut c_char,
) -> i32 {
    let start = |plan: &RunPlan, object: &ServiceObject, options: &RunOptions| {
        Fabric::new().start_runtime_on_plan(plan, &object.service, &options.runtime)
    };
    ffi_boundary!(Stage::Start, out, {
        // SAFETY: forwarded from this function's contract.
        unsafe {
            start_runtime_in(
                "service",
                service,
                config_json,
                options_json,
                runtime_out,
                start,
            )
        }
    })
}

/// Releases a service: stops its host (`stop`, then the usual escalation). Refused while
/// a runtime connected to it is not stopped: `FABRIC_STATUS_RUNTIME` with code
/// `service_in_use`, stage `stop`, `metadata.fields` = the runtime ids; the service stays
/// active. Idempotent after a release. `*out` is the ServiceInfo (`status` `released`, or
/// `failed` when the host could not be ended). The handle stays valid until
/// `fabric_service_free`.
///
/// Ownership: `*out` is owned by the caller and released with `fabric_string_free`.
/// Errors: see above; `FABRIC_STATUS_STATE` (`service_releasing`);
/// `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `out`; handle 0, stale, unknown or of another
/// kind).
/// Blocking: yes — until the host ended (bounded by the stop escalation). Thread-safe.
///
/// # Safety
/// `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_service_release(
    service: fabric_service,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Stop;
    ffi_boundary!(stage, out, {
        let object = registry::get::<ServiceObject>(stage, "service", service)?;
        let mut info = object.service.release()?;
        info.handle = Some(service);
        to_json(stage, &info)
    })
}

/// The current ServiceInfo of a service (status, connected runtimes).
///
/// Ownership: `*out` is owned by the caller and released with `fabric_string_free`.
/// Errors: `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `out`; handle 0, stale, unknown or of
/// another kind).
/// Blocking: no. Thread-safe.
///
/// # Safety
/// `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_service_info(
    service: fabric_service,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Start;
    ffi_boundary!(stage, out, {
        let object = registry::get::<ServiceObject>(stage, "service", service)?;
        let mut info = object.service.info();
        info.handle = Some(service);
        to_json(stage, &info)
    })
}

/// Releases a service handle. An active service's host is stopped in the background;
/// runtimes started on it keep running. The id is never reused.
///
/// Returns `FABRIC_STATUS_OK`, or `FABRIC_STATUS_INVALID_ARGUMENT` for a stale, unknown or
/// wrong-kind handle; `fabric_service_free(0)` is a no-op returning `FABRIC_STATUS_OK`.
///
/// Ownership: consumes the handle.
/// Errors: see above (no `out`).
/// Blocking: no. Thread-safe.
/// Safety: safe to call with any value (ids are looked up, never dereferenced).
#[unsafe(no_mangle)]
pub extern "C" fn fabric_service_free(service: fabric_service) -> i32 {
    registry::free::<ServiceObject>(Stage::Release, "service", service)
}
