//! The adapters compiled into `fabric`: the scripted reference adapter (`fabric.scripted`),
//! served by the hidden command `fabric __adapter scripted`.
//!
//! `fabric` registers their descriptors with discovery when it starts
//! ([`fabric_plan::register_builtin_adapters`]), so the bundled default
//! (`fabric run examples/hello/fabric.json`) runs from any copy of the binary, with or
//! without a bundled adapters directory; an installed directory's `launch.sh` reaches the
//! same code through `<prefix>/bin/fabric __adapter scripted`.

use clap::ValueEnum;
use fabric_plan::BuiltinAdapter;

/// The hidden command that serves a compiled-in adapter's host protocol on stdin/stdout.
pub const COMMAND: &str = "__adapter";

/// Every adapter compiled into `fabric` (the runner arguments spell [`COMMAND`] and the name).
const ADAPTERS: &[BuiltinAdapter] = &[BuiltinAdapter {
    descriptor: fabric_adapter_scripted::DESCRIPTOR,
    args: &[COMMAND, "scripted"],
}];

/// A compiled-in adapter.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Name {
    /// `fabric.scripted`, the credential-free reference adapter (docs/adapters.md).
    Scripted,
}

/// Offers the compiled-in adapters to discovery.
pub fn register() {
    fabric_plan::register_builtin_adapters(ADAPTERS);
}

/// Serves `name`'s host protocol until the host is done, then exits with its status.
pub fn serve(name: Name) -> ! {
    match name {
        Name::Scripted => std::process::exit(fabric_adapter_scripted::serve_stdio()),
    }
}
