//! Config entry points: validate, plan, doctor, inspect.

use std::ffi::c_char;
use std::path::Path;

use fabric_config::Stage;
use serde_json::Value;

use crate::boundary::{ffi_boundary, json_arg, opt_str_arg, str_arg, to_json};
use fabric_host::{Fabric, RunOptions};

use crate::objects::{config_args, options_arg, parse_config};
use crate::plan_memo;

/// Validates a config and returns its canonical JSON.
///
/// `config_json`: a `fabric.agent/v1alpha1` config. `options_json`: NULL or a CallOptions
/// object (`schemas/sdk/call-options.schema.json`); when it has `base_dir`, the config's
/// relative paths (skills, workspace, artifacts, discovery, Relay output) are resolved
/// against it, as `fabric validate --base-dir` does; otherwise they stay as written
/// (`expected_descriptor_sha256` is ignored: validation selects no adapter). On success
/// `*out` is the canonical config (defaults written, `null` and empty containers omitted).
///
/// Ownership: inputs are borrowed for the call only; `*out` is owned by the caller and
/// released with `fabric_string_free`.
/// Errors: `FABRIC_STATUS_CONFIG` (decode error or rule violation, an unknown or mistyped
/// option; `metadata.path` names the field, `options.<key>` for options; a JSON argument
/// that is not JSON: `invalid_json`, `metadata.argument`),
/// `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `config_json` or `out`, invalid UTF-8).
/// Blocking: no (pure computation). Thread-safe.
///
/// # Safety
/// `config_json` and `options_json` must be NULL or NUL-terminated strings valid for the
/// duration of the call; `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_validate(
    config_json: *const c_char,
    options_json: *const c_char,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Config;
    ffi_boundary!(stage, out, {
        // SAFETY: forwarded from this function's contract.
        let (config, options) = unsafe { config_args(stage, config_json, options_json) }?;
        let config = parse_config(stage, config)?;
        match options.base_dir {
            Some(dir) => to_json(stage, &config.resolve_paths(Path::new(&dir))),
            None => to_json(stage, &config),
        }
    })
}

/// Resolves a config into a RunPlan (selected adapter, capability and telemetry plans).
///
/// `options_json`: NULL or a CallOptions object. Its `base_dir` (default the current
/// directory) anchors relative paths (discovery paths, skills, workspace, artifacts); with
/// `expected_descriptor_sha256`, planning fails with `descriptor_mismatch` (stage `plan`,
/// `FABRIC_STATUS_CONFIG`) unless the plan's `descriptor_sha256` equals it. Adapter
/// descriptors are discovered from `discovery.local_paths`, `FABRIC_ADAPTER_PATH`,
/// installed prefixes and the bundled adapters. Starts nothing. Planning the same config
/// and options texts again returns the previous plan while discovery, redone on every call
/// (descriptor files and directories validated by their stamps), resolves the same
/// descriptors from the same base directory: an edited, added or removed descriptor is
/// always seen.
///
/// Ownership: inputs are borrowed for the call only; `*out` (the RunPlan JSON or an
/// ErrorInfo) is owned by the caller and released with `fabric_string_free`.
/// Errors: `FABRIC_STATUS_CONFIG` (invalid config or options, either not JSON, adapter not
/// found or ambiguous, `descriptor_mismatch`), `FABRIC_STATUS_CAPABILITY` (the adapter does
/// not accept a configured field), `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `config_json` or
/// `out`, invalid UTF-8).
/// Blocking: reads descriptor files; no processes. Thread-safe.
///
/// # Safety
/// `config_json` and `options_json` must be NULL or NUL-terminated strings valid for the
/// duration of the call; `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_plan(
    config_json: *const c_char,
    options_json: *const c_char,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Plan;
    ffi_boundary!(stage, out, {
        // SAFETY: forwarded from this function's contract.
        let config = unsafe { str_arg(stage, "config_json", config_json) }?;
        // SAFETY: forwarded from this function's contract.
        let options_text = unsafe { opt_str_arg(Stage::Config, "options_json", options_json) }?;
        plan_memo::plan_json(config, options_text, || {
            // SAFETY: forwarded from this function's contract.
            let options = unsafe { options_arg(options_json) }?;
            let config = parse_config(stage, config)?;
            let options = RunOptions::from_call_options(&options);
            let (plan, inputs) = Fabric::new().plan_with_inputs(&config, &options)?;
            Ok((config, options, inputs, to_json(stage, &plan)?))
        })
    })
}

/// Runs every preflight check (config rules, adapter resolution, capability routing,
/// declared requirements) and returns a DoctorReport; findings do not stop the report.
///
/// `options_json`: NULL or a CallOptions object (`base_dir`; an
/// `expected_descriptor_sha256` adds a `descriptor_fingerprint` check). A failing check is
/// a report with `"status": "fail"`, not an error status.
///
/// Ownership: inputs are borrowed for the call only; `*out` (the DoctorReport JSON or an
/// ErrorInfo) is owned by the caller and released with `fabric_string_free`.
/// Errors: `FABRIC_STATUS_CONFIG` (the config is not decodable JSON of the right shape, an
/// unknown or mistyped option, options that are not JSON), `FABRIC_STATUS_INVALID_ARGUMENT`
/// (NULL `config_json` or `out`, invalid UTF-8).
/// Blocking: yes — inspects files, binaries on PATH and environment variables. Thread-safe.
///
/// # Safety
/// `config_json` and `options_json` must be NULL or NUL-terminated strings valid for the
/// duration of the call; `out` must be NULL or valid for writing one `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_doctor(
    config_json: *const c_char,
    options_json: *const c_char,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Plan;
    ffi_boundary!(stage, out, {
        // SAFETY: forwarded from this function's contract.
        let (config, options) = unsafe { config_args(stage, config_json, options_json) }?;
        let config = fabric_config::FabricConfig::from_json_str(config)
            .map_err(|error| crate::objects::config_error(Stage::Config, error))?;
        let report = fabric_host::Fabric::new().doctor(
            &config,
            &fabric_host::RunOptions::from_call_options(&options),
        )?;
        to_json(stage, &report)
    })
}

/// Reports the declared skills/MCP support and ATIF availability of a config against
/// descriptor metadata only (no discovery, no harness import), running every planning
/// rule: an AdapterCapabilityProfile (`adapter_id`, `descriptor_sha256`, `skills`, `mcp`,
/// `atif`).
///
/// `descriptor_json`: the adapter's descriptor, or NULL (basic execution with false claims;
/// requested skills, MCP or telemetry are rejected). `target_json`: the workflow target's
/// descriptor when the config selects a registered workflow, else NULL.
///
/// Ownership: inputs are borrowed for the call only; `*out` is owned by the caller and
/// released with `fabric_string_free`.
/// Errors: `FABRIC_STATUS_CONFIG` (invalid config or descriptor, either not JSON,
/// unconfirmable request), `FABRIC_STATUS_CAPABILITY` (a configured field the adapter does
/// not accept), `FABRIC_STATUS_INVALID_ARGUMENT` (NULL `config_json` or `out`, invalid
/// UTF-8).
/// Blocking: no (pure computation). Thread-safe.
///
/// # Safety
/// `config_json`, `descriptor_json` and `target_json` must be NULL or NUL-terminated
/// strings valid for the duration of the call; `out` must be NULL or valid for writing one
/// `char *`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fabric_inspect(
    config_json: *const c_char,
    descriptor_json: *const c_char,
    target_json: *const c_char,
    out: *mut *mut c_char,
) -> i32 {
    let stage = Stage::Plan;
    ffi_boundary!(stage, out, {
        // SAFETY: forwarded from this function's contract.
        let config = unsafe { str_arg(stage, "config_json", config_json) }?;
        // SAFETY: forwarded from this function's contract.
        let descriptor = unsafe { opt_str_arg(stage, "descriptor_json", descriptor_json) }?;
        // SAFETY: forwarded from this function's contract.
        let target = unsafe { opt_str_arg(stage, "target_json", target_json) }?;
        let config = parse_config(stage, config)?;
        let descriptor = match descriptor {
            Some(text) => {
                let value: Value = json_arg(stage, "descriptor_json", text)?;
                Some(fabric_plan::parse_adapter_descriptor(
                    value,
                    Path::new("host.fabric-adapter.json"),
                )?)
            }
            None => None,
        };
        let target = match target {
            Some(text) => {
                let value: Value = json_arg(stage, "target_json", text)?;
                Some(fabric_plan::parse_target_descriptor(
                    value,
                    Path::new("host.fabric-target.json"),
                )?)
            }
            None => None,
        };
        let profile = fabric_plan::inspect(&config, descriptor.as_ref(), target.as_ref())?;
        to_json(stage, &profile)
    })
}
