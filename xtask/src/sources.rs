//! Walks the sources for string-literal error codes and stages outside the registry.
//!
//! Looked at: Rust `src/` of every crate (`ErrorInfo::new(stage, "code"` and the arms of
//! `fn code`), and the bindings' sources (`code="…"`, `code: "…"`, `Code: "…"` and the
//! same for stages). Tests are not walked: they may name codes that must not exist.

use std::path::{Path, PathBuf};

/// One literal that is not registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub file: PathBuf,
    pub line: usize,
    pub kind: &'static str,
    pub literal: String,
}

const SOURCE_DIRS: &[&str] = &[
    "fabric-config/src",
    "fabric-plan/src",
    "fabric-host/src",
    "fabric-health/src",
    "fabric-stats/src",
    "fabric-ffi/src",
    "fabric-cli/src",
    "bindings/python/src/fabric_core",
    "bindings/typescript/src",
    "bindings/go",
];

/// The `.rs`, `.py`, `.ts` and non-test `.go` files under `dir`, outside test, example,
/// fixture and dependency directories.
pub(crate) fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(
                name.as_str(),
                "test" | "tests" | "examples" | "node_modules" | "fixtures"
            ) {
                files(&path, out);
            }
        } else if (name.ends_with(".rs") || name.ends_with(".py") || name.ends_with(".ts"))
            || (name.ends_with(".go") && !name.ends_with("_test.go"))
        {
            out.push(path);
        }
    }
}

/// The snake_case literal that starts right after `prefix` in `text` at `at`, if any.
fn literal_after(text: &str, at: usize) -> Option<&str> {
    let rest = &text[at..];
    let rest = rest.strip_prefix('"')?;
    let end = rest.find('"')?;
    let literal = &rest[..end];
    let ok = !literal.is_empty()
        && literal
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    ok.then_some(literal)
}

fn scan(
    text: &str,
    needle: &str,
    kind: &'static str,
    hits: &mut Vec<(usize, &'static str, String)>,
) {
    let mut from = 0;
    while let Some(found) = text[from..].find(needle) {
        let at = from + found + needle.len();
        let skip = text[at..].len() - text[at..].trim_start().len();
        if let Some(literal) = literal_after(text, at + skip) {
            let line = text[..at].matches('\n').count() + 1;
            hits.push((line, kind, literal.to_owned()));
        }
        from = at;
    }
}

/// Literal codes (`kind == "code"`) and stages (`"stage"`) in one file's text.
pub fn literals(text: &str, rust: bool) -> Vec<(usize, &'static str, String)> {
    let mut hits = Vec::new();
    for needle in ["code=", "code: ", "Code: ", "code:", "Code:"] {
        scan(text, needle, "code", &mut hits);
    }
    for needle in ["stage=", "stage: ", "Stage: ", "stage:", "Stage:"] {
        scan(text, needle, "stage", &mut hits);
    }
    if rust {
        // `ErrorInfo::new(Stage::X, "code"` and `=> "code"` inside `fn code`.
        let mut from = 0;
        while let Some(found) = text[from..].find("ErrorInfo::new(") {
            let at = from + found + "ErrorInfo::new(".len();
            if let Some(comma) = text[at..].find(',') {
                let after = at + comma + 1;
                let skip = text[after..].len() - text[after..].trim_start().len();
                if let Some(literal) = literal_after(text, after + skip) {
                    let line = text[..at].matches('\n').count() + 1;
                    hits.push((line, "code", literal.to_owned()));
                }
            }
            from = at;
        }
        let mut from = 0;
        while let Some(found) = text[from..].find("fn code(") {
            let start = from + found;
            let end = text[start..]
                .find("\n    }\n")
                .map_or(text.len(), |e| start + e);
            let offset = text[..start].matches('\n').count();
            let mut arms = Vec::new();
            scan(&text[start..end], "=> ", "code", &mut arms);
            hits.extend(
                arms.into_iter()
                    .map(|(line, kind, literal)| (line + offset, kind, literal)),
            );
            from = end;
        }
    }
    hits.sort();
    hits.dedup();
    hits
}

/// Every literal code or stage in the walked sources that the registry does not know.
pub fn unregistered(root: &Path) -> Vec<Finding> {
    let codes: Vec<String> = fabric_config::codes::all()
        .iter()
        .map(|c| c.code.to_owned())
        .collect();
    let stages: Vec<&str> = fabric_config::codes::STAGES
        .iter()
        .map(|s| s.as_str())
        .collect();
    let mut paths = Vec::new();
    for dir in SOURCE_DIRS {
        files(&root.join(dir), &mut paths);
    }
    paths.sort();
    let mut findings = Vec::new();
    for path in paths {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if text.contains("@generated by xtask") || text.contains("Code generated by xtask") {
            continue;
        }
        let rust = path.extension().is_some_and(|e| e == "rs");
        for (line, kind, literal) in literals(&text, rust) {
            let known = match kind {
                "stage" => stages.contains(&literal.as_str()),
                _ => codes.contains(&literal),
            };
            if !known {
                findings.push(Finding {
                    file: path.strip_prefix(root).unwrap_or(&path).to_path_buf(),
                    line,
                    kind,
                    literal,
                });
            }
        }
    }
    findings
}

/// Where a registered code may be spelled: its declaration in the registry, and the config
/// rules' table.
const DECLARATIONS: &[&str] = &[
    "fabric-config/src/codes/",
    "fabric-config/src/error/rules.rs",
];

/// The Rust sources of every crate of the workspace (`<crate>/src/**.rs`).
fn rust_sources(root: &Path) -> Vec<PathBuf> {
    let mut crates: Vec<PathBuf> = Vec::new();
    for dir in [root.to_path_buf(), root.join("adapters")] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.join("Cargo.toml").is_file() && path.join("src").is_dir() {
                crates.push(path.join("src"));
            }
        }
    }
    let mut paths = Vec::new();
    for src in crates {
        files(&src, &mut paths);
    }
    paths.retain(|path| path.extension().is_some_and(|e| e == "rs"));
    paths.sort();
    paths
}

/// The `"snake_case"` string literals of `text` before its first `#[cfg(test)]`, outside
/// comments (unit tests and doc examples may spell codes: they check the wire), with their
/// lines.
pub fn string_literals(text: &str) -> Vec<(usize, String)> {
    let code: String = text
        .split("#[cfg(test)]")
        .next()
        .unwrap_or_default()
        .lines()
        .map(|line| {
            if line.trim_start().starts_with("//") {
                ""
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let code = code.as_str();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(start) = code[from..].find('"') {
        let at = from + start;
        // Skip char literals like '"' and escaped quotes inside other strings.
        if at > 0 && matches!(code.as_bytes()[at - 1], b'\'' | b'\\') {
            from = at + 1;
            continue;
        }
        let Some(len) = code[at + 1..].find('"') else {
            break;
        };
        let literal = &code[at + 1..at + 1 + len];
        if !literal.is_empty()
            && literal
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            let line = code[..at].matches('\n').count() + 1;
            found.push((line, literal.to_owned()));
            from = at + 1 + len + 1;
        } else {
            // Not a code: resume after the opening quote so a string's end is never read
            // as the next one's start.
            from = at + 1 + len + 1;
        }
    }
    found
}

/// Every string literal in the workspace's Rust sources that spells a registered code
/// outside its declaration: code must name the registry's constant
/// (`fabric_config::codes::RUNTIME_BUSY`) or the rule (`ConfigRule::X.code()`).
pub fn spelled_outside(root: &Path) -> Vec<Finding> {
    let codes: std::collections::HashSet<&'static str> =
        fabric_config::codes::all().iter().map(|c| c.code).collect();
    let mut findings = Vec::new();
    for path in rust_sources(root) {
        let relative = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
        let shown = relative.to_string_lossy();
        // `tests.rs` files are unit-test modules (`#[cfg(test)] mod tests;`).
        if DECLARATIONS.iter().any(|d| shown.starts_with(d)) || shown.ends_with("/tests.rs") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for (line, literal) in string_literals(&text) {
            if codes.contains(literal.as_str()) {
                findings.push(Finding {
                    file: relative.clone(),
                    line,
                    kind: "code",
                    literal,
                });
            }
        }
    }
    findings
}
