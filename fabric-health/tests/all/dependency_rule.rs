//! The rule for a missing dependency (`tests/dependency.rs`, issue 33 item 10), proven on a
//! probe test of this binary that needs the tool named by `FABRIC_DEPENDENCY_PROBE`: pointed
//! at a tool that does not exist, the probe FAILS naming what to install; with
//! `FABRIC_ALLOW_SKIPS=1` it passes after one `SKIPPED` line. `CI` changes nothing.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::dependency;

/// Needs the tool `FABRIC_DEPENDENCY_PROBE` names; passes at once when it is unset (every
/// ordinary run).
#[test]
fn probe_needs_the_tool_named_by_the_environment() {
    let Some(tool) = std::env::var_os("FABRIC_DEPENDENCY_PROBE") else {
        return;
    };
    if !Path::new(&tool).exists() {
        dependency::missing("the probe tool", "apt-get install fabric-probe-tool");
    }
}

fn probe(env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(std::env::current_exe().expect("test binary"));
    command
        .args([
            "dependency_rule::probe_needs_the_tool_named_by_the_environment",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("FABRIC_DEPENDENCY_PROBE", "/nonexistent/fabric-probe-tool")
        .env_remove("FABRIC_ALLOW_SKIPS")
        .env_remove("CI");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("run the probe")
}

#[test]
fn a_missing_dependency_fails_naming_what_to_install_unless_skips_are_allowed() {
    for env in [
        vec![],
        vec![("CI", "true")],
        vec![("FABRIC_ALLOW_SKIPS", "0")],
    ] {
        let output = probe(&env);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            !output.status.success(),
            "{env:?}: the probe passed: {text}"
        );
        assert!(
            text.contains(
                "the probe tool is missing; install it: apt-get install fabric-probe-tool"
            ),
            "{env:?}: {text}"
        );
        assert!(text.contains("FABRIC_ALLOW_SKIPS=1"), "{env:?}: {text}");
        assert!(!text.contains("SKIPPED"), "{env:?}: {text}");
    }

    let output = probe(&[("FABRIC_ALLOW_SKIPS", "1")]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{output:?}");
    assert!(
        stderr.contains(
            "SKIPPED fabric-health/all::dependency_rule::probe_needs_the_tool_named_by_the_environment: \
             the probe tool is missing; install it: apt-get install fabric-probe-tool"
        ),
        "{stderr}"
    );
}

/// The scripts' twin of the rule (`scripts/lib/dependency.sh`): `need` exits 1 naming what
/// to install; with `FABRIC_ALLOW_SKIPS=1` it prints a SKIPPED line and the step is skipped.
#[test]
fn the_scripts_need_the_same_rule() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root");
    let script = ". scripts/lib/dependency.sh; \
                  if need fabric-no-such-tool 'apt-get install fabric-probe-tool'; then echo RAN; else echo SKIPPED-STEP; fi";
    let run = |allow: Option<&str>| {
        let mut command = Command::new("bash");
        command
            .args(["-c", script])
            .current_dir(root)
            .env_remove("FABRIC_ALLOW_SKIPS")
            .env_remove("CI");
        if let Some(value) = allow {
            command.env("FABRIC_ALLOW_SKIPS", value);
        }
        command.output().expect("bash")
    };
    for allow in [None, Some("0")] {
        let output = run(allow);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{allow:?}: {output:?}");
        assert!(output.stdout.is_empty(), "{allow:?}: {output:?}");
        assert!(
            stderr.contains(
                "fabric-no-such-tool is missing; install it: apt-get install fabric-probe-tool"
            ),
            "{stderr}"
        );
    }
    let output = run(Some("1"));
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "SKIPPED-STEP\n");
    assert!(String::from_utf8_lossy(&output.stderr).starts_with("SKIPPED: fabric-no-such-tool"));
}
