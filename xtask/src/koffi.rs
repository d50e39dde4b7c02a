//! `bindings/typescript/src/prototypes.ts`: every function of `include/fabric.h` as its
//! koffi signature, which `native.ts` declares.
//!
//! Handle typedefs become `uint64_t` (koffi knows no typedef of the header). Strings the
//! library allocates (`char **out`, a `char *` result or argument) are `void *`: `native.ts`
//! decodes them and releases them with `fabric_string_free`, where koffi's `char *` would
//! copy and leak them. A non-const pointer argument is written by the library: `_Out_`.

use std::fmt::Write;

use crate::cdecl::{CType, Prototype};

pub const PATH: &str = "bindings/typescript/src/prototypes.ts";

fn integer(scalar: &str) -> bool {
    !matches!(scalar, "void" | "char")
}

/// The koffi spelling of a result type.
fn result(ty: &CType, function: &str) -> Result<String, String> {
    Ok(match (ty.scalar, ty.constant, ty.pointers) {
        ("void", _, 0) => "void".into(),
        ("char", true, 1) => "const char *".into(),
        ("char", false, 1) | ("void", _, 1) => "void *".into(),
        (scalar, false, 0) if integer(scalar) => scalar.into(),
        _ => {
            return Err(format!(
                "{function}: no koffi mapping for the result {ty:?}"
            ));
        }
    })
}

/// The koffi spelling of a parameter type.
fn param(ty: &CType, function: &str) -> Result<String, String> {
    Ok(match (ty.scalar, ty.constant, ty.pointers) {
        ("char", true, 1) => "const char *".into(),
        ("char", false, 1) | ("void", _, 1) => "void *".into(),
        ("char", false, 2) => "_Out_ void **".into(),
        (scalar, false, 0) if integer(scalar) => scalar.into(),
        (scalar, false, 1) if integer(scalar) => format!("_Out_ {scalar} *"),
        _ => {
            return Err(format!(
                "{function}: no koffi mapping for a parameter {ty:?}"
            ));
        }
    })
}

/// `const char *` + `name` → `const char *name`; `uint64_t` + `name` → `uint64_t name`.
fn declare(ty: &str, name: &str) -> String {
    if ty.ends_with('*') {
        format!("{ty}{name}")
    } else {
        format!("{ty} {name}")
    }
}

/// The koffi signature of one prototype.
pub fn signature(prototype: &Prototype) -> Result<String, String> {
    let params = prototype
        .params
        .iter()
        .map(|p| Ok(declare(&param(&p.ty, &prototype.name)?, &p.name)))
        .collect::<Result<Vec<_>, String>>()?;
    let returns = result(&prototype.returns, &prototype.name)?;
    Ok(format!(
        "{}({})",
        declare(&returns, &prototype.name),
        params.join(", ")
    ))
}

pub fn render(prototypes: &[Prototype]) -> Result<String, String> {
    let mut out = String::new();
    out.push_str(crate::HEADER_SLASH);
    out.push_str(
        "// The functions of include/fabric.h as koffi signatures, generated from the header.\n\
         // Do not edit: run `cargo xtask codegen`.\n\n\
         /**\n \
         * C function name -> koffi signature, in header order. `native.ts` declares every native\n \
         * function from this table and adds the behaviour (optional symbols, async calls, string\n \
         * freeing). Strings the library allocates are `void *` (decoded, then released with\n \
         * `fabric_string_free`); `_Out_` pointers are written by the library; handles are\n \
         * `uint64_t`.\n \
         */\n\
         export const PROTOTYPES = {\n",
    );
    for prototype in prototypes {
        let signature = serde_json::to_string(&signature(prototype)?).unwrap_or_default();
        let _ = writeln!(out, "  {}: {signature},", prototype.name);
    }
    out.push_str(
        "} as const;\n\n\
         /** The name of a function of the C ABI. */\n\
         export type NativeSymbol = keyof typeof PROTOTYPES;\n",
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdecl::parse;

    #[test]
    fn spells_what_native_ts_declared_by_hand() {
        let header = "typedef uint64_t fabric_runtime;\n\
            const char *fabric_version(void);\nvoid fabric_string_free(char *s);\n\
            int32_t fabric_runtime_start(const char *config_json, fabric_runtime *runtime_out, char **out);\n\
            int32_t fabric_runtime_free(fabric_runtime runtime);\n";
        let signatures: Vec<String> = parse(header)
            .unwrap()
            .iter()
            .map(|p| signature(p).unwrap())
            .collect();
        assert_eq!(
            signatures,
            [
                "const char *fabric_version()",
                "void fabric_string_free(void *s)",
                "int32_t fabric_runtime_start(const char *config_json, _Out_ uint64_t *runtime_out, _Out_ void **out)",
                "int32_t fabric_runtime_free(uint64_t runtime)",
            ]
        );
    }

    #[test]
    fn rejects_types_it_cannot_map() {
        let header = "const uint64_t *fabric_f(void);\n";
        let error = render(&parse(header).unwrap()).unwrap_err();
        assert!(error.starts_with("fabric_f: no koffi mapping"), "{error}");
    }
}
