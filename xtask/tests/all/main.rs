//! Every integration test of `xtask`, in one binary (`cargo test -p xtask --test all`;
//! `-- drift::` runs one module).

mod binding_codes;
mod drift;
mod layers;
