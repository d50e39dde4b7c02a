//! Drives the built `fabric-adapter-scripted` binary over stdin/stdout.
//!
//! Responses are decoded here independently of the adapter's encoder: each stdout line
//! must be one JSON object `{"operation", "outcome"}` and nothing else may reach stdout.

mod adapter;
mod conversation;
mod directives;
mod health;
mod lifecycle;
mod resources;
