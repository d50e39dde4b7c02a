//! `bindings/typescript/src/generated.ts`: result interfaces, the error registry, every
//! registered code as a constant (`Code.RUNTIME_BUSY`), stages and the status → error-class
//! table.

use std::fmt::Write;

use crate::ir::{Boundary, Def, Ty};
use crate::registry::Registry;

pub const PATH: &str = "bindings/typescript/src/generated.ts";

fn js(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

fn ts_type(ty: &Ty) -> String {
    match ty {
        Ty::Str => "string".into(),
        Ty::Int(_) | Ty::Num => "number".into(),
        Ty::Bool => "boolean".into(),
        Ty::Any => "JsonValue".into(),
        Ty::Object => "JsonObject".into(),
        Ty::Array(item) => match item.as_ref() {
            Ty::Nullable(_) => format!("Array<{}>", ts_type(item)),
            _ => format!("{}[]", ts_type(item)),
        },
        Ty::Map(item) => format!("Record<string, {}>", ts_type(item)),
        Ty::Ref(name) => name.clone(),
        Ty::Nullable(inner) => format!("{} | null", ts_type(inner)),
    }
}

fn comment(out: &mut String, indent: &str, text: &str) {
    if !text.is_empty() {
        let _ = writeln!(
            out,
            "{indent}/** {} */",
            text.replace("*/", "*\\/").replace('\n', " ")
        );
    }
}

pub fn render(boundary: &Boundary, registry: &Registry) -> String {
    let mut out = String::new();
    out.push_str(crate::HEADER_SLASH);
    out.push_str(
        "// Boundary types and tables generated from the Rust types (fabric-config).\n\
         // Do not edit: run `cargo xtask codegen`.\n\n\
         /** Any JSON value. */\n\
         export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };\n\
         /** A JSON object. */\n\
         export type JsonObject = { [key: string]: JsonValue };\n\n",
    );
    let _ = writeln!(
        out,
        "/** The C ABI version this binding speaks. */\nexport const ABI_VERSION = {};\n",
        registry.abi_version
    );
    out.push_str("/** Every lifecycle stage an ErrorInfo names. */\nexport const STAGES = [\n");
    for stage in &registry.stages {
        let _ = writeln!(out, "  {},", js(stage));
    }
    out.push_str("] as const;\n\n/** C ABI statuses by name (numbers never change). */\nexport const Status = {\n");
    for status in &registry.statuses {
        let _ = writeln!(out, "  {}: {},", status.name.to_uppercase(), status.status);
    }
    out.push_str("} as const;\n\n/** An error class key. */\nexport type ErrorClassKey =\n");
    for (key, _, _) in crate::registry::CLASS_NAMES {
        let _ = writeln!(out, "  | {}", js(key));
    }
    out.push_str(";\n\n/** C ABI status -> error class key (statuses that are errors). */\nexport const STATUS_CLASSES: Readonly<Record<number, ErrorClassKey>> = {\n");
    for status in &registry.statuses {
        if let Some(class) = &status.class {
            let _ = writeln!(out, "  {}: {},", status.status, js(class));
        }
    }
    out.push_str("};\n\n/** One registered error code. */\nexport interface ErrorCodeInfo {\n  readonly stage: Stage | null;\n  readonly retryable: boolean;\n  readonly classOverride: ErrorClassKey | null;\n  readonly origin: string;\n  readonly summary: string;\n}\n\n/** Every error code any surface can emit. */\nexport const ERROR_CODES: Readonly<Record<string, ErrorCodeInfo>> = {\n");
    for code in registry.codes.iter().filter(|c| !c.reason) {
        let stage = code.stage.as_deref().map(js).unwrap_or("null".into());
        let class = code.class.as_deref().map(js).unwrap_or("null".into());
        let _ = writeln!(
            out,
            "  {}: {{ stage: {stage}, retryable: {}, classOverride: {class}, origin: {}, summary: {} }},",
            code.code,
            code.retryable,
            js(&code.origin),
            js(&code.summary)
        );
    }
    out.push_str("};\n\n/** Reason and diagnostic codes that appear inside results. */\nexport const REASON_CODES: ReadonlySet<string> = new Set([\n");
    for code in registry.codes.iter().filter(|c| c.reason) {
        let _ = writeln!(out, "  {},", js(&code.code));
    }
    out.push_str(
        "]);\n\n/**\n * Every registered error and reason code by name: `Code.RUNTIME_BUSY === \"runtime_busy\"`\n \
         * (the spelling upper-cased, as the Rust constant). The binding's sources name a code\n \
         * through `Code`, never as a string literal (`cargo test -p xtask` walks them). C ABI\n \
         * status names are `Status`, even where a name equals a code (`invalid_argument`).\n \
         */\nexport const Code = {\n",
    );
    for code in &registry.codes {
        let kind = if code.reason { "reason" } else { "error" };
        let _ = writeln!(
            out,
            "  /** ({kind}) {} */\n  {}: {},",
            code.summary.replace("*/", "*\\/").replace('\n', " "),
            crate::registry::constant(&code.code),
            js(&code.code)
        );
    }
    out.push_str("} as const;\n");
    for (name, def) in &boundary.defs {
        out.push('\n');
        match def {
            Def::Enum {
                description,
                values,
            } => {
                comment(&mut out, "", description);
                let items: Vec<String> = values.iter().map(|(v, _)| js(v)).collect();
                let _ = writeln!(out, "export type {name} = {};", items.join(" | "));
            }
            Def::Alias { description, ty } => {
                comment(&mut out, "", description);
                let _ = writeln!(out, "export type {name} = {};", ts_type(ty));
            }
            Def::Model {
                description,
                fields,
            } => {
                comment(&mut out, "", description);
                let _ = writeln!(out, "export interface {name} {{");
                for field in fields {
                    comment(&mut out, "  ", &field.description);
                    let optional = if field.required { "" } else { "?" };
                    let _ = writeln!(out, "  {}{optional}: {};", field.name, ts_type(&field.ty));
                }
                out.push_str("}\n");
            }
        }
    }
    out
}
