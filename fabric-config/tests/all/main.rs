//! Every integration test of `fabric-config`, in one binary (`cargo test -p fabric-config
//! --test all`; `-- rules::` runs one module). `error_codes.rs` stays its own binary.

mod corpus;
mod helpers;
mod messages;
mod provenance;
mod rules;
mod schemas;
mod support;
