//! `cargo xtask codegen [--check]`: writes (or only lists) every stale generated file;
//! `cargo xtask codes`: lists unregistered literal codes. (`cargo xtask` is the alias of
//! `cargo run -q -p xtask --` in `.cargo/config.toml`.)

use std::process::ExitCode;

fn codegen(root: &std::path::Path, check: bool) -> Result<usize, String> {
    let stale = xtask::stale(root)?;
    if !check {
        xtask::write(root, &stale)?;
    }
    for file in &stale {
        match (check, file.text.is_some()) {
            (true, true) => eprintln!("stale: {}", file.path),
            (true, false) => eprintln!("stale: {} (no longer generated)", file.path),
            (false, true) => println!("wrote {}", file.path),
            (false, false) => println!("removed {} (no longer generated)", file.path),
        }
    }
    Ok(stale.len())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let root = xtask::repo_root();
    match args.as_slice() {
        ["codegen", flags @ ..] if matches!(flags, [] | ["--check"]) => {
            let check = !flags.is_empty();
            match codegen(&root, check) {
                Err(error) => {
                    eprintln!("error: {error}");
                    ExitCode::FAILURE
                }
                Ok(stale) if check && stale > 0 => {
                    eprintln!("run `cargo xtask codegen` and commit the result");
                    ExitCode::FAILURE
                }
                Ok(_) => ExitCode::SUCCESS,
            }
        }
        ["codes"] => {
            let findings = xtask::sources::unregistered(&root);
            for finding in &findings {
                println!(
                    "{}:{}: unregistered {} `{}`",
                    finding.file.display(),
                    finding.line,
                    finding.kind,
                    finding.literal
                );
            }
            if findings.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        _ => {
            eprintln!("usage: cargo xtask codegen [--check] | codes");
            ExitCode::from(2)
        }
    }
}
