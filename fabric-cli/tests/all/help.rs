//! Every command's `--help` speaks one style (issue 38 item 7): defaults as clap's
//! `[default: …]`, never a hand-written "(default 90)"; `env release` says what it does.

use crate::support::fabric;

fn help(path: &[&str]) -> String {
    let mut args: Vec<&str> = path.to_vec();
    args.push("--help");
    let output = fabric(&args);
    assert_eq!(output.status.code(), Some(0), "{path:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The subcommands a help text lists under `Commands:` (without `help`).
fn subcommands(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|line| line.trim() != "Commands:")
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// Every command path, depth first: `["run"]`, `["service", "prepare"]`, ...
fn every_command(path: Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    let refs: Vec<&str> = path.iter().map(String::as_str).collect();
    let text = help(&refs);
    for name in subcommands(&text) {
        let mut next = path.clone();
        next.push(name);
        every_command(next, out);
    }
    out.push((path, text));
}

#[test]
fn every_help_text_shows_defaults_in_one_style() {
    let mut all = Vec::new();
    every_command(Vec::new(), &mut all);
    let names: Vec<String> = all.iter().map(|(path, _)| path.join(" ")).collect();
    for expected in [
        "run",
        "check",
        "service prepare",
        "env release",
        "export",
        "doctor",
    ] {
        assert!(
            names.iter().any(|name| name == expected),
            "{expected} in {names:?}"
        );
    }
    for (path, text) in &all {
        assert!(
            !text.contains("(default "),
            "`fabric {}` writes a default by hand; use clap's `[default: …]`:\n{text}",
            path.join(" ")
        );
    }
    let prepare = help(&["service", "prepare"]);
    assert!(prepare.contains("[default: 90]"), "{prepare}");
    for path in [&["run"][..], &["check"]] {
        let text = help(path);
        assert!(text.contains("[default: 90]"), "{path:?}: {text}");
    }
    assert!(help(&["check"]).contains("[default: 3]"));
    assert!(help(&["export", "gym"]).contains("[default: nemo-fabric]"));
    let release = help(&["env", "release"]);
    assert!(!release.contains("release it (detach only)"), "{release}");
    assert!(
        release.contains("Fabric detaches from it, and the environment stays its owner's"),
        "{release}"
    );
}
