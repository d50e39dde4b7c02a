//! Runtimes, run() and environments through the Rust facade, with the scripted adapter.

#[path = "../support/mod.rs"]
mod support;

mod environments;
mod failures;
mod fixtures;
mod results;
mod stopping;
