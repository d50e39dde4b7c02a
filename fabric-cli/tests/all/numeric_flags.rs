//! Issue 33 item 7: every numeric flag and argument of the `fabric` binary refuses huge,
//! negative, NaN, infinite and non-numeric values with exit 2 and a config error naming it,
//! never a panic (exit 101).
//!
//! The flags are found by walking the binary's own `--help` tree: every numeric argument
//! shows the value name `<SECONDS>` or `<PID>` (a unit test in `fabric-cli/src/flags.rs`
//! walks clap's command tree and fails on a numeric argument that does not use the shared
//! parsers, which set those names), so a new flag is covered here without being listed.

use std::process::{Command, Output};

use crate::support::{fabric, stdout_json};

/// Values no numeric flag accepts.
const REFUSED: [&str; 11] = [
    "1e30",
    "1e400",
    "-1",
    "-1e30",
    "0",
    "NaN",
    "inf",
    "-inf",
    "18446744073709551616",
    "abc",
    "",
];

/// The value names of the numeric arguments.
const NUMERIC: [&str; 4] = ["<SECONDS>", "<BYTES>", "<COUNT>", "<PID>"];

fn help(path: &[String]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_fabric"))
        .args(path)
        .arg("--help")
        .output()
        .expect("fabric --help");
    assert_eq!(output.status.code(), Some(0), "{path:?}: {output:?}");
    String::from_utf8(output.stdout).expect("utf-8 help")
}

/// The lines of a help section (`Commands:`, `Arguments:`, `Options:`).
fn section<'a>(text: &'a str, title: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|line| *line != title)
        .skip(1)
        .take_while(|line| line.starts_with(' '))
        .collect()
}

/// One numeric argument: the subcommand path, the usage tokens after it, and the flag
/// (`--start-timeout`) or positional (`<PID>`).
struct Numeric {
    path: Vec<String>,
    usage: Vec<String>,
    arg: String,
}

fn walk(path: Vec<String>, out: &mut Vec<Numeric>) {
    let text = help(&path);
    let usage: Vec<String> = text
        .lines()
        .find_map(|line| line.strip_prefix("Usage: "))
        .expect("usage line")
        .split_whitespace()
        .skip(1 + path.len())
        .map(str::to_owned)
        .collect();
    for line in section(&text, "Options:") {
        let words: Vec<&str> = line.split_whitespace().collect();
        if let Some(at) = words.iter().position(|word| NUMERIC.contains(word)) {
            let flag = words[..at]
                .iter()
                .rev()
                .find(|word| word.starts_with("--"))
                .expect("a long flag");
            out.push(Numeric {
                path: path.clone(),
                usage: usage.clone(),
                arg: flag.trim_end_matches(',').to_owned(),
            });
        }
    }
    for line in section(&text, "Arguments:") {
        if let Some(word) = line
            .split_whitespace()
            .next()
            .filter(|w| NUMERIC.contains(w))
        {
            out.push(Numeric {
                path: path.clone(),
                usage: usage.clone(),
                arg: word.to_owned(),
            });
        }
    }
    for line in section(&text, "Commands:") {
        let name = line.split_whitespace().next().expect("command name");
        if name != "help" {
            let mut next = path.clone();
            next.push(name.to_owned());
            walk(next, out);
        }
    }
}

/// The argument vector giving `value` to `numeric`; other required arguments of the usage
/// line get placeholders.
fn argv(numeric: &Numeric, value: &str) -> Vec<String> {
    let mut argv = numeric.path.clone();
    let mut previous_was_flag = false;
    for token in &numeric.usage {
        if token.starts_with('[') {
            continue;
        }
        if token.starts_with("--") {
            argv.push(token.clone());
            previous_was_flag = true;
            continue;
        }
        let positional = token.starts_with('<') && !previous_was_flag;
        previous_was_flag = false;
        if positional && *token == numeric.arg {
            argv.push(value.to_owned());
        } else {
            argv.push("placeholder".to_owned());
        }
    }
    if numeric.arg.starts_with("--") {
        // Options go before a `--` that ends the usage's options (`-- <ARGV>...`).
        let at = argv.iter().position(|t| t == "--").unwrap_or(argv.len());
        argv.splice(at..at, [numeric.arg.clone(), value.to_owned()]);
    }
    argv
}

fn name_of(arg: &str) -> String {
    match arg.strip_prefix('<').and_then(|a| a.strip_suffix('>')) {
        Some(positional) => positional.to_ascii_lowercase(),
        None => arg.to_owned(),
    }
}

#[test]
fn every_numeric_flag_refuses_out_of_range_values_with_exit_2_naming_it() {
    let mut found = Vec::new();
    walk(Vec::new(), &mut found);
    let names: Vec<String> = found.iter().map(|n| name_of(&n.arg)).collect();
    for known in [
        "--backpressure-timeout",
        "--start-timeout",
        "--timeout",
        "pid",
    ] {
        assert!(names.iter().any(|n| n == known), "{known}: {names:?}");
    }
    for numeric in &found {
        let flag = name_of(&numeric.arg);
        for value in REFUSED {
            let argv = argv(numeric, value);
            let args: Vec<&str> = argv.iter().map(String::as_str).collect();
            let output: Output = fabric(&args);
            assert_ne!(
                output.status.code(),
                Some(101),
                "{argv:?} panicked: {output:?}"
            );
            assert_eq!(output.status.code(), Some(2), "{argv:?}: {output:?}");
            let error = &stdout_json(&output)["error"];
            assert_eq!(error["path"], flag.as_str(), "{argv:?}: {error}");
            assert_eq!(error["stage"], "config", "{argv:?}: {error}");
            assert!(
                error["message"].as_str().expect("message").contains(&flag),
                "{argv:?}: {error}"
            );
        }
    }
}

/// The largest accepted values run: `--backpressure-timeout 1e9` serves until SIGTERM and
/// exits 0 (it used to convert without a bound; `1e30` panicked).
#[test]
fn the_largest_backpressure_timeout_serves_and_stops() {
    /// Kills the collector if the test fails before it stopped.
    struct Reap(std::process::Child);
    impl Drop for Reap {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut served = Reap(
        Command::new(env!("CARGO_BIN_EXE_fabric"))
            .args(["collector", "serve", "--backpressure-timeout", "1e9"])
            .env_remove("FABRIC_COLLECTOR_TOKEN")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("spawn collector"),
    );
    let stdout = served.0.stdout.take().expect("stdout");
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut first)
        .expect("first line");
    let line: serde_json::Value = serde_json::from_str(&first).expect("first line JSON");
    assert!(line["base_url"].is_string(), "{line}");
    let pid = i32::try_from(served.0.id()).expect("pid");
    fabric_reactor::sys::signal_process(pid, fabric_reactor::sys::SIGTERM).expect("SIGTERM");
    let status = served.0.wait().expect("wait");
    assert_eq!(status.code(), Some(0), "{status:?}");
}
