//! One accepted and one rejected case per config rule, plus decode-path and secret tests.

mod cases;
mod decoding;
mod env;
mod models;
mod secrets;
mod selection;
mod stats_and_relay;
mod tools;
