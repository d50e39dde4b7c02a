//! The integration tests of `fabric-gateway`, one binary (modules by concern).

mod forward;
mod heads;
mod keep_alive;
mod load;
mod measure;
mod stub;
