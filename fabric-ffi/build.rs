//! Gives the shipped shared library a versioned soname (`libfabric_ffi.so.<major>.<minor>` while
//! the major version is 0, as cargo-c does), so programs linked against the C SDK record the ABI
//! version they were built for. Only the `dist` profile (scripts/package.sh) sets it: in-tree
//! builds keep loading `target/<profile>/libfabric_ffi.so` by path.

use std::env;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out_dir = env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    // OUT_DIR is <target-dir>/[<triple>/]<profile>/build/<package>-<hash>/out.
    let profile_dir = Path::new(&out_dir)
        .ancestors()
        .nth(3)
        .and_then(Path::file_name)
        .and_then(|name| name.to_str());
    let linux = env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if profile_dir == Some("dist") && linux {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{}", soname());
    }
}

/// `libfabric_ffi.so.0.<minor>` before 1.0, `libfabric_ffi.so.<major>` after.
fn soname() -> String {
    let major = env::var("CARGO_PKG_VERSION_MAJOR").expect("cargo sets the package version");
    let minor = env::var("CARGO_PKG_VERSION_MINOR").expect("cargo sets the package version");
    if major == "0" {
        format!("libfabric_ffi.so.0.{minor}")
    } else {
        format!("libfabric_ffi.so.{major}")
    }
}
