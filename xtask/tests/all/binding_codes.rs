//! The bindings name every registered code through their generated constant, never as a
//! string literal; and each binding's generated file declares one constant per code.

use xtask::sources::{Lang, binding_literals};

#[test]
fn bindings_spell_no_registered_code() {
    let findings = xtask::sources::spelled_outside_bindings(&xtask::repo_root());
    let listed: Vec<String> = findings
        .iter()
        .map(|f| format!("{}:{}: `{}`", f.file.display(), f.line, f.literal))
        .collect();
    assert!(
        listed.is_empty(),
        "name the generated constant (Python `Code.NAME` from fabric_core._codes, TypeScript \
         `Code.NAME` from ./generated, Go `CodeName`; a status name through the status table) \
         instead of spelling these codes, or, if one is not a code where it stands, add it to \
         xtask::sources::NOT_CODES with the reason:\n{}",
        listed.join("\n")
    );
}

#[test]
fn every_not_code_entry_still_matches() {
    let stale = xtask::sources::stale_not_codes(&xtask::repo_root());
    assert!(
        stale.is_empty(),
        "NOT_CODES entries that match no literal any more (remove them): {stale:?}"
    );
}

#[test]
fn each_binding_declares_a_constant_per_code() {
    let files = xtask::generate(&xtask::repo_root()).expect("generate");
    let text = |path: &str| {
        files
            .iter()
            .find(|(candidate, _)| candidate == path)
            .map(|(_, text)| text.as_str())
            .unwrap_or_else(|| panic!("{path} is not generated"))
    };
    let python = text(xtask::python::CODES_PATH);
    let typescript = text(xtask::typescript::PATH);
    let go = text(xtask::go::PATH);
    let mut go_names = std::collections::HashSet::new();
    for code in fabric_config::codes::all() {
        let upper = xtask::registry::constant(code.code);
        let quoted = serde_json::to_string(code.code).expect("a string");
        assert!(
            python.contains(&format!("\n    {upper} = {quoted}\n")),
            "_codes.py lacks Code.{upper}"
        );
        assert!(
            typescript.contains(&format!("\n  {upper}: {quoted},\n")),
            "generated.ts lacks Code.{upper}"
        );
        let go_name = xtask::go::code_constant(code.code);
        assert!(
            go.contains(&format!("\n\t{go_name} = {quoted}\n")),
            "generated.go lacks {go_name}"
        );
        assert!(go_names.insert(go_name.clone()), "two codes are {go_name}");
    }
}

#[test]
fn the_binding_walker_finds_quoted_codes_outside_prose() {
    let python = "\"\"\"Raises ``code == \"runtime_busy\"``.\"\"\"\n\
                  # code=\"runtime_stopped\"\n\
                  raise X(code='made_up', stage=\"load\")\n\
                  y = {\"code\": \"node_lost\"}  # 'ignored'\n";
    assert_eq!(
        binding_literals(python, Lang::Python),
        [
            (3, "made_up".to_owned()),
            (3, "load".to_owned()),
            (4, "code".to_owned()),
            (4, "node_lost".to_owned()),
        ]
    );
    let typescript = "/** `runtime_busy` or \"timeout\" */\n\
                      // \"runtime_stopped\"\n\
                      const a = `text \"not_quoted\" ${ok ? 'first_code' : \"second_code\"} more`;\n\
                      const re = /[\"']/; const b = { code: 'third_code' };\n\
                      const c = \"fourth_code\";\n";
    // The quote in the regular expression opens a string that its line ends: that line's
    // later literals are not seen, the next line's are.
    assert_eq!(
        binding_literals(typescript, Lang::TypeScript),
        [
            (3, "first_code".to_owned()),
            (3, "second_code".to_owned()),
            (5, "fourth_code".to_owned()),
        ]
    );
    let go = "// \"runtime_busy\"\n/* \"timeout\" */\n\
              type T struct { A string `json:\"a_field\"` }\n\
              var e = Info{Code: \"made_up\", Rune: '\\''}\n";
    assert_eq!(binding_literals(go, Lang::Go), [(4, "made_up".to_owned())]);
}
