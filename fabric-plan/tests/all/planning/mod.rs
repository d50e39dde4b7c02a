//! Planning rules, each with an accepted and a rejected case, across the 16 catalog
//! descriptors, both catalog targets and the repository fixtures.
//!
//! The catalog is the one installed with upstream's `nemo-fabric-adapter-catalog` 0.5.0 and
//! the expected fingerprints are computed by upstream at test time (`tests/upstream/mod.rs`);
//! tests that need them fail without the venv, unless `FABRIC_ALLOW_SKIPS=1`.

mod discovery;
mod fields;
mod reports;
mod schemas;
mod targets;
mod world;
