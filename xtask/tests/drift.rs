//! The committed generated files are current, and no source names an unregistered code.

#[test]
fn generated_files_are_current() {
    let stale = xtask::stale(&xtask::repo_root()).expect("generate");
    assert!(
        stale.is_empty(),
        "stale generated files {stale:?}: run `cargo run -p xtask -- codegen` and commit"
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
        "register these in fabric-config/src/codes.rs or use a registered one:\n{}",
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
