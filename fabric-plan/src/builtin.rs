//! Adapters compiled into the running executable: the `bundled` records of a program that
//! carries an adapter's code (the `fabric` CLI carries the scripted reference adapter).
//!
//! Such a program registers each descriptor once, when it starts
//! ([`register_builtin_adapter`]). Discovery offers them at the `bundled` level, after the
//! bundled adapters directory found beside the executable or the loaded library (an installed
//! prefix's copy of the same adapter keeps its record) and before the development fallback of
//! the checkout the build came from. So `cargo install --path fabric-cli`, or a `fabric`
//! copied anywhere alone, can run the bundled default with no adapters directory at all.
//!
//! The registered descriptor is the shipped one with two changes: its `runner` becomes this
//! executable (absolute path) with the registered arguments, and `requirements.binaries` is
//! emptied (the runner script's `sh` is not needed). Its provenance path is the executable.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};

use crate::error::PlanError;
use crate::load::{self, LoadedAdapter};

/// An adapter whose code is in this executable.
#[derive(Debug, Clone, Copy)]
pub struct BuiltinAdapter {
    /// The adapter's descriptor file, as shipped (JSON).
    pub descriptor: &'static str,
    /// The arguments that make this executable serve the adapter's host protocol.
    pub args: &'static [&'static str],
}

/// One loaded builtin adapter, or why its descriptor did not load.
pub(crate) type Builtin = Result<(Arc<LoadedAdapter>, PathBuf), String>;

static REGISTERED: OnceLock<Vec<BuiltinAdapter>> = OnceLock::new();
static LOADED: OnceLock<Vec<Builtin>> = OnceLock::new();

/// Registers the adapters compiled into this executable (once per process; a second call is
/// ignored and returns `false`). Nothing is read or compiled until discovery first needs
/// them.
pub fn register_builtin_adapters(adapters: &[BuiltinAdapter]) -> bool {
    REGISTERED.set(adapters.to_vec()).is_ok()
}

/// The registered adapters, loaded (once): none unless [`register_builtin_adapters`] was
/// called, or when the executable's path is unknown.
pub(crate) fn builtin_adapters() -> &'static [Builtin] {
    LOADED.get_or_init(|| {
        let Some(registered) = REGISTERED.get() else {
            return Vec::new();
        };
        let Ok(exe) = std::env::current_exe() else {
            return Vec::new();
        };
        registered
            .iter()
            .map(|adapter| load_builtin(adapter, &exe))
            .collect()
    })
}

fn load_builtin(adapter: &BuiltinAdapter, exe: &std::path::Path) -> Builtin {
    let mut value: Value = serde_json::from_str(adapter.descriptor)
        .map_err(|error| format!("the compiled-in descriptor is not JSON: {error}"))?;
    let Some(root) = value.as_object_mut() else {
        return Err("the compiled-in descriptor is not an object".to_owned());
    };
    root.insert(
        "runner".to_owned(),
        json!({"command": exe.display().to_string(), "args": adapter.args}),
    );
    if let Some(Value::Object(requirements)) = root.get_mut("requirements") {
        requirements.remove("binaries");
    }
    let loaded = load::parse_adapter_value(value, exe).map_err(|error| error.to_string())?;
    Ok((Arc::new(loaded), exe.to_path_buf()))
}

/// A builtin descriptor that failed to load, as a discovery error naming the executable.
pub(crate) fn load_error(reason: &str) -> PlanError {
    let exe = std::env::current_exe().unwrap_or_default();
    PlanError::invalid(&exe, "$", reason.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DESCRIPTOR: &str = r#"{"contract_version": "fabric.adapter/v1alpha2",
        "adapter_id": "example.builtin", "adapter_kind": "process",
        "runner": {"command": "sh", "script": "launch.sh"},
        "requirements": {"binaries": ["sh"]}, "config": {"accepts": []}}"#;

    #[test]
    fn the_runner_becomes_this_executable_with_the_registered_arguments() {
        let exe = std::path::Path::new("/opt/tool/bin/fabric");
        let adapter = BuiltinAdapter {
            descriptor: DESCRIPTOR,
            args: &["__adapter", "builtin"],
        };
        let (loaded, file) = load_builtin(&adapter, exe).expect("loads");
        assert_eq!(file, exe);
        let runner = &loaded.descriptor.runner;
        assert_eq!(runner["command"], "/opt/tool/bin/fabric");
        assert_eq!(runner["args"], json!(["__adapter", "builtin"]));
        assert!(!runner.contains_key("script"));
        assert!(loaded.descriptor.requirements.binaries.is_empty());
    }

    #[test]
    fn an_invalid_descriptor_is_an_error_not_a_record() {
        let adapter = BuiltinAdapter {
            descriptor: r#"{"adapter_id": "x"}"#,
            args: &[],
        };
        let error = load_builtin(&adapter, std::path::Path::new("/bin/fabric")).unwrap_err();
        assert!(error.contains("contract_version"), "{error}");
    }
}
