//! `fabric-adapter-scripted`: a credential-free reference adapter (`fabric.scripted`).
//!
//! Speaks the persistent local-host lifecycle protocol on stdin/stdout: one JSON request
//! per line in, exactly one JSON response per line out, nothing else on stdout.
//! Replies come from `harness.settings` (scripted replies or echo); per-invoke directives
//! in `request.context.scripted` (or `request.input.scripted`) make it fail, sleep, write
//! artifacts, use memory/CPU, spawn children or break the protocol on purpose.
//! See `docs/adapters.md`.

#![forbid(unsafe_code)]

mod atof;
mod contract;
mod evidence;
mod health;
mod host;
mod load;
mod runtime;
mod service;
mod settings;
mod stream;
mod wire;

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--version") {
        eprintln!("fabric-adapter-scripted {}", env!("CARGO_PKG_VERSION"));
        return;
    }
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let health = health::Health::from_env();
    let status = host::serve(stdin.lock(), stdout.lock(), health);
    std::process::exit(status);
}
