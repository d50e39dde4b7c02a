//! The one place that says when a start may take a prewarmed host: everything that shapes
//! the host's spawn must be equal.

use std::ffi::OsString;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;

use fabric_config::plan::RunPlan;

use crate::runtime::RuntimeOptions;

/// What shapes a host's spawn. Two starts with equal keys launch the same program with the
/// same arguments, environment, working directory, FABRIC_HOME root and limits (only the
/// runtime's fresh ids differ).
///
/// - the whole plan (its JSON): the config (environment, workspace, artifacts, telemetry,
///   limits), the base directory, the selected adapter's descriptor and its sha256;
/// - the options that reach the spawn: the configured and the calling interpreter, the
///   protocol line cap, the stderr log size;
/// - this process's environment variables (inherited by the host; `environment.env_names`,
///   `$ADAPTER_PYTHON`, `$VIRTUAL_ENV`, `PATH`, `TMPDIR` are read from them).
///
/// Options applied after the spawn (host timeout, stop policy, invoke margin, the
/// binding's identity) are the claiming start's own and are not part of the key. Relay
/// streaming starts a collector per runtime, so a start with it never matches
/// ([`SpawnKey::of`] is `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SpawnKey {
    plan: String,
    python_interpreter: Option<PathBuf>,
    caller_python: Option<PathBuf>,
    max_line_bytes: usize,
    stderr_log_bytes: u64,
    process_environment: u64,
}

impl SpawnKey {
    /// The key of a start of `plan` with `options`; `None` when such a start cannot use a
    /// prewarmed host.
    pub(crate) fn of(plan: &RunPlan, options: &RuntimeOptions) -> Option<SpawnKey> {
        if options.relay_streaming.is_some() {
            return None;
        }
        Some(SpawnKey {
            plan: serde_json::to_string(plan).ok()?,
            python_interpreter: options.python_interpreter.clone(),
            caller_python: options.caller_python.clone(),
            max_line_bytes: options.max_line_bytes,
            stderr_log_bytes: options.stderr_log_bytes,
            process_environment: environment_digest(std::env::vars_os()),
        })
    }
}

/// A digest of environment variables in their order (a reordered environment only costs a
/// missed claim).
fn environment_digest(vars: impl Iterator<Item = (OsString, OsString)>) -> u64 {
    let mut hasher = DefaultHasher::new();
    for (key, value) in vars {
        key.hash(&mut hasher);
        value.hash(&mut hasher);
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Iterator<Item = (OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn a_changed_variable_changes_the_environment_digest() {
        let one = environment_digest(vars(&[("A", "1"), ("B", "2")]));
        assert_eq!(one, environment_digest(vars(&[("A", "1"), ("B", "2")])));
        assert_ne!(one, environment_digest(vars(&[("A", "1"), ("B", "3")])));
        assert_ne!(one, environment_digest(vars(&[("A", "1")])));
        // Key and value boundaries are part of the digest.
        assert_ne!(
            environment_digest(vars(&[("AB", "")])),
            environment_digest(vars(&[("A", "B")]))
        );
    }
}
