//! Runtimes, run() and environments through the Rust facade, with the scripted adapter.

mod background_reap;
mod environments;
mod failures;
mod fixtures;
mod results;
mod stopping;
