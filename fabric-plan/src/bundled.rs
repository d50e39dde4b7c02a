//! The `bundled` discovery source: the reference adapters shipped with the core itself.
//!
//! [`bundled_root`], first match wins: `$FABRIC_BUNDLED_ADAPTERS`; else, for the file holding
//! this code (the `libfabric_ffi` shared library a binding loaded, or the executable it is
//! linked into) and then the running executable, the first of its directory and that
//! directory's five parents holding `adapters/` or `share/nemo-fabric/adapters/`.
//!
//! So a cargo build at `target/debug/fabric` finds `<repo>/adapters`, an installed C SDK at
//! `<prefix>/lib/libfabric_ffi.so` or CLI at `<prefix>/bin/fabric` finds
//! `<prefix>/share/nemo-fabric/adapters`, the wheel's `<venv>/bin/fabric` finds
//! `<venv>/share/nemo-fabric/adapters`, and the npm package's
//! `prebuilds/<platform>-<arch>/libfabric_ffi.so` or `bin/fabric` finds the package's
//! `adapters/`. A binary built in one checkout and run from another place uses the adapters
//! of where it runs, never those of the tree it was built from.
//!
//! `$FABRIC_BUNDLED_ADAPTERS` replaces the whole `bundled` source ([`bundled_overridden`]).
//! Otherwise [`development_root`] is the fallback searched last (after the adapters compiled into the
//! executable, `builtin.rs`): in development builds (not the `dist` profile) and without
//! `$FABRIC_BUNDLED_ADAPTERS`, the `adapters/` directory of the checkout the crate was built
//! from, when it still exists. It serves a development library copied out of the tree, e.g.
//! into a virtual environment by `scripts/setup.sh`, whose upward walk stops at the
//! environment's `share/nemo-fabric/adapters` (other packages' adapters).

use std::path::PathBuf;
use std::sync::OnceLock;

use crate::discovery::BUNDLED_ADAPTERS_ENV;

/// Parent directories searched above each anchor directory.
const PARENTS: usize = 5;

/// The bundled adapters directory (see the module docs for the rule).
pub fn bundled_root() -> Option<PathBuf> {
    if let Some(root) = std::env::var_os(BUNDLED_ADAPTERS_ENV).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(root));
    }
    let anchors = anchors();
    anchors.iter().find_map(|anchor| {
        anchor.ancestors().take(PARENTS + 1).find_map(|dir| {
            [
                dir.join("adapters"),
                dir.join("share").join("nemo-fabric").join("adapters"),
            ]
            .into_iter()
            .find(|candidate| candidate.is_dir())
        })
    })
}

/// The development fallback (see the module docs for the rule).
pub fn development_root() -> Option<PathBuf> {
    if bundled_overridden() {
        return None;
    }
    checkout_adapters()
}

/// Whether `$FABRIC_BUNDLED_ADAPTERS` names the whole `bundled` source: then neither the
/// adapters compiled into the executable nor the development fallback are offered.
pub fn bundled_overridden() -> bool {
    std::env::var_os(BUNDLED_ADAPTERS_ENV).is_some_and(|v| !v.is_empty())
}

#[cfg(not(fabric_dist))]
fn checkout_adapters() -> Option<PathBuf> {
    // The manifest directory's parent, without a `..` component in what is shown.
    let checkout = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()?
        .join("adapters");
    checkout.is_dir().then_some(checkout)
}

/// A shipped build must not depend on (or reveal) the machine it was built on.
#[cfg(fabric_dist)]
fn checkout_adapters() -> Option<PathBuf> {
    None
}

/// The directories of the code file and of the executable (computed once per process).
fn anchors() -> &'static [PathBuf] {
    static ANCHORS: OnceLock<Vec<PathBuf>> = OnceLock::new();
    ANCHORS.get_or_init(|| {
        let mut dirs: Vec<PathBuf> = Vec::new();
        let files = [code_file(), std::env::current_exe().ok()];
        for dir in files.iter().flatten().filter_map(|file| file.parent()) {
            if !dirs.iter().any(|known| known == dir) {
                dirs.push(dir.to_path_buf());
            }
        }
        dirs
    })
}

/// The file mapped at this function's address: the shared library when the core was loaded
/// as one, else the executable. Linux only (`/proc/self/maps`); elsewhere the executable's
/// directory is the only anchor.
fn code_file() -> Option<PathBuf> {
    let address = code_file as fn() -> Option<PathBuf> as usize;
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    mapping_file(&maps, address)
}

/// The path of the `/proc/<pid>/maps` line whose range holds `address`.
fn mapping_file(maps: &str, address: usize) -> Option<PathBuf> {
    maps.lines().find_map(|line| {
        // start-end perms offset dev inode [path]; the path is padded and may hold spaces.
        let mut fields = line.splitn(6, ' ');
        let (start, end) = fields.next()?.split_once('-')?;
        let start = usize::from_str_radix(start, 16).ok()?;
        let end = usize::from_str_radix(end, 16).ok()?;
        if !(start..end).contains(&address) {
            return None;
        }
        let path = fields.nth(4)?.trim_start();
        let path = path.strip_suffix(" (deleted)").unwrap_or(path);
        path.starts_with('/').then(|| PathBuf::from(path))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
55d0c0a00000-55d0c0a10000 r--p 00000000 fd:01 123                        /usr/bin/python3.11
7f1200000000-7f1200400000 r-xp 00010000 fd:01 456                        /opt/site packages/fabric_core/_native.so
7f1200400000-7f1200401000 rw-p 00000000 00:00 0 
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
";

    #[test]
    fn the_mapping_holding_the_address_names_its_file() {
        assert_eq!(
            mapping_file(MAPS, 0x7f12_0000_1234),
            Some(PathBuf::from("/opt/site packages/fabric_core/_native.so"))
        );
        assert_eq!(
            mapping_file(MAPS, 0x55d0_c0a0_0000),
            Some(PathBuf::from("/usr/bin/python3.11"))
        );
        assert_eq!(mapping_file(MAPS, 0x7f12_0040_0010), None, "anonymous");
        assert_eq!(mapping_file(MAPS, 0x7ffd_0000_0010), None, "[stack]");
        assert_eq!(mapping_file(MAPS, 0x10), None, "unmapped");
    }

    #[test]
    fn this_process_maps_its_own_code() {
        let file = code_file().expect("/proc/self/maps names the test executable");
        let exe = std::env::current_exe().unwrap();
        assert_eq!(file.canonicalize().unwrap(), exe.canonicalize().unwrap());
    }
}
