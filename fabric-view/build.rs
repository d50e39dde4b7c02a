//! Embeds every file under `assets/` (but `README.md`) in the library: writes the table
//! `ASSETS: &[(&str, &[u8])]` (name relative to `assets/`, bytes through `include_bytes!`)
//! into `OUT_DIR/assets.rs`. The page is built by `fabric-view/ui` into `assets/`; the cargo
//! build only embeds what is there (no network, no bundler at build time).

use std::path::{Path, PathBuf};

fn walk(dir: &Path, base: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            walk(&path, base, out);
        } else if kind.is_file() {
            let name = path
                .strip_prefix(base)
                .expect("under assets/")
                .to_string_lossy()
                .replace('\\', "/");
            if name != "README.md" {
                out.push((name, path));
            }
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("manifest dir"));
    let assets = manifest.join("assets");
    println!("cargo:rerun-if-changed={}", assets.display());
    let mut files = Vec::new();
    walk(&assets, &assets, &mut files);
    files.sort();
    let mut table = String::from("pub(crate) static ASSETS: &[(&str, &[u8])] = &[\n");
    for (name, path) in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        table.push_str(&format!(
            "    ({name:?}, include_bytes!({:?})),\n",
            path.display().to_string()
        ));
    }
    table.push_str("];\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("out dir")).join("assets.rs");
    std::fs::write(out, table).expect("write the asset table");
}
