//! `bindings/python/src/fabric_core/_generated.py`: result models, the error registry,
//! stages, the statuses by name and the status → error-class table; and
//! `bindings/python/src/fabric_core/_codes.py`: every registered code as a constant
//! (`Code.RUNTIME_BUSY`), apart so that modules which must load nothing else (the adapter
//! evidence helper) can name codes.

use std::fmt::Write;

use crate::ir::{Boundary, Def, Ty};
use crate::registry::Registry;

pub const PATH: &str = "bindings/python/src/fabric_core/_generated.py";

pub const CODES_PATH: &str = "bindings/python/src/fabric_core/_codes.py";

fn py_str(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

fn annotation(ty: &Ty, boundary: &Boundary) -> String {
    match ty {
        Ty::Str => "str".into(),
        Ty::Int(_) => "int".into(),
        Ty::Num => "float".into(),
        Ty::Bool => "bool".into(),
        Ty::Any => "Any".into(),
        Ty::Object => "Mapping[str, Any]".into(),
        Ty::Array(item) => format!("tuple[{}, ...]", annotation(item, boundary)),
        Ty::Map(item) => format!("Mapping[str, {}]", annotation(item, boundary)),
        Ty::Ref(name) => match boundary.defs.get(name) {
            Some(Def::Model { .. }) => name.clone(),
            Some(Def::Enum { .. }) => "str".into(),
            Some(Def::Alias { ty, .. }) => annotation(ty, boundary),
            None => "Any".into(),
        },
        Ty::Nullable(inner) => format!("{} | None", annotation(inner, boundary)),
    }
}

/// `(model, shape)` when a field holds models the binding wraps.
fn nested<'a>(ty: &'a Ty, boundary: &Boundary) -> Option<(&'a str, &'static str)> {
    let model = |name: &'a str| matches!(boundary.defs.get(name), Some(Def::Model { .. }));
    match ty {
        Ty::Ref(name) if model(name) => Some((name, "one")),
        Ty::Nullable(inner) => nested(inner, boundary),
        Ty::Array(item) => match item.as_ref() {
            Ty::Ref(name) if model(name) => Some((name, "list")),
            _ => None,
        },
        Ty::Map(item) => match item.as_ref() {
            Ty::Ref(name) if model(name) => Some((name, "map")),
            _ => None,
        },
        _ => None,
    }
}

pub fn render(boundary: &Boundary, registry: &Registry) -> String {
    let mut out = String::new();
    out.push_str(crate::HEADER_HASH);
    out.push_str(
        "\"\"\"Boundary models and tables generated from the Rust types (fabric-config).\n\n\
         Do not edit: run `cargo xtask codegen`. Behaviour (properties, legacy\n\
         shapes) is added in ``fabric_core.types``.\n\"\"\"\n\n\
         from __future__ import annotations\n\n\
         from collections.abc import Mapping\n\
         from typing import Any\n\n\
         from fabric_core._mapping import FabricMapping, register\n\n",
    );
    let _ = writeln!(out, "ABI_VERSION = {}", registry.abi_version);
    out.push_str("\n#: Every lifecycle stage an ErrorInfo names.\nSTAGES: tuple[str, ...] = (\n");
    for stage in &registry.stages {
        let _ = writeln!(out, "    {},", py_str(stage));
    }
    out.push_str(
        ")\n\n#: C ABI status number -> stable status name.\nSTATUS_NAMES: dict[int, str] = {\n",
    );
    for status in &registry.statuses {
        let _ = writeln!(out, "    {}: {},", status.status, py_str(&status.name));
    }
    out.push_str("}\n\n#: C ABI statuses by name (the numbers of ``STATUS_NAMES``).\n");
    for status in &registry.statuses {
        let _ = writeln!(
            out,
            "STATUS_{} = {}",
            status.name.to_ascii_uppercase(),
            status.status
        );
    }
    out.push_str("\n#: C ABI status number -> error class name (statuses that are errors).\nSTATUS_CLASSES: dict[int, str] = {\n");
    for status in &registry.statuses {
        if let Some(class) = &status.class {
            let _ = writeln!(out, "    {}: {},", status.status, py_str(class));
        }
    }
    out.push_str("}\n\n#: Error class name -> exception class name in ``fabric_core.errors``.\nCLASS_EXCEPTIONS: dict[str, str] = {\n");
    for (class, _, python) in crate::registry::CLASS_NAMES {
        let _ = writeln!(out, "    {}: {},", py_str(class), py_str(python));
    }
    out.push_str("}\n\n#: Every error code: code -> (fixed stage or None, retryable, class override or None, origin).\nERROR_CODES: dict[str, tuple[str | None, bool, str | None, str]] = {\n");
    for code in registry.codes.iter().filter(|c| !c.reason) {
        let stage = code.stage.as_deref().map(py_str).unwrap_or("None".into());
        let class = code.class.as_deref().map(py_str).unwrap_or("None".into());
        let retryable = if code.retryable { "True" } else { "False" };
        let _ = writeln!(
            out,
            "    {}: ({stage}, {retryable}, {class}, {}),",
            py_str(&code.code),
            py_str(&code.origin)
        );
    }
    out.push_str("}\n\n#: Error codes a batch retries while attempts allow (runtime failures).\nBATCH_RETRYABLE: frozenset[str] = frozenset({\n");
    for code in fabric_config::codes::BATCH_RETRYABLE {
        let _ = writeln!(out, "    {},", py_str(code));
    }
    out.push_str("})\n\n#: Reason and diagnostic codes that appear inside results.\nREASON_CODES: frozenset[str] = frozenset({\n");
    for code in registry.codes.iter().filter(|c| c.reason) {
        let _ = writeln!(out, "    {},", py_str(&code.code));
    }
    out.push_str("})\n");
    for (name, def) in &boundary.defs {
        match def {
            Def::Enum {
                description,
                values,
            } => {
                let _ = write!(
                    out,
                    "\n#: {}\n{} = (",
                    description.replace('\n', " "),
                    constant(name)
                );
                let items: Vec<String> = values.iter().map(|(v, _)| py_str(v)).collect();
                let _ = writeln!(out, "{},)", items.join(", "));
            }
            Def::Model {
                description,
                fields,
            } => {
                let _ = write!(
                    out,
                    "\n\nclass {name}(FabricMapping):\n    \"\"\"{}\n\n",
                    doc(description)
                );
                for field in fields {
                    let _ = writeln!(
                        out,
                        "    ``{}`` ({}{}): {}",
                        field.name,
                        annotation(&field.ty, boundary),
                        if field.required { "" } else { ", optional" },
                        doc(&field.description)
                    );
                }
                out.push_str("    \"\"\"\n\n    __slots__ = ()\n");
                let names: Vec<String> = fields.iter().map(|f| py_str(&f.name)).collect();
                let _ = writeln!(out, "    _fields = frozenset({{{}}})", names.join(", "));
                let required: Vec<String> = fields
                    .iter()
                    .filter(|f| f.required)
                    .map(|f| py_str(&f.name))
                    .collect();
                if !required.is_empty() {
                    let _ = writeln!(
                        out,
                        "    _required = frozenset({{{}}})",
                        required.join(", ")
                    );
                }
                let nested: Vec<String> = fields
                    .iter()
                    .filter_map(|f| {
                        nested(&f.ty, boundary).map(|(model, shape)| {
                            format!(
                                "{}: ({}, {})",
                                py_str(&f.name),
                                py_str(model),
                                py_str(shape)
                            )
                        })
                    })
                    .collect();
                if !nested.is_empty() {
                    let _ = writeln!(out, "    _nested = {{{}}}", nested.join(", "));
                }
            }
            Def::Alias { .. } => {}
        }
    }
    out.push_str("\n\nfor _model in (\n");
    for (name, def) in &boundary.defs {
        if matches!(def, Def::Model { .. }) {
            let _ = writeln!(out, "    {name},");
        }
    }
    out.push_str("):\n    register(_model)\n");
    out
}

fn constant(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 && !out.ends_with('_') {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    format!("{out}_VALUES")
}

fn doc(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace("\"\"\"", "'''")
        .replace('\n', " ")
}

/// `_codes.py`: the `Code` namespace, one plain `str` constant per registered code.
pub fn render_codes(registry: &Registry) -> String {
    let mut out = String::new();
    out.push_str(crate::HEADER_HASH);
    out.push_str(
        "\"\"\"Every registered error and reason code as a named constant, generated from the\n\
         Rust registry (``fabric_config::codes``).\n\n\
         Do not edit: run ``cargo xtask codegen``. The binding's sources name a code through\n\
         ``Code`` (``code=Code.RUNTIME_BUSY``), never as a string literal: ``cargo test -p\n\
         xtask`` walks them. The values are the plain ``str`` spellings that\n\
         ``FabricError.code`` and results carry. C ABI status names are another table\n\
         (``_generated.STATUS_NAMES``, ``STATUS_*``), even where a name equals a code\n\
         (``invalid_argument``, ``timeout``). This module imports nothing, so\n\
         ``fabric_core.adapter_evidence`` (standard library only) can use it.\n\"\"\"\n\n\n\
         class Code:\n    \
         \"\"\"Every registered code: ``Code.RUNTIME_BUSY == \"runtime_busy\"`` (the spelling\n    \
         upper-cased, as the Rust constant); each is documented with its summary.\"\"\"\n\n    \
         __slots__ = ()\n",
    );
    for code in &registry.codes {
        let kind = if code.reason { "reason" } else { "error" };
        let _ = writeln!(
            out,
            "\n    #: ({kind}) {}\n    {} = {}",
            doc(&code.summary),
            crate::registry::constant(&code.code),
            py_str(&code.code)
        );
    }
    out
}
