//! Every integration test of `fabric-fuzz`, in one binary (`cargo test -p fabric-fuzz --test
//! all`; `-- corpus::` runs one module).

mod corpus;
