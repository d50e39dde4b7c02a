//! Every integration test of `fabric-adapter-scripted`, in one binary (`cargo test -p
//! fabric-adapter-scripted --test all`; `-- protocol::` runs one module).

mod atof;
mod differential;
mod protocol;
