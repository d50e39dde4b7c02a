//! `cfg(fabric_dist)` for the `dist` profile (scripts/package.sh): shipped builds do not fall
//! back to the adapters of the checkout they were built from (src/bundled.rs).

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-check-cfg=cfg(fabric_dist)");
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    // OUT_DIR is <target-dir>/[<triple>/]<profile>/build/<package>-<hash>/out.
    let profile_dir = Path::new(&out_dir)
        .ancestors()
        .nth(3)
        .and_then(Path::file_name);
    if profile_dir.is_some_and(|name| name == "dist") {
        println!("cargo:rustc-cfg=fabric_dist");
    }
}
