//! The function prototypes of `include/fabric.h`, read from the text cbindgen writes.
//!
//! Only what the C ABI uses is understood: `void`, `char`, the `<stdint.h>` integers and
//! `size_t`, `typedef <integer> <name>;` aliases (the integer handles), `const` and pointers,
//! one prototype per line (`cbindgen.toml` has `args = "horizontal"`). Anything else is an
//! error naming the line: a new kind of parameter is taught here, never guessed by a binding.

use std::collections::BTreeMap;

/// The base types a prototype may use (typedefs resolve to one of them).
const SCALARS: &[&str] = &[
    "void", "char", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t",
    "uint64_t", "size_t",
];

/// A parameter or result type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CType {
    /// The base type with typedefs resolved: `uint64_t` for `fabric_runtime`.
    pub scalar: &'static str,
    /// `const` qualifies the base type (`const char *`).
    pub constant: bool,
    /// Levels of indirection: 1 for `const char *`, 2 for `char **out`.
    pub pointers: usize,
}

/// One named parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub ty: CType,
}

/// One function of the header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prototype {
    pub name: String,
    pub returns: CType,
    pub params: Vec<Param>,
}

/// Comments, preprocessor lines and the header's block comment.
fn skipped(line: &str) -> bool {
    line.is_empty() || ["//", "/*", "*", "#"].iter().any(|p| line.starts_with(p))
}

/// `const char *name` → the type and `name`.
fn declarator(
    text: &str,
    aliases: &BTreeMap<String, &'static str>,
) -> Result<(CType, String), String> {
    let split = text
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |at| at + 1);
    let (ty, name) = text.split_at(split);
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(format!("`{text}` has no name"));
    }
    let pointers = ty.matches('*').count();
    let mut constant = false;
    let mut base = None;
    let words = ty.replace('*', " ");
    for word in words.split_whitespace() {
        match word {
            "const" if base.is_none() && !constant => constant = true,
            _ if base.is_none() => base = Some(word),
            _ => return Err(format!("`{text}`: unsupported type `{}`", ty.trim())),
        }
    }
    let Some(base) = base else {
        return Err(format!("`{text}` has no type"));
    };
    let scalar = SCALARS
        .iter()
        .find(|s| **s == base)
        .copied()
        .or_else(|| aliases.get(base).copied())
        .ok_or_else(|| format!("`{text}`: unknown type `{base}`"))?;
    let ty = CType {
        scalar,
        constant,
        pointers,
    };
    Ok((ty, name.to_owned()))
}

/// Every function prototype of `header`, in header order.
pub fn parse(header: &str) -> Result<Vec<Prototype>, String> {
    let mut aliases: BTreeMap<String, &'static str> = BTreeMap::new();
    let mut prototypes = Vec::new();
    for (index, line) in header.lines().enumerate() {
        let line = line.trim();
        let at = |error: String| format!("include/fabric.h:{}: {error}", index + 1);
        if skipped(line) {
            continue;
        }
        if let Some(typedef) = line.strip_prefix("typedef ") {
            // `typedef uint64_t fabric_runtime;`; an enum typedef (`typedef enum X X;`)
            // names no integer and no prototype uses it.
            if let Ok((ty, name)) = declarator(typedef.trim_end_matches(';'), &aliases) {
                if ty.pointers == 0 && !ty.constant {
                    aliases.insert(name, ty.scalar);
                }
            }
            continue;
        }
        let Some(open) = line.find('(') else {
            continue;
        };
        if !line.ends_with(");") {
            return Err(at(format!(
                "`{line}` is not a one-line prototype (cbindgen.toml: keep `args = \"horizontal\"`)"
            )));
        }
        let (returns, name) = declarator(&line[..open], &aliases).map_err(at)?;
        let list = line[open + 1..line.len() - 2].trim();
        let params = if list == "void" {
            Vec::new()
        } else {
            list.split(',')
                .map(|param| {
                    let (ty, name) = declarator(param.trim(), &aliases)?;
                    Ok(Param { name, ty })
                })
                .collect::<Result<_, String>>()
                .map_err(at)?
        };
        prototypes.push(Prototype {
            name,
            returns,
            params,
        });
    }
    if prototypes.is_empty() {
        return Err("include/fabric.h declares no function".into());
    }
    Ok(prototypes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "/*\n * fabric_x(); in a comment\n */\n#define FABRIC_ABI_VERSION 2\n\
        typedef enum FabricStatus FabricStatus;\ntypedef uint64_t fabric_runtime;\n\
        // int32_t fabric_doc(void);\n\
        const char *fabric_version(void);\n\
        int32_t fabric_runtime_start(const char *config_json, fabric_runtime *runtime_out, char **out);\n";

    #[test]
    fn reads_prototypes_with_typedefs_resolved() {
        let prototypes = parse(HEADER).unwrap();
        let names: Vec<&str> = prototypes.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["fabric_version", "fabric_runtime_start"]);
        let string = CType {
            scalar: "char",
            constant: true,
            pointers: 1,
        };
        assert_eq!(prototypes[0].returns, string);
        assert!(prototypes[0].params.is_empty());
        let types: Vec<(&str, bool, usize)> = prototypes[1]
            .params
            .iter()
            .map(|p| (p.ty.scalar, p.ty.constant, p.ty.pointers))
            .collect();
        assert_eq!(
            types,
            [
                ("char", true, 1),
                ("uint64_t", false, 1),
                ("char", false, 2)
            ]
        );
        assert_eq!(prototypes[1].params[1].name, "runtime_out");
    }

    #[test]
    fn rejects_what_it_does_not_understand() {
        let unknown = parse("int32_t fabric_f(struct_t *s);\n").unwrap_err();
        assert!(unknown.contains("unknown type `struct_t`"), "{unknown}");
        let split = parse("int32_t fabric_f(const char *a,\n").unwrap_err();
        assert!(split.contains("one-line prototype"), "{split}");
        let unnamed = parse("int32_t fabric_f(uint64_t);\n").unwrap_err();
        assert!(unnamed.contains("no type"), "{unnamed}");
        assert!(parse("#define X 1\n").is_err());
    }
}
