//! `fabric env exec|read|write|list CONFIG --reference FILE|-`: the caller operations on an
//! existing environment (docs/sandbox.md, "Verifying inside the environment").
//!
//! Each command attaches to the reference with the config's provider, runs one operation,
//! prints its result as one JSON line and detaches (the environment stays as it is, owned
//! by whoever prepared it):
//!
//! - `exec [--cwd DIR] [--env NAME=VALUE]... [--stdin FILE|-] [--timeout SECONDS]
//!   [--output-limit BYTES] -- PROGRAM ARGS...` prints an ExecResult (`exit_code`,
//!   `stdout`, `stderr`, `*_truncated`, `timed_out`, `duration_ms`); the command's own exit
//!   code is in the JSON, the CLI exits 0 when the command ran;
//! - `write --path PATH --from FILE|- [--mode OCTAL]` prints `{"path"}`;
//! - `read --path PATH [--max-bytes N]` prints a FileContent (`content_hex`, `size`,
//!   `truncated`), or with `--raw` the bytes themselves;
//! - `list [--path PATH]` prints a FileListing.
//!
//! `--root artifacts` makes a file path relative to the artifact root instead of the
//! workspace. Exit codes as `fabric env`'s: 2 an invalid request or reference, 3 the
//! operation failed (a refused path, a missing file, a program that cannot start).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;

use fabric_config::codes;
use fabric_config::environment_ops::{
    DEFAULT_OUTPUT_LIMIT_BYTES, ExecRequest, FileListRequest, FileReadRequest, FileRoot,
    FileWriteRequest, MAX_FILE_WRITE_BYTES, MAX_READ_BYTES, MAX_WRITE_BYTES,
};
use fabric_config::{ErrorInfo, Stage};
use fabric_host::Environment;
use serde_json::json;

use crate::cmd_env::{Outcome, ReferenceArgs, invalid, with_attached};

/// Which root `--path` is relative to.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Root {
    /// The environment's workspace.
    Workspace,
    /// The environment's artifact root.
    Artifacts,
}

impl From<Root> for FileRoot {
    fn from(root: Root) -> FileRoot {
        match root {
            Root::Workspace => FileRoot::Workspace,
            Root::Artifacts => FileRoot::Artifacts,
        }
    }
}

/// Arguments of `fabric env exec`.
#[derive(Debug, clap::Args)]
pub struct ExecArgs {
    #[command(flatten)]
    pub target: ReferenceArgs,
    /// Working directory relative to the workspace.
    #[arg(long)]
    pub cwd: Option<String>,
    /// A variable added to the command's environment (repeatable).
    #[arg(long = "env", value_name = "NAME=VALUE")]
    pub env: Vec<String>,
    /// A file (`-`: stdin) whose bytes are the command's stdin (at most 96 KiB).
    #[arg(long, value_name = "FILE")]
    pub stdin: Option<PathBuf>,
    /// Deadline in seconds: the command's process group is killed when it passes.
    #[arg(long, value_name = "SECONDS", allow_hyphen_values = true, value_parser = crate::flags::seconds, default_value_t = crate::flags::Seconds(60.0))]
    pub timeout: crate::flags::Seconds,
    /// Bytes kept of each of stdout and stderr (at most 1 MiB).
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true, value_parser = crate::flags::bytes, default_value_t = crate::flags::Count(DEFAULT_OUTPUT_LIMIT_BYTES))]
    pub output_limit: crate::flags::Count,
    /// The program and its arguments (after `--`).
    #[arg(last = true, required = true)]
    pub argv: Vec<String>,
}

/// Arguments of `fabric env write`.
#[derive(Debug, clap::Args)]
pub struct WriteArgs {
    #[command(flatten)]
    pub target: ReferenceArgs,
    /// Path relative to the root.
    #[arg(long)]
    pub path: String,
    /// The file (`-`: stdin) whose bytes are written (at most 16 MiB).
    #[arg(long, value_name = "FILE")]
    pub from: PathBuf,
    /// Permission bits, octal; without it a new file gets 644.
    #[arg(long)]
    pub mode: Option<String>,
    /// The root `--path` is relative to.
    #[arg(long, value_enum, default_value = "workspace")]
    pub root: Root,
}

/// Arguments of `fabric env read`.
#[derive(Debug, clap::Args)]
pub struct ReadArgs {
    #[command(flatten)]
    pub target: ReferenceArgs,
    /// Path relative to the root.
    #[arg(long)]
    pub path: String,
    /// Bytes read at most (a longer file is `truncated`).
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true, value_parser = crate::flags::bytes, default_value_t = crate::flags::Count(MAX_READ_BYTES))]
    pub max_bytes: crate::flags::Count,
    /// Print the bytes themselves instead of a FileContent line.
    #[arg(long)]
    pub raw: bool,
    /// The root `--path` is relative to.
    #[arg(long, value_enum, default_value = "workspace")]
    pub root: Root,
}

/// Arguments of `fabric env list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub target: ReferenceArgs,
    /// Directory relative to the root (default: the root).
    #[arg(long, default_value = "")]
    pub path: String,
    /// The root `--path` is relative to.
    #[arg(long, value_enum, default_value = "workspace")]
    pub root: Root,
}

/// `fabric env exec`.
pub fn exec(args: &ExecArgs) -> Outcome {
    let mut env = BTreeMap::new();
    for pair in &args.env {
        let (name, value) = pair
            .split_once('=')
            .ok_or_else(|| invalid(bad_flag("--env", "must be NAME=VALUE")))?;
        env.insert(name.to_owned(), value.to_owned());
    }
    let stdin_hex = match &args.stdin {
        Some(path) => Some(hex::encode(read_input(path, "--stdin", MAX_WRITE_BYTES)?)),
        None => None,
    };
    let request = ExecRequest {
        argv: args.argv.clone(),
        cwd: args.cwd.clone(),
        env,
        stdin_hex,
        timeout_seconds: args.timeout.0,
        output_limit_bytes: args.output_limit.0,
    };
    with_attached(&args.target, |environment| {
        let output = environment.exec_request(&request)?;
        Ok(json!(output).to_string())
    })
}

/// `fabric env write`.
pub fn write(args: &WriteArgs) -> Outcome {
    let bytes = read_input(&args.from, "--from", MAX_FILE_WRITE_BYTES)?;
    let mode = match &args.mode {
        Some(text) => Some(
            u32::from_str_radix(text, 8)
                .map_err(|_| invalid(bad_flag("--mode", "must be octal permission bits")))?,
        ),
        None => None,
    };
    let request = FileWriteRequest {
        path: args.path.clone(),
        content_hex: hex::encode(bytes),
        mode,
        root: args.root.into(),
    };
    with_attached(&args.target, |environment| {
        environment.write_file(&request)?;
        Ok(json!({"path": request.path}).to_string())
    })
}

/// `fabric env read`.
pub fn read(args: &ReadArgs) -> Result<Option<String>, (ErrorInfo, u8)> {
    let request = FileReadRequest {
        path: args.path.clone(),
        max_bytes: args.max_bytes.0,
        root: args.root.into(),
    };
    let line = with_attached(&args.target, |environment| {
        Ok(json!(environment.read_file(&request)?).to_string())
    })?;
    if !args.raw {
        return Ok(Some(line));
    }
    let content: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
    let bytes = content["content_hex"]
        .as_str()
        .and_then(|h| hex::decode(h).ok())
        .unwrap_or_default();
    let _ = std::io::stdout().lock().write_all(&bytes);
    Ok(None)
}

/// `fabric env list`.
pub fn list(args: &ListArgs) -> Outcome {
    let request = FileListRequest {
        path: args.path.clone(),
        root: args.root.into(),
    };
    with_attached(&args.target, |environment: &Environment| {
        Ok(json!(environment.list_files(&request)?).to_string())
    })
}

/// The bytes of `path` (`-`: stdin), at most `max` of them.
fn read_input(path: &PathBuf, flag: &'static str, max: usize) -> Result<Vec<u8>, (ErrorInfo, u8)> {
    let mut bytes = Vec::new();
    let limit = max as u64 + 1;
    let read = if path.as_os_str() == "-" {
        std::io::stdin().take(limit).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|file| file.take(limit).read_to_end(&mut bytes))
    };
    read.map_err(|error| {
        invalid(bad_flag(
            flag,
            &format!("cannot read `{}`: {error}", path.display()),
        ))
    })?;
    if bytes.len() > max {
        return Err(invalid(bad_flag(
            flag,
            &format!("is above the {max}-byte limit"),
        )));
    }
    Ok(bytes)
}

fn bad_flag(flag: &'static str, reason: &str) -> ErrorInfo {
    ErrorInfo::new(
        Stage::Config,
        codes::INVALID_ENVIRONMENT_REQUEST,
        format!("`{flag}` {reason}"),
    )
    .with_metadata("path", flag)
}
