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
