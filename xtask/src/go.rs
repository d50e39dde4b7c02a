//! `bindings/go/generated.go`: result structs, the error registry, every registered code
//! as a constant (`CodeRuntimeBusy`), stages and the status → error-class table.

use std::fmt::Write;

use crate::ir::{Boundary, Def, Ty, pascal};

use crate::registry::Registry;

pub const PATH: &str = "bindings/go/generated.go";

const INITIALISMS: &[&str] = &[
    "id", "ids", "pid", "url", "uri", "api", "json", "http", "mcp", "ms", "cpu", "atif", "atof",
    "sha256", "usd", "io", "os", "otlp", "ok", "sse", "abi", "utf8",
];

/// A type or constant name with Go's initialisms: `McpServerConfig` → `MCPServerConfig`,
/// `Measurement_uint64` → `MeasurementUint64`.
pub fn go_name(name: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    for part in name.split(['_', '-', '.', ' ']).filter(|p| !p.is_empty()) {
        let mut word = String::new();
        let mut previous_lower = false;
        for c in part.chars() {
            if c.is_uppercase() && previous_lower {
                words.push(std::mem::take(&mut word));
            }
            previous_lower = c.is_lowercase() || c.is_ascii_digit();
            word.push(c);
        }
        words.push(word);
    }
    words
        .into_iter()
        .map(|word| {
            if INITIALISMS.contains(&word.to_lowercase().as_str()) {
                word.to_uppercase()
            } else {
                pascal(&word)
            }
        })
        .collect()
}

/// `gofmt` over generated text. Fails when `gofmt` is not installed: the committed file is
/// gofmt'd, so unformatted output would read as drift.
pub fn gofmt(text: String) -> Result<String, String> {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let mut child = Command::new("gofmt")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| format!("gofmt is needed to write {PATH} (install Go): {error}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(text.as_bytes())
            .map_err(|error| format!("gofmt: {error}"))?;
    }
    let output = child
        .wait_with_output()
        .map_err(|error| format!("gofmt: {error}"))?;
    if !output.status.success() {
        return Err(format!(
            "gofmt rejected the generated Go: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    String::from_utf8(output.stdout).map_err(|error| format!("gofmt: {error}"))
}

/// The Go constant of a registered code: `runtime_busy` → `CodeRuntimeBusy`.
pub fn code_constant(code: &str) -> String {
    format!("Code{}", go_name(code))
}

fn go_str(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

fn int(format: &str) -> &'static str {
    match format {
        "uint64" | "uint" => "uint64",
        "uint32" => "uint32",
        "uint16" => "uint16",
        "uint8" => "uint8",
        "int32" => "int32",
        "int16" => "int16",
        "int8" => "int8",
        _ => "int64",
    }
}

/// The Go type of a member; `optional` members of scalar or struct type become pointers
/// (nil = absent), strings stay strings (empty = absent).
fn go_type(ty: &Ty, optional: bool, boundary: &Boundary) -> String {
    let pointer = |inner: String| {
        if optional { format!("*{inner}") } else { inner }
    };
    match ty {
        Ty::Str => "string".into(),
        Ty::Int(format) => pointer(int(format).into()),
        Ty::Num => pointer("float64".into()),
        Ty::Bool => pointer("bool".into()),
        Ty::Any => "json.RawMessage".into(),
        Ty::Object => "map[string]any".into(),
        Ty::Array(item) => format!("[]{}", go_type(item, false, boundary)),
        Ty::Map(item) => format!("map[string]{}", go_type(item, false, boundary)),
        Ty::Ref(name) => match boundary.defs.get(name) {
            Some(Def::Model { .. }) => pointer(go_name(name)),
            Some(Def::Enum { .. }) => go_name(name),
            Some(Def::Alias { ty, .. }) => go_type(ty, optional, boundary),
            None => "json.RawMessage".into(),
        },
        Ty::Nullable(inner) => go_type(inner, true, boundary),
    }
}

fn comment(out: &mut String, indent: &str, name: &str, text: &str) {
    if !text.is_empty() {
        let _ = writeln!(out, "{indent}// {name}: {}", text.replace('\n', " "));
    }
}

pub fn render(boundary: &Boundary, registry: &Registry) -> String {
    let mut out = String::new();
    out.push_str(crate::HEADER_SLASH);
    out.push_str(
        "// Boundary types and tables generated from the Rust types (fabric-config).\n\
         // Do not edit: run `cargo xtask codegen`.\n\n\
         package fabric\n\nimport \"encoding/json\"\n\n",
    );
    let _ = writeln!(
        out,
        "// ABIVersion is the C ABI version this package speaks.\nconst ABIVersion = {}\n",
        registry.abi_version
    );
    out.push_str(
        "// Stages lists every lifecycle stage an ErrorInfo names.\nvar Stages = []string{\n",
    );
    for stage in &registry.stages {
        let _ = writeln!(out, "\t{},", go_str(stage));
    }
    out.push_str("}\n\n// C ABI statuses (numbers never change).\nconst (\n");
    for status in &registry.statuses {
        let _ = writeln!(
            out,
            "\tStatus{} Status = {}",
            go_name(&status.name),
            status.status
        );
    }
    out.push_str(")\n\n// statusClasses maps an error status to its class key.\nvar statusClasses = map[Status]string{\n");
    for status in &registry.statuses {
        if let Some(class) = &status.class {
            let _ = writeln!(out, "\tStatus{}: {},", go_name(&status.name), go_str(class));
        }
    }
    out.push_str("}\n\n// ErrorCodeInfo describes one registered error code.\ntype ErrorCodeInfo struct {\n\t// Stage is the stage the code is always reported at (empty: the failing call's).\n\tStage string\n\tRetryable bool\n\t// ClassOverride replaces the status's class (handle errors are state errors).\n\tClassOverride string\n\tOrigin string\n\tSummary string\n}\n\n// ErrorCodes lists every error code any surface can emit.\nvar ErrorCodes = map[string]ErrorCodeInfo{\n");
    for code in registry.codes.iter().filter(|c| !c.reason) {
        let _ = writeln!(
            out,
            "\t{}: {{Stage: {}, Retryable: {}, ClassOverride: {}, Origin: {}, Summary: {}}},",
            go_str(&code.code),
            go_str(code.stage.as_deref().unwrap_or("")),
            code.retryable,
            go_str(code.class.as_deref().unwrap_or("")),
            go_str(&code.origin),
            go_str(&code.summary)
        );
    }
    out.push_str("}\n\n// ReasonCodes lists the reason and diagnostic codes that appear inside results.\nvar ReasonCodes = []string{\n");
    for code in registry.codes.iter().filter(|c| c.reason) {
        let _ = writeln!(out, "\t{},", go_str(&code.code));
    }
    out.push_str(
        "}\n\n// Every registered error and reason code as a constant: CodeRuntimeBusy is \"runtime_busy\".\n\
         // The package's sources name a code through its constant, never as a string literal\n\
         // (`cargo test -p xtask` walks them). C ABI status names are the Status constants, even\n\
         // where a name equals a code (invalid_argument).\nconst (\n",
    );
    for code in &registry.codes {
        let name = code_constant(&code.code);
        let kind = if code.reason { "reason" } else { "error" };
        let _ = writeln!(
            out,
            "\t// {name} ({kind}): {}\n\t{name} = {}",
            code.summary.replace('\n', " "),
            go_str(&code.code)
        );
    }
    out.push_str(")\n");
    for (name, def) in &boundary.defs {
        let type_name = go_name(name);
        out.push('\n');
        match def {
            Def::Enum {
                description,
                values,
            } => {
                comment(&mut out, "", &type_name, description);
                let _ = writeln!(
                    out,
                    "type {type_name} string\n\n// {type_name} values.\nconst ("
                );
                for (value, _) in values {
                    let _ = writeln!(
                        out,
                        "\t{type_name}{} {type_name} = {}",
                        go_name(value),
                        go_str(value)
                    );
                }
                out.push_str(")\n");
            }
            Def::Alias { description, ty } => {
                comment(&mut out, "", &type_name, description);
                let _ = writeln!(out, "type {type_name} = {}", go_type(ty, false, boundary));
            }
            Def::Model {
                description,
                fields,
            } => {
                comment(&mut out, "", &type_name, description);
                let _ = writeln!(out, "type {type_name} struct {{");
                for field in fields {
                    let member = go_name(&field.name);
                    comment(&mut out, "\t", &member, &field.description);
                    let ty = go_type(&field.ty, !field.required && !field.defaulted, boundary);
                    let omit = if field.required { "" } else { ",omitempty" };
                    let _ = writeln!(out, "\t{member} {ty} `json:\"{}{omit}\"`", field.name);
                }
                out.push_str("}\n");
            }
        }
    }
    out
}
