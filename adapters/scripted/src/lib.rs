//! `fabric.scripted`: a credential-free reference adapter, as a library.
//!
//! Speaks the persistent local-host lifecycle protocol on stdin/stdout: one JSON request
//! per line in, exactly one JSON response per line out, nothing else on stdout.
//! Replies come from `harness.settings` (scripted replies or echo); per-invoke directives
//! in `request.context.scripted` (or `request.input.scripted`) make it fail, sleep, write
//! artifacts, use memory/CPU, spawn children or break the protocol on purpose.
//! See `docs/adapters.md`.
//!
//! Two executables serve it: `fabric-adapter-scripted` (this crate's binary, which the
//! descriptor's `launch.sh` finds in a cargo target directory; tests and benches use it) and
//! the `fabric` CLI itself (`fabric __adapter scripted`, a hidden command), so every way of
//! getting the CLI can run the bundled default without a second binary. The CLI also
//! compiles [`DESCRIPTOR`] in, for when no bundled adapters directory is installed.
//!
//! ```
//! let descriptor: serde_json::Value =
//!     serde_json::from_str(fabric_adapter_scripted::DESCRIPTOR).unwrap();
//! assert_eq!(descriptor["adapter_id"], fabric_adapter_scripted::ADAPTER_ID);
//! ```

#![forbid(unsafe_code)]

mod atof;
mod contract;
mod evidence;
mod health;
mod host;
mod load;
mod observer;
mod runtime;
mod service;
mod settings;
mod stream;
mod wire;

/// The adapter id the descriptor declares.
pub const ADAPTER_ID: &str = "fabric.scripted";

/// The adapter's descriptor (`adapters/scripted/scripted.fabric-adapter.json`), as shipped.
pub const DESCRIPTOR: &str = include_str!("../scripted.fabric-adapter.json");

/// Serves the lifecycle protocol on this process's stdin and stdout until the host's work
/// is done, and returns the exit status for the process (0 after `stop` or stdin EOF).
/// Health checks listen when the environment asks for them (`docs/health.md`).
pub fn serve_stdio() -> i32 {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let health = health::Health::from_env();
    host::serve(stdin.lock(), stdout.lock(), health)
}

/// The version line `--version` prints.
pub fn version() -> String {
    format!("fabric-adapter-scripted {}", env!("CARGO_PKG_VERSION"))
}
