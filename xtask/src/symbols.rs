//! The C functions the Python and TypeScript bindings name, checked against the header.
//!
//! A use is a `.fabric_x` attribute or property access (`library.fabric_plan(...)`,
//! `this.functions.fabric_stream_next_batch`) or a whole `"fabric_x"` string literal
//! (`call("fabric_plan", ...)`), in the module that declares the native functions (Python
//! `_ffi.py`, TypeScript `native.ts`) and in every module that mentions it. Other modules
//! are not read: there `"fabric_owned"` is an enum value, not a function. (The Go binding
//! includes the header itself, so its compiler does this check.)

use std::path::{Path, PathBuf};

use crate::cdecl::Prototype;

/// A binding's sources, its declaring module and how another module names that module.
const BINDINGS: &[(&str, &str, &str)] = &[
    ("bindings/python/src/fabric_core", "_ffi.py", "_ffi"),
    ("bindings/typescript/src", "native.ts", "/native\""),
];

/// One function name a binding uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Use {
    pub file: PathBuf,
    pub line: usize,
    pub symbol: String,
}

fn identifier(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'
}

/// `(line, name)` of every function name `text` uses.
pub fn names(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices("fabric_") {
        let before = text[..at].chars().next_back();
        let rest = &text[at..];
        let end = rest.find(|c: char| !identifier(c)).unwrap_or(rest.len());
        let after = rest[end..].chars().next();
        let quoted = before == Some('"') && after == Some('"');
        if before == Some('.') || quoted {
            let line = text[..at].matches('\n').count() + 1;
            found.push((line, rest[..end].to_owned()));
        }
    }
    found
}

/// Every function name the bindings use.
pub fn uses(root: &Path) -> Vec<Use> {
    let mut all = Vec::new();
    for (dir, declaring, mention) in BINDINGS {
        let mut paths = Vec::new();
        crate::sources::files(&root.join(dir), &mut paths);
        paths.sort();
        for path in paths {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            if !path.ends_with(declaring) && !text.contains(mention) {
                continue;
            }
            let file = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
            all.extend(names(&text).into_iter().map(|(line, symbol)| Use {
                file: file.clone(),
                line,
                symbol,
            }));
        }
    }
    all
}

/// The uses of a function `prototypes` does not declare.
pub fn undeclared(root: &Path, prototypes: &[Prototype]) -> Vec<Use> {
    uses(root)
        .into_iter()
        .filter(|used| !prototypes.iter().any(|p| p.name == used.symbol))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_attribute_accesses_and_whole_literals() {
        let text = "from fabric_core import _ffi\nlib.fabric_plan(x)\ncall(\"fabric_run\", [])\n\
            \"fabric_core.client\"\nf\"module 'fabric_core'\"\n# see fabric_doctor\n";
        let found = names(text);
        assert_eq!(
            found,
            [(2, "fabric_plan".to_owned()), (3, "fabric_run".to_owned())]
        );
    }
}
