//! The committed generated files are current, the bindings name only functions of the
//! header, and no source names an unregistered code.

#[test]
fn generated_files_are_current() {
    let check = xtask::check(&xtask::repo_root()).expect("generate");
    let paths: Vec<&str> = check.stale.iter().map(|file| file.path.as_str()).collect();
    assert!(
        paths.is_empty(),
        "stale generated files {paths:?}: run `cargo xtask codegen` and commit"
    );
}

#[test]
fn bindings_name_only_functions_of_the_header() {
    let check = xtask::check(&xtask::repo_root()).expect("generate");
    let listed: Vec<String> = check
        .undeclared
        .iter()
        .map(|used| format!("{}:{}: `{}`", used.file.display(), used.line, used.symbol))
        .collect();
    assert!(
        listed.is_empty(),
        "not functions of include/fabric.h:\n{}",
        listed.join("\n")
    );
    // The walk reads both bindings' declaring modules.
    let uses = xtask::symbols::uses(&xtask::repo_root());
    for module in ["_ffi.py", "native.ts"] {
        assert!(
            uses.iter().any(|used| used.file.ends_with(module)),
            "no function use found in {module}"
        );
    }
}

#[test]
fn every_kind_of_generated_file_is_checked() {
    let files = xtask::generate(&xtask::repo_root()).expect("generate");
    let generated = |path: &str| files.iter().any(|(candidate, _)| candidate == path);
    for path in [
        "schemas/sdk/agent.schema.json",
        "schemas/adapter-contract/openai-stream-record.schema.json",
        "include/fabric.h",
        "bindings/python/src/fabric_core/_generated.py",
        "bindings/typescript/src/generated.ts",
        "bindings/go/generated.go",
        "bindings/python/src/fabric_core/_prototypes.py",
        "bindings/typescript/src/prototypes.ts",
        "docs/errors.md",
    ] {
        assert!(generated(path), "{path} is not generated");
    }
    let schemas = fabric_config::schema::all().len();
    let committed = xtask::schemas::committed(&xtask::repo_root()).len();
    assert_eq!(
        committed, schemas,
        "one committed file per generated schema"
    );
}

#[test]
fn sources_name_only_registered_codes_and_stages() {
    let findings = xtask::sources::unregistered(&xtask::repo_root());
    let listed: Vec<String> = findings
        .iter()
        .map(|f| {
            format!(
                "{}:{}: {} `{}`",
                f.file.display(),
                f.line,
                f.kind,
                f.literal
            )
        })
        .collect();
    assert!(
        listed.is_empty(),
        "register these in fabric-config/src/codes/ or use a registered one:\n{}",
        listed.join("\n")
    );
}

#[test]
fn the_walker_finds_literals() {
    let text = "raise X(code=\"made_up\", stage=\"load\")\nErrorInfo::new(Stage::Plan, \"other_made_up\", m)";
    let found = xtask::sources::literals(text, true);
    let names: Vec<&str> = found.iter().map(|(_, _, l)| l.as_str()).collect();
    assert_eq!(names, ["made_up", "load", "other_made_up"]);
}

#[test]
fn every_error_class_has_binding_names() {
    for class in fabric_config::codes::ErrorClass::ALL {
        assert!(
            xtask::registry::CLASS_NAMES
                .iter()
                .any(|(key, _, _)| *key == class.as_str()),
            "{class:?} has no exception names in xtask::registry::CLASS_NAMES"
        );
    }
}

#[test]
fn codes_are_spelled_only_where_they_are_declared() {
    let findings = xtask::sources::spelled_outside(&xtask::repo_root());
    let listed: Vec<String> = findings
        .iter()
        .map(|f| format!("{}:{}: `{}`", f.file.display(), f.line, f.literal))
        .collect();
    assert!(
        listed.is_empty(),
        "use the registry's constant (fabric_config::codes::NAME) or ConfigRule::X.code() \
         instead of spelling these codes:\n{}",
        listed.join("\n")
    );
}

#[test]
fn the_spelling_walker_sees_literals_outside_tests() {
    let text = "let a = \"runtime_busy\";\nlet b = 'x'; let c = \"Not Code\";\n\
                /// assert_eq!(code, \"host_crashed\");\n\
                #[cfg(test)]\nmod tests { const X: &str = \"runtime_stopped\"; }";
    let found = xtask::sources::string_literals(text);
    assert_eq!(found, [(1, "runtime_busy".to_owned())]);
}
