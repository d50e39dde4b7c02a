//! `cargo run -p xtask -- codegen [--check]`: writes (or checks) the generated binding
//! models and tables; `cargo run -p xtask -- codes`: lists unregistered literal codes.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = xtask::repo_root();
    match args.first().map(String::as_str) {
        Some("codegen") => {
            let check = args.iter().any(|a| a == "--check");
            let files = match xtask::generate() {
                Ok(files) => files,
                Err(error) => {
                    eprintln!("error: {error}");
                    return ExitCode::FAILURE;
                }
            };
            let mut stale = 0;
            for (path, text) in files {
                let target = root.join(path);
                if std::fs::read_to_string(&target).ok().as_deref() == Some(text.as_str()) {
                    continue;
                }
                stale += 1;
                if check {
                    eprintln!("stale: {path}");
                } else if let Err(error) = std::fs::write(&target, text) {
                    eprintln!("error: cannot write {path}: {error}");
                    return ExitCode::FAILURE;
                } else {
                    println!("wrote {path}");
                }
            }
            if check && stale > 0 {
                eprintln!("run `cargo run -p xtask -- codegen` and commit the result");
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        Some("codes") => {
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
            eprintln!("usage: cargo run -p xtask -- codegen [--check] | codes");
            ExitCode::from(2)
        }
    }
}
