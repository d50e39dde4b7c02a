//! The `fabric` command-line tool.
fn main() {}
