//! Shared helpers of the fabric-plan tests: the upstream 0.5.0 oracles and their skip policy
//! (see `tests/upstream/mod.rs` at the workspace root).

#![allow(dead_code)]

#[path = "../../../../tests/upstream/mod.rs"]
pub mod upstream;
