//! The integration tests of `fabric-reactor`, one binary (modules by concern).

mod http;
mod through;
