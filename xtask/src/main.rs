//! `cargo xtask codegen [--check]`: writes (or only lists) every stale generated file;
//! `cargo xtask codes`: lists unregistered literal codes, and codes spelled outside their
//! declaration (in the Rust sources and the bindings' hand-written ones); `cargo xtask check-layers`: checks the crate graph of ARCHITECTURE.md.
//! (`cargo xtask` is the alias of
//! `cargo run -q -p xtask --` in `.cargo/config.toml`.)

use std::process::ExitCode;

/// Rewrites (or with `check`, lists) the stale files; lists the undeclared functions the
/// bindings name. Whether everything was current.
fn codegen(root: &std::path::Path, check: bool) -> Result<bool, String> {
    let report = xtask::check(root)?;
    if !check {
        xtask::write(root, &report.stale)?;
    }
    for file in &report.stale {
        match (check, file.text.is_some()) {
            (true, true) => eprintln!("stale: {}", file.path),
            (true, false) => eprintln!("stale: {} (no longer generated)", file.path),
            (false, true) => println!("wrote {}", file.path),
            (false, false) => println!("removed {} (no longer generated)", file.path),
        }
    }
    for used in &report.undeclared {
        eprintln!(
            "{}:{}: `{}` is not a function of include/fabric.h",
            used.file.display(),
            used.line,
            used.symbol
        );
    }
    if check && !report.stale.is_empty() {
        eprintln!("run `cargo xtask codegen` and commit the result");
    }
    Ok(report.undeclared.is_empty() && (!check || report.stale.is_empty()))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let root = xtask::repo_root();
    match args.as_slice() {
        ["codegen", flags @ ..] if matches!(flags, [] | ["--check"]) => {
            let check = !flags.is_empty();
            match codegen(&root, check) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::FAILURE,
                Err(error) => {
                    eprintln!("error: {error}");
                    ExitCode::FAILURE
                }
            }
        }
        ["check-layers"] => match xtask::layers::check(&root) {
            Ok(findings) if findings.is_empty() => ExitCode::SUCCESS,
            Ok(findings) => {
                for finding in findings {
                    eprintln!("{finding}");
                }
                ExitCode::FAILURE
            }
            Err(error) => {
                eprintln!("error: {error}");
                ExitCode::FAILURE
            }
        },
        ["codes"] => {
            let mut findings = xtask::sources::unregistered(&root);
            findings.extend(xtask::sources::spelled_outside(&root));
            findings.extend(xtask::sources::spelled_outside_bindings(&root));
            for finding in &findings {
                println!(
                    "{}:{}: unregistered or misplaced {} `{}`",
                    finding.file.display(),
                    finding.line,
                    finding.kind,
                    finding.literal
                );
            }
            let stale = xtask::sources::stale_not_codes(&root);
            for not in &stale {
                println!(
                    "{}: NOT_CODES entry `{}` matches nothing (remove it)",
                    not.file, not.line
                );
            }
            if findings.is_empty() && stale.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        _ => {
            eprintln!("usage: cargo xtask codegen [--check] | codes | check-layers");
            ExitCode::from(2)
        }
    }
}
