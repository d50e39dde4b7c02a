//! The one parser of the command line's numbers: every numeric flag and argument of `fabric`
//! is a [`Seconds`], a [`Count`] or a [`Pid`] read by the `value_parser`s here, so a value out of range
//! (huge, negative, NaN, infinite, not a number) is refused before any command runs, with
//! the error every command prints: `{"error": {"code", "stage": "config", "message",
//! "path": "<flag>"}}` and exit 2 ([`report`]).
//!
//! A new numeric flag uses one of these parsers, `allow_hyphen_values = true` (so `-1`
//! reaches the parser instead of being read as a flag) and the value name `SECONDS`,
//! `BYTES`, `COUNT` or `PID` (by which `tests/all/numeric_flags.rs` finds it in `--help`); a test walks the
//! whole command tree and fails on a numeric argument that does not.

use std::process::ExitCode;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use fabric_config::codes;
use fabric_config::health::MAX_CHECK_TIMEOUT_SECONDS;
use fabric_config::seconds::{self, MAX_TIMEOUT_SECONDS};
use fabric_config::{ConfigRule, ErrorInfo, Stage};

use crate::output::{EXIT_INVALID, print_error};

/// A duration in seconds: finite, above 0 and at most its flag's maximum.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Seconds(pub f64);

impl std::fmt::Display for Seconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl Seconds {
    /// The value as a duration (always representable: the parsers check the range).
    pub fn duration(self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.0)
    }
}

/// A process id: an integer from 1 to 2^31 − 1 (`pid_t`; 0 and negative ids name process
/// groups, never one process).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pid(pub u32);

/// A count of things or bytes: an integer between its flag's minimum and maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count(pub u64);

impl std::fmt::Display for Count {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl Count {
    /// The count as a `usize` (always representable: the parsers' maxima are below 2^40).
    pub fn get(self) -> usize {
        usize::try_from(self.0).unwrap_or(usize::MAX)
    }
}

/// Why a value was refused: the registered code and a reason that names no value (the
/// flag is added by [`report`]).
#[derive(Debug)]
pub struct FlagError {
    code: &'static str,
    reason: String,
}

impl std::fmt::Display for FlagError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for FlagError {}

fn parse_seconds(text: &str, max: f64) -> Result<Seconds, FlagError> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|value| seconds::in_range(*value, max))
        .map(Seconds)
        .ok_or_else(|| FlagError {
            code: ConfigRule::TimeoutSecondsInvalid.code(),
            reason: format!("must be a finite number of seconds greater than 0 and at most {max}"),
        })
}

/// A timeout flag: seconds in (0, 10^9].
pub fn seconds(text: &str) -> Result<Seconds, FlagError> {
    parse_seconds(text, MAX_TIMEOUT_SECONDS)
}

/// A health-check budget: seconds in (0, 86400], as the C ABI's `timeout_seconds`.
pub fn check_seconds(text: &str) -> Result<Seconds, FlagError> {
    parse_seconds(text, MAX_CHECK_TIMEOUT_SECONDS)
}

fn parse_count(text: &str, min: u64, max: u64, what: &str) -> Result<Count, FlagError> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|count| (min..=max).contains(count))
        .map(Count)
        .ok_or_else(|| FlagError {
            code: codes::INVALID_VALUE,
            reason: format!("must be {what}: an integer from {min} to {max}"),
        })
}

/// A memory budget in bytes: from one largest record (the collector's minimum) to 1 TiB.
pub fn memory_bytes(text: &str) -> Result<Count, FlagError> {
    let min = fabric_relay::collector::MIN_MEMORY_BUDGET as u64;
    parse_count(text, min, 1 << 40, "a number of bytes")
}

/// A number of registrations, connections or other things held at once: 1 to 2^20.
pub fn count(text: &str) -> Result<Count, FlagError> {
    parse_count(text, 1, 1 << 20, "a count")
}

/// A budget of model calls or tokens: 1 to 2^53 - 1.
pub fn budget(text: &str) -> Result<Count, FlagError> {
    parse_count(text, 1, (1 << 53) - 1, "a count")
}

/// A size in bytes of output kept or read: 1 to 1 TiB (the core bounds it further).
pub fn bytes(text: &str) -> Result<Count, FlagError> {
    parse_count(text, 1, 1 << 40, "a number of bytes")
}

/// A process id (see [`Pid`]).
pub fn pid(text: &str) -> Result<Pid, FlagError> {
    text.trim()
        .parse::<u32>()
        .ok()
        .filter(|pid| (1..=i32::MAX as u32).contains(pid))
        .map(Pid)
        .ok_or_else(|| FlagError {
            code: codes::INVALID_VALUE,
            reason: format!("must be a process id: an integer from 1 to {}", i32::MAX),
        })
}

/// The flag a clap error is about: `--start-timeout` for an option, `pid` for the
/// positional `<PID>`.
fn flag_of(error: &clap::Error) -> Option<String> {
    let ContextValue::String(shown) = error.get(ContextKind::InvalidArg)? else {
        return None;
    };
    let first = shown.split_whitespace().next()?;
    Some(
        match first.strip_prefix('<').and_then(|s| s.strip_suffix('>')) {
            Some(positional) => positional.to_ascii_lowercase(),
            None => first.to_owned(),
        },
    )
}

/// The error of a value one of this module's parsers refused, as every command prints
/// errors; `None` for any other clap error.
pub fn error_info(error: &clap::Error) -> Option<ErrorInfo> {
    if error.kind() != ErrorKind::ValueValidation {
        return None;
    }
    let refused = std::error::Error::source(error)?.downcast_ref::<FlagError>()?;
    let flag = flag_of(error)?;
    Some(
        ErrorInfo::new(
            Stage::Config,
            refused.code,
            format!("`{flag}`: {}", refused.reason),
        )
        .with_metadata("path", flag),
    )
}

/// Reports a command-line error: a refused number as JSON on stdout (exit 2), anything
/// else (usage errors, `--help`, `--version`) as clap prints it.
pub fn report(error: clap::Error) -> ExitCode {
    match error_info(&error) {
        Some(info) => print_error(&info, EXIT_INVALID),
        None => error.exit(),
    }
}

#[cfg(test)]
mod tests {
    use std::any::TypeId;

    use clap::{CommandFactory, Parser};

    use super::*;

    /// Values no numeric flag accepts.
    const REFUSED: [&str; 12] = [
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
        "0x10",
    ];

    /// Every numeric type an argument could be parsed into without this module.
    fn raw_numeric(id: &clap::builder::ValueParser) -> bool {
        let kinds = [
            TypeId::of::<f32>(),
            TypeId::of::<f64>(),
            TypeId::of::<u8>(),
            TypeId::of::<u16>(),
            TypeId::of::<u32>(),
            TypeId::of::<u64>(),
            TypeId::of::<u128>(),
            TypeId::of::<usize>(),
            TypeId::of::<i8>(),
            TypeId::of::<i16>(),
            TypeId::of::<i32>(),
            TypeId::of::<i64>(),
            TypeId::of::<i128>(),
            TypeId::of::<isize>(),
            TypeId::of::<std::time::Duration>(),
        ];
        kinds.iter().any(|kind| id.type_id() == *kind)
    }

    fn ours(id: &clap::builder::ValueParser) -> bool {
        id.type_id() == TypeId::of::<Seconds>()
            || id.type_id() == TypeId::of::<Pid>()
            || id.type_id() == TypeId::of::<Count>()
    }

    /// Every (subcommand path, command) of the tree.
    fn commands(
        path: Vec<String>,
        command: &clap::Command,
        out: &mut Vec<(Vec<String>, clap::Command)>,
    ) {
        out.push((path.clone(), command.clone()));
        for sub in command.get_subcommands() {
            let mut next = path.clone();
            next.push(sub.get_name().to_owned());
            commands(next, sub, out);
        }
    }

    /// An argument vector reaching `arg` of `command` with `value`: the other required
    /// arguments get placeholders.
    fn argv(path: &[String], command: &clap::Command, arg: &clap::Arg, value: &str) -> Vec<String> {
        let mut argv = vec!["fabric".to_owned()];
        argv.extend(path.iter().cloned());
        let mut positionals: Vec<&clap::Arg> = command
            .get_positionals()
            .filter(|p| p.is_required_set() || p.get_id() == arg.get_id())
            .collect();
        positionals.sort_by_key(|p| p.get_index());
        // A `last` positional (after `--`) goes after the options.
        let (last, leading): (Vec<&clap::Arg>, Vec<&clap::Arg>) =
            positionals.into_iter().partition(|p| p.is_last_set());
        let placeholder = |positional: &clap::Arg| {
            if positional.get_id() == arg.get_id() {
                value.to_owned()
            } else {
                "placeholder".to_owned()
            }
        };
        argv.extend(leading.into_iter().map(placeholder));
        for option in command.get_opts() {
            if option.get_id() == arg.get_id() {
                argv.push(format!("--{}", option.get_long().expect("long flag")));
                argv.push(value.to_owned());
            } else if option.is_required_set() {
                argv.push(format!("--{}", option.get_long().expect("long flag")));
                argv.push("placeholder".to_owned());
            }
        }
        if !last.is_empty() {
            argv.push("--".to_owned());
            argv.extend(last.into_iter().map(placeholder));
        }
        argv
    }

    /// Issue 33 item 7: every numeric flag and argument of `fabric`, found by walking the
    /// command tree (a new one is covered without listing it), refuses huge, negative, NaN,
    /// infinite and non-numeric values with a config error naming it.
    #[test]
    fn every_numeric_argument_refuses_out_of_range_values_naming_itself() {
        let root = crate::Cli::command();
        let mut all = Vec::new();
        commands(Vec::new(), &root, &mut all);
        let mut checked = Vec::new();
        for (path, command) in &all {
            for arg in command.get_arguments() {
                if !arg.get_action().takes_values() {
                    continue;
                }
                let parser = arg.get_value_parser();
                let name = format!("{} {}", path.join(" "), arg.get_id());
                assert!(
                    !raw_numeric(parser),
                    "`fabric {name}` parses a number without crate::flags: use flags::seconds, \
                     flags::check_seconds or flags::pid"
                );
                if !ours(parser) {
                    continue;
                }
                assert!(
                    arg.is_allow_hyphen_values_set(),
                    "`fabric {name}` needs allow_hyphen_values = true"
                );
                let shown: &[&str] = if parser.type_id() == TypeId::of::<Pid>() {
                    &["PID"]
                } else if parser.type_id() == TypeId::of::<Count>() {
                    &["BYTES", "COUNT"]
                } else {
                    &["SECONDS"]
                };
                let names = arg
                    .get_value_names()
                    .map(|names| names.iter().map(|n| n.as_str()).collect::<Vec<_>>())
                    .unwrap_or_default();
                assert!(
                    names.len() == 1 && shown.contains(&names[0]),
                    "`fabric {name}` must show the value name {shown:?}, not {names:?} (tests/all/numeric_flags.rs finds the numeric flags by it)"
                );
                let flag = match arg.get_long() {
                    Some(long) => format!("--{long}"),
                    None => arg.get_id().as_str().to_ascii_lowercase(),
                };
                for value in REFUSED {
                    let argv = argv(path, command, arg, value);
                    let error = crate::Cli::try_parse_from(&argv)
                        .expect_err(&format!("{argv:?} was accepted"));
                    let info = error_info(&error)
                        .unwrap_or_else(|| panic!("{argv:?}: not a flag error: {error}"));
                    assert_eq!(info.path(), Some(flag.as_str()), "{argv:?}");
                    assert_eq!(info.stage, Stage::Config, "{argv:?}");
                    assert!(info.message.contains(&flag), "{argv:?}: {}", info.message);
                    assert!(
                        codes::find(&info.code).is_some(),
                        "{argv:?}: unregistered code {}",
                        info.code
                    );
                }
                checked.push(flag);
            }
        }
        // The tree has numeric flags at all (the walk found them).
        for known in [
            "--backpressure-timeout",
            "--memory-budget-bytes",
            "--max-registrations",
            "--body-idle-timeout",
            "--start-timeout",
            "--timeout",
            "pid",
        ] {
            assert!(
                checked.iter().any(|flag| flag == known),
                "{known} not found: {checked:?}"
            );
        }
    }

    #[test]
    fn the_largest_values_are_accepted_and_convert() {
        assert_eq!(
            seconds("1e9").map(Seconds::duration).ok(),
            Some(std::time::Duration::from_secs(1_000_000_000))
        );
        assert!(seconds("1000000000.5").is_err());
        assert!(check_seconds("86400").is_ok());
        assert!(check_seconds("86400.5").is_err());
        assert_eq!(pid("2147483647").ok(), Some(Pid(i32::MAX as u32)));
        assert!(pid("2147483648").is_err());
        assert!(pid("0").is_err());
    }
}
