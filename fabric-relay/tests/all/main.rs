//! The integration tests of `fabric-relay`, one binary (modules by concern).

mod collector;
