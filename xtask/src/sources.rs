//! Walks the sources for string-literal error codes and stages outside the registry.
//!
//! Looked at: Rust `src/` of every crate (`ErrorInfo::new(stage, "code"` and the arms of
//! `fn code`), and the bindings' sources (`code="…"`, `code: "…"`, `Code: "…"` and the
//! same for stages). Tests are not walked: they may name codes that must not exist.
//!
//! And for registered codes spelled where they should be named: [`spelled_outside`] in the
//! Rust sources (outside the registry's declarations), [`spelled_outside_bindings`] in the
//! bindings' hand-written sources (outside the generated constants).

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
    "fabric-reactor/src",
    "fabric-host/src",
    "fabric-relay/src",
    "fabric-sandbox/src",
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

/// The bindings' hand-written sources: everything [`files`] finds under these directories
/// but the generated files.
const BINDING_DIRS: &[&str] = &[
    "bindings/python/src/fabric_core",
    "bindings/typescript/src",
    "bindings/go",
];

/// The language of a binding source, which decides its comments and string forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Python,
    TypeScript,
    Go,
}

impl Lang {
    /// The language of `path` by its extension (`.py`, `.ts`, `.go`).
    pub fn of(path: &Path) -> Option<Lang> {
        match path.extension()?.to_str()? {
            "py" => Some(Lang::Python),
            "ts" => Some(Lang::TypeScript),
            "go" => Some(Lang::Go),
            _ => None,
        }
    }
}

/// A literal of the bindings that spells a registered code but is not one where it stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotCode {
    /// The file, relative to the repository root.
    pub file: &'static str,
    /// Text of the literal's line, the quoted literal included: the literal is accepted
    /// only on a line that contains it.
    pub line: &'static str,
    /// Why it is not a code.
    pub why: &'static str,
}

/// The bindings' literals that spell a registered code without being one. Keep it short:
/// a code is named through the generated constant, and a status name through the status
/// table. An entry that matches nothing any more is reported too.
pub const NOT_CODES: &[NotCode] = &[
    NotCode {
        file: "bindings/python/src/fabric_core/adapter_health.py",
        line: "p.name == \"timeout\"",
        why: "the name of a keyword parameter a probe may accept (`def probe(timeout=...)`)",
    },
    // A private sentinel: `bounded` resolves to "timeout" when the probe's deadline passed
    // first, and `evaluate` reports that as the reason `probe_timeout`; it never leaves the
    // listener.
    NotCode {
        file: "bindings/typescript/src/adapter/health.ts",
        line: "found === \"timeout\"",
        why: "the probe race's private deadline sentinel",
    },
    NotCode {
        file: "bindings/typescript/src/adapter/health.ts",
        line: "Promise<\"timeout\" |",
        why: "the type of the probe race's private deadline sentinel",
    },
    NotCode {
        file: "bindings/typescript/src/adapter/health.ts",
        line: "new Promise<\"timeout\">",
        why: "the type of the probe race's private deadline sentinel",
    },
    NotCode {
        file: "bindings/typescript/src/adapter/health.ts",
        line: "resolve(\"timeout\")",
        why: "the probe race's private deadline sentinel",
    },
    NotCode {
        file: "bindings/python/src/fabric_core/ray/_batch.py",
        line: "\"interrupted\": interrupted,",
        why: "the BatchSummary member `interrupted` (a flag), built as a mapping for the generated model",
    },
];

fn snake(literal: &str) -> bool {
    !literal.is_empty()
        && literal
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// The index after `end` from `at` on (or the end of `bytes`), counting the lines passed.
fn skip_to(bytes: &[u8], mut at: usize, end: &[u8], line: &mut usize) -> usize {
    while at < bytes.len() && !bytes[at..].starts_with(end) {
        if bytes[at] == b'\n' {
            *line += 1;
        }
        at += 1;
    }
    (at + end.len()).min(bytes.len())
}

/// Whether the escape at `at` (a backslash) escapes the next byte: not a line break, whose
/// line is counted where it stands.
fn escapes(bytes: &[u8], at: usize) -> bool {
    bytes[at] == b'\\' && bytes.get(at + 1).is_some_and(|&next| next != b'\n')
}

/// The end of TypeScript template text starting at `at` (after "`" or an interpolation's
/// `}`): the index after the closing "`" (`false`) or after `${` (`true`).
fn template_text(bytes: &[u8], mut at: usize, line: &mut usize) -> (usize, bool) {
    while at < bytes.len() {
        match bytes[at] {
            _ if escapes(bytes, at) => at += 1,
            b'\n' => *line += 1,
            b'`' => return (at + 1, false),
            b'$' if bytes.get(at + 1) == Some(&b'{') => return (at + 2, true),
            _ => {}
        }
        at += 1;
    }
    (at, false)
}

/// The quoted string literals (`'…'`, `"…"`) of one binding source whose whole text is
/// snake_case, with their lines. Skipped as prose: comments (`#` in Python; `//` and
/// `/* */` in TypeScript and Go) and Python's triple-quoted strings (docstrings). Not quoted,
/// so not looked at: Go raw strings and the text of TypeScript template literals (their
/// `${…}` interpolations are). A quote left open at the end of its line (one inside a
/// regular expression) ends there.
pub fn binding_literals(text: &str, lang: Lang) -> Vec<(usize, String)> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut line = 1;
    let mut at = 0;
    // TypeScript: the brace depth, and the depths at which template interpolations opened.
    let mut depth = 0usize;
    let mut templates: Vec<usize> = Vec::new();
    while at < bytes.len() {
        let byte = bytes[at];
        let next = bytes.get(at + 1).copied();
        let line_comment = match lang {
            Lang::Python => byte == b'#',
            Lang::TypeScript | Lang::Go => byte == b'/' && next == Some(b'/'),
        };
        if line_comment {
            at = bytes[at..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |end| at + end);
            continue;
        }
        match (byte, lang) {
            (b'\n', _) => {
                line += 1;
                at += 1;
            }
            (b'/', Lang::TypeScript | Lang::Go) if next == Some(b'*') => {
                at = skip_to(bytes, at + 2, b"*/", &mut line);
            }
            (b'`', Lang::Go) => at = skip_to(bytes, at + 1, b"`", &mut line),
            (b'`', Lang::TypeScript) => {
                let (end, open) = template_text(bytes, at + 1, &mut line);
                at = end;
                if open {
                    depth += 1;
                    templates.push(depth);
                }
            }
            (b'{', Lang::TypeScript) => {
                depth += 1;
                at += 1;
            }
            (b'}', Lang::TypeScript) => {
                at += 1;
                if templates.last() == Some(&depth) {
                    templates.pop();
                    depth -= 1;
                    let (end, open) = template_text(bytes, at, &mut line);
                    at = end;
                    if open {
                        depth += 1;
                        templates.push(depth);
                    }
                } else {
                    depth = depth.saturating_sub(1);
                }
            }
            (b'"' | b'\'', _) => {
                let triple = [byte; 3];
                if lang == Lang::Python && bytes[at..].starts_with(&triple) {
                    at = skip_to(bytes, at + 3, &triple, &mut line);
                    continue;
                }
                let start = at + 1;
                let mut end = start;
                while end < bytes.len() && bytes[end] != byte && bytes[end] != b'\n' {
                    end += if escapes(bytes, end) { 2 } else { 1 };
                }
                if bytes.get(end) == Some(&byte) {
                    let literal = &text[start..end];
                    if snake(literal) {
                        found.push((line, literal.to_owned()));
                    }
                    at = end + 1;
                } else {
                    // Unclosed on its line: resume at the line break.
                    at = end.min(bytes.len());
                }
            }
            _ => at += 1,
        }
    }
    found
}

/// What [`spelled_outside_bindings`] and [`stale_not_codes`] report, from one walk.
fn walk_bindings(root: &Path) -> (Vec<Finding>, Vec<NotCode>) {
    let codes: std::collections::HashSet<&'static str> =
        fabric_config::codes::all().iter().map(|c| c.code).collect();
    let mut paths = Vec::new();
    for dir in BINDING_DIRS {
        files(&root.join(dir), &mut paths);
    }
    paths.sort();
    let mut findings = Vec::new();
    let mut used = vec![false; NOT_CODES.len()];
    for path in paths {
        let Some(lang) = Lang::of(&path) else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if text.contains("@generated by xtask") || text.contains("Code generated by xtask") {
            continue;
        }
        let relative = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
        let shown = relative.to_string_lossy().replace('\\', "/");
        let lines: Vec<&str> = text.lines().collect();
        for (line, literal) in binding_literals(&text, lang) {
            if !codes.contains(literal.as_str()) {
                continue;
            }
            let source = lines.get(line - 1).copied().unwrap_or_default();
            let allowed = NOT_CODES.iter().position(|not| {
                not.file == shown
                    && source.contains(not.line)
                    && (not.line.contains(&format!("\"{literal}\""))
                        || not.line.contains(&format!("'{literal}'")))
            });
            match allowed {
                Some(index) => used[index] = true,
                None => findings.push(Finding {
                    file: relative.clone(),
                    line,
                    kind: "code",
                    literal,
                }),
            }
        }
    }
    let stale = NOT_CODES
        .iter()
        .zip(used)
        .filter(|(_, used)| !used)
        .map(|(not, _)| *not)
        .collect();
    (findings, stale)
}

/// Every string literal in the bindings' hand-written sources (Python, TypeScript, Go; not
/// their tests, examples or generated files) that spells a registered code: the sources
/// name the generated constant (`Code.RUNTIME_BUSY`, `CodeRuntimeBusy`) instead, and a
/// status name through the status table. [`NOT_CODES`] lists the literals that are not
/// codes where they stand.
pub fn spelled_outside_bindings(root: &Path) -> Vec<Finding> {
    walk_bindings(root).0
}

/// The [`NOT_CODES`] entries that match no literal any more (remove them).
pub fn stale_not_codes(root: &Path) -> Vec<NotCode> {
    walk_bindings(root).1
}
