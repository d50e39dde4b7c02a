//! `include/fabric.h`: cbindgen over `fabric-ffi/src` with `cbindgen.toml`.
//!
//! cbindgen is pinned in the workspace (`=0.29.4`): another version writes another header,
//! which would read as drift.

use std::path::Path;

pub const PATH: &str = "include/fabric.h";

pub fn render(root: &Path) -> Result<String, String> {
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml"))
        .map_err(|error| format!("cbindgen.toml: {error}"))?;
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join("fabric-ffi/src/lib.rs"))
        .generate()
        .map_err(|error| format!("cbindgen over fabric-ffi/src: {error}"))?;
    let mut buffer = Vec::new();
    bindings.write(&mut buffer);
    String::from_utf8(buffer).map_err(|error| format!("cbindgen wrote non-UTF-8: {error}"))
}
