//! `bindings/python/src/fabric_core/_prototypes.py`: every function of `include/fabric.h`
//! as its ctypes `(restype, argtypes)`, which `_ffi` declares.
//!
//! Strings the library allocates (`char **out`, a `char *` result or argument) are
//! `c_void_p`: `_ffi` reads them with `string_at` and releases them with
//! `fabric_string_free`, where a `c_char_p` would copy and leak them. `const char *` is a
//! string passed in, or a static one returned (`fabric_version`).

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::cdecl::{CType, Prototype};

pub const PATH: &str = "bindings/python/src/fabric_core/_prototypes.py";

fn integer(scalar: &str) -> Option<&'static str> {
    Some(match scalar {
        "int8_t" => "c_int8",
        "uint8_t" => "c_uint8",
        "int16_t" => "c_int16",
        "uint16_t" => "c_uint16",
        "int32_t" => "c_int32",
        "uint32_t" => "c_uint32",
        "int64_t" => "c_int64",
        "uint64_t" => "c_uint64",
        "size_t" => "c_size_t",
        _ => return None,
    })
}

/// The ctypes spelling of `ty` in `function`.
fn ctype(ty: &CType, function: &str) -> Result<String, String> {
    let unsupported = || format!("{function}: no ctypes mapping for {ty:?}");
    Ok(match (ty.scalar, ty.constant, ty.pointers) {
        ("void", _, 0) => "None".into(),
        ("void", _, 1) | ("char", false, 1) => "c_void_p".into(),
        ("char", true, 1) => "c_char_p".into(),
        ("char", false, 2) => "POINTER(c_void_p)".into(),
        (scalar, false, 0) => integer(scalar).ok_or_else(unsupported)?.into(),
        (scalar, false, 1) => format!("POINTER({})", integer(scalar).ok_or_else(unsupported)?),
        _ => return Err(unsupported()),
    })
}

pub fn render(prototypes: &[Prototype]) -> Result<String, String> {
    let mut entries = String::new();
    for prototype in prototypes {
        let returns = ctype(&prototype.returns, &prototype.name)?;
        let params = prototype
            .params
            .iter()
            .map(|param| ctype(&param.ty, &prototype.name))
            .collect::<Result<Vec<_>, _>>()?;
        let params = match params.len() {
            0 => "()".to_owned(),
            1 => format!("({},)", params[0]),
            _ => format!("({})", params.join(", ")),
        };
        let _ = writeln!(entries, "    {:?}: ({returns}, {params}),", prototype.name);
    }
    let imports: BTreeSet<&str> = ["POINTER", "c_char_p", "c_void_p"]
        .into_iter()
        .chain(
            prototypes
                .iter()
                .flat_map(|p| p.params.iter().map(|param| &param.ty).chain([&p.returns]))
                .filter_map(|ty| integer(ty.scalar)),
        )
        .filter(|name| entries.contains(name))
        .collect();
    let mut out = String::new();
    out.push_str(crate::HEADER_HASH);
    out.push_str(
        "\"\"\"The functions of ``include/fabric.h`` as ctypes types, generated from the header.\n\n\
         Do not edit: run `cargo xtask codegen`. ``_ffi`` declares every native function from\n\
         this table and adds the behaviour (errcheck, optional symbols, string freeing). Strings\n\
         the library allocates are ``c_void_p`` (read with ``string_at``, released with\n\
         ``fabric_string_free``); a ``c_char_p`` result is a static string. Handles are\n\
         ``c_uint64``.\n\"\"\"\n\n\
         from __future__ import annotations\n\n",
    );
    let imports: Vec<&str> = imports.into_iter().collect();
    let _ = writeln!(out, "from ctypes import {}", imports.join(", "));
    out.push_str(
        "from typing import Any\n\n\
         #: C function name -> (restype, argtypes), in header order.\n\
         PROTOTYPES: dict[str, tuple[Any, tuple[Any, ...]]] = {\n",
    );
    out.push_str(&entries);
    out.push_str("}\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdecl::parse;

    #[test]
    fn maps_owned_strings_to_void_pointers() {
        let header = "const char *fabric_version(void);\nvoid fabric_string_free(char *s);\n\
            typedef uint64_t fabric_stream;\n\
            int32_t fabric_stream_next(fabric_stream stream, int64_t timeout_ms, char **out);\n";
        let text = render(&parse(header).unwrap()).unwrap();
        assert!(text.contains("    \"fabric_version\": (c_char_p, ()),\n"));
        assert!(text.contains("    \"fabric_string_free\": (None, (c_void_p,)),\n"));
        assert!(text.contains(
            "    \"fabric_stream_next\": (c_int32, (c_uint64, c_int64, POINTER(c_void_p))),\n"
        ));
        assert!(text.contains(
            "from ctypes import POINTER, c_char_p, c_int32, c_int64, c_uint64, c_void_p\n"
        ));
    }

    #[test]
    fn rejects_types_it_cannot_map() {
        let header = "int32_t fabric_f(const uint64_t **handles);\n";
        let error = render(&parse(header).unwrap()).unwrap_err();
        assert!(error.starts_with("fabric_f: no ctypes mapping"), "{error}");
    }
}
