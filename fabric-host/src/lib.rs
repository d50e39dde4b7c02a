//! Adapter host processes on one mio reactor; runtimes, invocations, run(); the Fabric facade.
//!
//! Every adapter host is a child process in its own session and process group, speaking
//! the persistent local-host lifecycle protocol (one JSON object per line) over its
//! stdin/stdout. All hosts of the process share one reactor thread; public calls block the
//! calling thread only. See `docs/hosting.md` for the rules (launch, faults, stop, results).
//!
//! The facade ([`Fabric`]) is what the CLI and the C ABI call:
//!
//! ```no_run
//! use fabric_config::{FabricConfig, RunRequest};
//! use fabric_host::{Fabric, RunOptions};
//!
//! let config = FabricConfig::parse(&std::fs::read_to_string("examples/hello/fabric.json")?)?;
//! let options = RunOptions::with_base_dir("examples/hello");
//! let fabric = Fabric::new();
//!
//! // start + invoke + stop
//! let result = fabric.run(&config, RunRequest::new("Hi"), &options)?;
//! assert!(result.runtime_id.starts_with("runtime-"));
//!
//! // a multi-turn runtime
//! let runtime = fabric.start_runtime(&config, &options)?;
//! let first = runtime.invoke(RunRequest::new("Hi, I'm Ada."))?;
//! let second = runtime.invoke(RunRequest::new("What did I just say?"))?;
//! // every local result carries system_stats and resource_snapshot (docs/stats.md)
//! let snapshot = runtime.resource_snapshot()?;
//! // health (docs/health.md): every outcome is a report
//! let request = fabric_config::health::CheckRequest::runtime(runtime.runtime_id());
//! let report = fabric.check(None, &request)?;
//! let stopped = runtime.stop();
//! # let _ = (first, second, snapshot, report, stopped);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`Host`] is the lower layer: one process and its request/response lines.
//!
//! ```no_run
//! use std::time::Duration;
//! use fabric_host::{Host, HostSpec, StopPolicy};
//! use fabric_config::Stage;
//!
//! let mut spec = HostSpec::new("my-adapter-host");
//! spec.env = std::env::vars_os().collect();
//! let host = Host::launch(spec)?;
//! let payload = serde_json::json!({"runtime_context": {"runtime_id": "runtime-1"}});
//! let output = host.call("start", &payload, Stage::Start, Duration::from_secs(90))?;
//! let report = host.stop(Some(&serde_json::json!({"runtime_id": "runtime-1"})), StopPolicy::default());
//! # let _ = (output, report);
//! # Ok::<(), fabric_host::HostError>(())
//! ```

#![forbid(unsafe_code)]

mod cleanup;
mod collect;
mod env_check;
mod environment;
mod error;
mod evidence;
mod extensions;
mod fabric;
#[doc(hidden)]
pub mod fuzz;
mod health_workers;
mod home;
mod host;
mod hosts;
mod ids;
mod launch;
mod live;
mod prewarm;
mod result;
mod runtime;
mod served;
mod service;
mod stream;
mod telemetry;
mod workspace;

pub use cleanup::{ShutdownReport, kill_all_hosts, kill_leftovers, settle, shutdown};
pub use environment::Environment;
pub use error::{Diagnostics, ErrorClass, HostError, ProtocolViolation};
pub use fabric::{Fabric, RunOptions};
pub use fabric_config::handles::{
    EnvironmentInfo, PrewarmInfo, RuntimeInfo, RuntimeState, RuntimeStatusInfo,
};
pub use fabric_gateway::CaptureOptions;
pub use fabric_reactor::stderr::DEFAULT_STDERR_LOG_BYTES;
pub use fabric_relay::StreamNext;
pub use fabric_relay::streaming::RelayStreaming;
pub use fabric_sandbox::provider::Collected as CollectedArtifacts;
pub use host::{DEFAULT_MAX_LINE_BYTES, Host, HostCall, HostSpec, StopReport};
pub use hosts::{EngineStats, Escalation, Notify, StopPolicy, engine_stats};
pub use prewarm::{MAX_PREWARM_HOSTS, Prewarm};
pub use runtime::{DEFAULT_TIMEOUT_SECONDS, PendingInvoke, Runtime, RuntimeOptions};
pub use served::{RuntimeServer, SERVER_SOURCE_ID};
pub use service::Service;
pub use stream::{AtofStream, COMPLETION_WAIT, OpenAiStream, PullStream, StreamBatch};
