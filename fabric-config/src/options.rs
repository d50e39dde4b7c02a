//! `CallOptions`: the options object of one call through the C ABI (`options_json`).
//!
//! Plan, doctor, run, runtime start and environment prepare take one options document
//! instead of separate arguments, so no binding re-implements a core rule (DESIGN §13).
//! Every field is optional; an absent document (NULL) means the defaults. Unknown keys are
//! rejected with their path (`options.<key>`), so a misspelled option never goes unnoticed.
//!
//! ```
//! use fabric_config::CallOptions;
//!
//! let options = CallOptions::from_json_str(r#"{"base_dir": "examples/hello"}"#)?;
//! assert_eq!(options.base_dir.as_deref(), Some("examples/hello"));
//! assert!(options.expected_descriptor_sha256.is_none());
//!
//! let error = CallOptions::from_json_str(r#"{"base_dri": "x"}"#).unwrap_err();
//! assert_eq!(error.code(), "unknown_field");
//! assert_eq!(error.path(), Some("options.base_dri"));
//! # Ok::<(), fabric_config::ConfigError>(())
//! ```

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use std::time::Duration;

use crate::error::{ConfigError, ConfigFinding, ConfigRule, DecodeErrorKind};
use crate::seconds::{self, MAX_TIMEOUT_SECONDS};
use crate::validate::{decode_error, decode_json_str};

/// Options of one call (the `options_json` argument of the C ABI).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallOptions {
    /// Directory anchoring the config's relative paths (skills, workspace, artifacts,
    /// discovery paths, Relay output). A relative directory is resolved against the
    /// process's current directory. Default: the current directory. `validate` resolves the
    /// config's paths against it only when it is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_dir: Option<String>,
    /// Pins the adapter: planning fails with `descriptor_mismatch` (stage `plan`) unless
    /// the plan's `descriptor_sha256` (the adapter descriptor's fingerprint, combined with
    /// the target descriptor's when a workflow target is selected) equals this value.
    /// `doctor` reports a mismatch as a failing `descriptor_fingerprint` check; `validate`
    /// selects no adapter and ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_descriptor_sha256: Option<String>,
    /// The calling Python interpreter's installation prefix (its `sysconfig` `data` path,
    /// `sys.prefix` in a virtual environment), searched for
    /// `share/nemo-fabric/{adapters,targets}` before every other installed prefix (provenance
    /// source `interpreter_prefix`). The Python binding always sends it, so adapters
    /// installed in the interpreter's environment are found when it is not activated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python_prefix: Option<String>,
    /// The calling Python interpreter (`sys.executable`): runs `python`-kind adapter hosts
    /// unless `$ADAPTER_PYTHON` is set; before `$VIRTUAL_ENV/bin/python` and `python3` on
    /// `PATH`. The Python binding always sends it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python_interpreter: Option<String>,
    /// How long an adapter host may take to answer `start`, in seconds (a finite number
    /// above 0 and at most 10^9). Default 90 (upstream `host_timeout`). A
    /// host that does not answer in time fails the start with `timeout` (stage `start`,
    /// `metadata.timeout_ms`) and is stopped. Used by run, runtime start and environment
    /// start; the other calls ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_timeout_seconds: Option<f64>,
    /// Size in bytes of one segment of the adapter host's `host.stderr.log` (in FABRIC_HOME,
    /// often RAM under `/dev/shm`): the log is a two-segment ring keeping the newest output,
    /// so at most twice this is kept. At least 1 and at most 1073741824 (1 GiB); default
    /// 1048576 (1 MiB). Used by run,
    /// runtime start and environment start.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::number::option_u64_integral"
    )]
    #[schemars(range(min = 1, max = 1073741824u64))]
    pub stderr_log_bytes: Option<u64>,
    /// Runtime start: enable Relay ATOF streaming (`invoke_stream`). Needs the config's
    /// Relay telemetry provider (`streaming_requires_relay` otherwise). Default false: the
    /// Relay configuration is left as it is. Other calls ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Runtime start with `streaming`: run the embedded collector (default true) or use the
    /// external collector named by the config's `nemo-fabric-stream` sink (false). Set
    /// without `streaming: true` it is `launch_collector_requires_streaming`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_collector: Option<bool>,
    /// Runtime start with `streaming`: seconds upstream's embedded collector waits for a
    /// late Pi `agent_settled` marker (a finite number above 0 and at most 10^9; default 1). The core's
    /// collector has no Pi turn-window correlation, so the value is validated and kept for
    /// compatibility only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_wait_timeout: Option<f64>,
    /// Runtime start with `streaming` and the embedded collector: the bytes the collector
    /// may hold in all (queued records, records being received or waiting for room,
    /// remembered scopes). At least 1048576 (one largest record); default 67108864 (64
    /// MiB). A record that does not fit waits for room as for a full queue (30 s), then is
    /// dropped; a publisher whose partial record does not fit is answered 503
    /// `collector_memory_full`. Other calls ignore it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::number::option_u64_integral"
    )]
    #[schemars(range(min = 1048576))]
    pub collector_memory_budget_bytes: Option<u64>,
    /// Run and runtime start: put the model-call gateway between the harness and its model
    /// endpoints. The adapter gets a loopback gateway URL (holding an unguessable token) in
    /// place of each `models.*.base_url`; every call is forwarded unchanged and recorded in
    /// the invocation's `model-calls.jsonl` (`RunResult.model_calls`). Models without a
    /// `base_url` are not captured. Default false. Other calls ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture_model_calls: Option<bool>,
    /// With `capture_model_calls`: model calls forwarded per invocation; a later call is
    /// answered HTTP 429 (OpenAI- or Anthropic-shaped) without being forwarded, and the
    /// RunResult carries a `budget_exceeded` event. Default: no limit.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::number::option_u64_integral"
    )]
    pub max_model_calls: Option<u64>,
    /// With `capture_model_calls`: total tokens (as the endpoints report them) per
    /// invocation; once reached, calls are answered 429 as for `max_model_calls`. Default:
    /// no limit.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::number::option_u64_integral"
    )]
    pub max_total_tokens: Option<u64>,
    /// With `capture_model_calls`: the largest request or response body kept in a record
    /// (bytes, at least 1); a longer one is stored truncated, as text, with
    /// `request_truncated`/`response_truncated`. Default 4194304 (4 MiB).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::number::option_u64_integral"
    )]
    #[schemars(range(min = 1))]
    pub model_call_body_bytes: Option<u64>,
    /// The calling binding (`fabric-core` Python, TypeScript, Go), reported in the core's
    /// software evidence inventory (`RunResult.execution`) next to the core's own version.
    /// The bindings always send it; the core snapshots it once per process and binding at
    /// the first runtime, service or environment start with evidence enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<BindingIdentity>,
}

/// `options.binding`: which binding calls the core, and the language runtime it runs on.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BindingIdentity {
    /// Distribution or package name (`fabric-core`, `@nvidia/fabric-core`, a Go module).
    pub name: String,
    /// Its full version.
    pub version: String,
    /// The language runtime (`cpython`, `node`, `go`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_name: Option<String>,
    /// The language runtime's full version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_version: Option<String>,
}

/// Smallest `options.collector_memory_budget_bytes` (the largest ATOF record, 1 MiB).
pub const MIN_COLLECTOR_MEMORY_BUDGET: u64 = 1024 * 1024;

/// Longest accepted `options.binding` text field, in bytes.
pub const BINDING_FIELD_MAX_BYTES: usize = 256;

/// Largest accepted `stderr_log_bytes` (1 GiB per segment: the log may live in RAM).
pub const MAX_STDERR_LOG_BYTES: u64 = 1 << 30;

impl CallOptions {
    /// The JSON path prefix of every error about an options document.
    pub const PATH: &'static str = "options";

    /// Decodes an options document (a JSON object). Errors carry the JSON path under
    /// `options` (`options.base_dir`); syntax errors are [`ConfigError::InvalidJson`].
    pub fn from_json_str(text: &str) -> Result<CallOptions, ConfigError> {
        let value: Value = decode_json_str(text)?;
        if !value.is_object() {
            return Err(ConfigError::Decode {
                kind: DecodeErrorKind::InvalidType,
                path: CallOptions::PATH.to_owned(),
                message: "options must be a JSON object".to_owned(),
            });
        }
        let options: CallOptions = serde_path_to_error::deserialize(value)
            .map_err(decode_error)
            .map_err(under_options)?;
        options.validate()?;
        Ok(options)
    }

    /// Checks the values: `start_timeout_seconds` and `completion_wait_timeout` must be
    /// finite numbers above 0 and at most 10^9 (`invalid_timeout_seconds` at
    /// `options.<field>`); `stderr_log_bytes` between 1 and 1 GiB, and the paths
    /// (`base_dir`, `python_prefix`, `python_interpreter`) without a NUL byte
    /// (`invalid_value`).
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let Some(bytes) = self.stderr_log_bytes
            && !(1..=MAX_STDERR_LOG_BYTES).contains(&bytes)
        {
            return Err(ConfigError::Decode {
                kind: DecodeErrorKind::InvalidValue,
                path: format!("{}.stderr_log_bytes", CallOptions::PATH),
                message: "must be at least 1 and at most 1073741824 (1 GiB)".to_owned(),
            });
        }
        if self
            .collector_memory_budget_bytes
            .is_some_and(|bytes| bytes < MIN_COLLECTOR_MEMORY_BUDGET)
        {
            return Err(ConfigError::Decode {
                kind: DecodeErrorKind::InvalidValue,
                path: format!("{}.collector_memory_budget_bytes", CallOptions::PATH),
                message: "must be at least 1048576 (one largest record)".to_owned(),
            });
        }
        let capture_fields = [
            ("max_model_calls", self.max_model_calls.is_some()),
            ("max_total_tokens", self.max_total_tokens.is_some()),
            (
                "model_call_body_bytes",
                self.model_call_body_bytes.is_some(),
            ),
        ];
        for (field, set) in capture_fields {
            if set && self.capture_model_calls != Some(true) {
                return Err(ConfigError::Decode {
                    kind: DecodeErrorKind::InvalidValue,
                    path: format!("{}.{field}", CallOptions::PATH),
                    message: "needs capture_model_calls: true".to_owned(),
                });
            }
        }
        if self.model_call_body_bytes == Some(0) {
            return Err(ConfigError::Decode {
                kind: DecodeErrorKind::InvalidValue,
                path: format!("{}.model_call_body_bytes", CallOptions::PATH),
                message: "must be at least 1".to_owned(),
            });
        }
        if self.launch_collector.is_some() && self.streaming != Some(true) {
            return Err(ConfigError::Invalid(ConfigFinding {
                rule: ConfigRule::LaunchCollectorWithoutStreaming,
                path: format!("{}.launch_collector", CallOptions::PATH),
                detail: None,
            }));
        }
        if let Some(seconds) = self.completion_wait_timeout
            && !seconds::in_range(seconds, MAX_TIMEOUT_SECONDS)
        {
            return Err(ConfigError::Invalid(ConfigFinding {
                rule: ConfigRule::TimeoutSecondsInvalid,
                path: format!("{}.completion_wait_timeout", CallOptions::PATH),
                detail: None,
            }));
        }
        if let Some(binding) = &self.binding {
            let fields = [
                ("name", Some(&binding.name)),
                ("version", Some(&binding.version)),
                ("runtime_name", binding.runtime_name.as_ref()),
                ("runtime_version", binding.runtime_version.as_ref()),
            ];
            for (field, value) in fields {
                if let Some(value) = value
                    && (value.trim().is_empty() || value.len() > BINDING_FIELD_MAX_BYTES)
                {
                    return Err(ConfigError::Decode {
                        kind: DecodeErrorKind::InvalidValue,
                        path: format!("{}.binding.{field}", CallOptions::PATH),
                        message: "must be non-blank and at most 256 bytes".to_owned(),
                    });
                }
            }
        }
        if let Some(seconds) = self.start_timeout_seconds
            && !seconds::in_range(seconds, MAX_TIMEOUT_SECONDS)
        {
            return Err(ConfigError::Invalid(ConfigFinding {
                rule: ConfigRule::TimeoutSecondsInvalid,
                path: format!("{}.start_timeout_seconds", CallOptions::PATH),
                detail: None,
            }));
        }
        let paths = [
            ("base_dir", &self.base_dir),
            ("python_prefix", &self.python_prefix),
            ("python_interpreter", &self.python_interpreter),
        ];
        for (field, value) in paths {
            if value.as_deref().is_some_and(|path| path.contains('\0')) {
                return Err(ConfigError::Decode {
                    kind: DecodeErrorKind::InvalidValue,
                    path: format!("{}.{field}", CallOptions::PATH),
                    message: "a path must not contain a NUL byte".to_owned(),
                });
            }
        }
        Ok(())
    }

    /// `start_timeout_seconds` as a duration, when set and valid.
    pub fn start_timeout(&self) -> Option<Duration> {
        self.start_timeout_seconds
            .and_then(|seconds| seconds::duration(seconds, MAX_TIMEOUT_SECONDS))
    }
}

/// Prefixes the path of a decode error or finding with `options`.
fn under_options(error: ConfigError) -> ConfigError {
    let join = |path: String| {
        if path.is_empty() || path == "." {
            CallOptions::PATH.to_owned()
        } else {
            format!("{}.{path}", CallOptions::PATH)
        }
    };
    match error {
        ConfigError::Decode {
            kind,
            path,
            message,
        } => ConfigError::Decode {
            kind,
            path: join(path),
            message,
        },
        ConfigError::Invalid(finding) => ConfigError::Invalid(ConfigFinding {
            path: join(finding.path),
            ..finding
        }),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_document_is_the_defaults() {
        assert_eq!(
            CallOptions::from_json_str("{}").unwrap(),
            CallOptions::default()
        );
        let full =
            CallOptions::from_json_str(r#"{"base_dir": "/w", "expected_descriptor_sha256": "ab"}"#)
                .unwrap();
        assert_eq!(full.base_dir.as_deref(), Some("/w"));
        assert_eq!(full.expected_descriptor_sha256.as_deref(), Some("ab"));
        let python = CallOptions::from_json_str(
            r#"{"python_prefix": "/venv", "python_interpreter": "/venv/bin/python"}"#,
        )
        .unwrap();
        assert_eq!(python.python_prefix.as_deref(), Some("/venv"));
        assert_eq!(
            python.python_interpreter.as_deref(),
            Some("/venv/bin/python")
        );
    }

    #[test]
    fn errors_name_the_path_under_options() {
        let unknown = CallOptions::from_json_str(r#"{"timeout": 1}"#).unwrap_err();
        assert_eq!(unknown.code(), "unknown_field");
        assert_eq!(unknown.path(), Some("options.timeout"));
        let wrong_type = CallOptions::from_json_str(r#"{"base_dir": 5}"#).unwrap_err();
        assert_eq!(wrong_type.code(), "invalid_type");
        assert_eq!(wrong_type.path(), Some("options.base_dir"));
        let not_object = CallOptions::from_json_str("[]").unwrap_err();
        assert_eq!(not_object.path(), Some("options"));
        let syntax = CallOptions::from_json_str("{nope").unwrap_err();
        assert_eq!(syntax.code(), "invalid_json");
    }

    #[test]
    fn start_timeout_is_a_positive_finite_number() {
        let options = CallOptions::from_json_str(r#"{"start_timeout_seconds": 0.25}"#).unwrap();
        assert_eq!(options.start_timeout(), Some(Duration::from_millis(250)));
        assert_eq!(CallOptions::default().start_timeout(), None);
        let longest = CallOptions::from_json_str(r#"{"start_timeout_seconds": 1e9}"#).unwrap();
        assert_eq!(
            longest.start_timeout(),
            Some(Duration::from_secs(1_000_000_000))
        );
        for bad in ["0", "-1", "0.0", "1e300", "1000000001"] {
            let error =
                CallOptions::from_json_str(&format!(r#"{{"start_timeout_seconds": {bad}}}"#))
                    .unwrap_err();
            assert_eq!(error.code(), "invalid_timeout_seconds", "{bad}");
            assert_eq!(error.path(), Some("options.start_timeout_seconds"));
        }
        let wrong_type =
            CallOptions::from_json_str(r#"{"start_timeout_seconds": "90"}"#).unwrap_err();
        assert_eq!(wrong_type.code(), "invalid_type");
    }

    #[test]
    fn stderr_log_bytes_is_at_least_one() {
        let options = CallOptions::from_json_str(r#"{"stderr_log_bytes": 4096}"#).unwrap();
        assert_eq!(options.stderr_log_bytes, Some(4096));
        for bad in [
            "0",
            "-1",
            "1.5",
            "1073741825",
            "18446744073709551615",
            "1e30",
        ] {
            let error = CallOptions::from_json_str(&format!(r#"{{"stderr_log_bytes": {bad}}}"#))
                .unwrap_err();
            assert_eq!(error.path(), Some("options.stderr_log_bytes"), "{bad}");
        }
    }

    #[test]
    fn the_collector_memory_budget_is_at_least_one_record() {
        let options =
            CallOptions::from_json_str(r#"{"collector_memory_budget_bytes": 8388608}"#).unwrap();
        assert_eq!(options.collector_memory_budget_bytes, Some(8 * 1024 * 1024));
        for bad in ["0", "1048575", "-1", "1.5", "\"64MiB\""] {
            let error = CallOptions::from_json_str(&format!(
                r#"{{"collector_memory_budget_bytes": {bad}}}"#
            ))
            .unwrap_err();
            assert_eq!(
                error.path(),
                Some("options.collector_memory_budget_bytes"),
                "{bad}"
            );
        }
    }

    #[test]
    fn binding_identity_is_checked() {
        let options = CallOptions::from_json_str(
            r#"{"binding": {"name": "fabric-core", "version": "0.1.0", "runtime_name": "cpython"}}"#,
        )
        .unwrap();
        assert_eq!(
            options.binding.as_ref().map(|b| b.name.as_str()),
            Some("fabric-core")
        );
        let blank = CallOptions::from_json_str(r#"{"binding": {"name": " ", "version": "1"}}"#)
            .unwrap_err();
        assert_eq!(blank.path(), Some("options.binding.name"));
        let long = format!(
            r#"{{"binding": {{"name": "n", "version": "{}"}}}}"#,
            "9".repeat(257)
        );
        let error = CallOptions::from_json_str(&long).unwrap_err();
        assert_eq!(error.path(), Some("options.binding.version"));
        let unknown =
            CallOptions::from_json_str(r#"{"binding": {"name": "n", "version": "1", "x": 1}}"#)
                .unwrap_err();
        assert_eq!(unknown.path(), Some("options.binding.x"));
    }

    #[test]
    fn messages_never_echo_values() {
        let error = CallOptions::from_json_str(r#"{"base_dir": ["sekrit"]}"#).unwrap_err();
        assert!(!error.to_string().contains("sekrit"), "{error}");
    }
}
