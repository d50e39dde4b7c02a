//! `fabric-adapter-scripted`: the scripted reference adapter (`fabric.scripted`) as its own
//! executable; the protocol and behaviour are in the library (`lib.rs`, `docs/adapters.md`).

#![forbid(unsafe_code)]

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--version") {
        eprintln!("{}", fabric_adapter_scripted::version());
        return;
    }
    std::process::exit(fabric_adapter_scripted::serve_stdio());
}
