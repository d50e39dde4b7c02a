//! The output file: lines appended whole, and resume (the ids it already holds).

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use fabric_config::{ErrorInfo, Stage, codes};
use serde_json::Value;

use crate::wire::BatchLine;

/// The JSON text of `line` (encoded once per item: the output file and the caller get the
/// same text).
pub fn encode(line: &BatchLine) -> Result<String, ErrorInfo> {
    serde_json::to_string(line).map_err(|error| {
        ErrorInfo::new(
            Stage::Invoke,
            codes::INTERNAL_ENCODE,
            format!("cannot encode the line of item `{}`: {error}", line.id),
        )
    })
}

/// An output file opened for appending. Each line is one `write` of the whole line and
/// its newline, so a process killed at any moment leaves whole lines (and at most one
/// torn tail, which [`Output::open`] cuts off).
#[derive(Debug)]
pub struct Output {
    path: PathBuf,
    file: Mutex<File>,
}

fn failed(path: &Path, what: &str, error: &std::io::Error) -> ErrorInfo {
    ErrorInfo::new(
        Stage::Config,
        codes::BATCH_OUTPUT_FAILED,
        format!("cannot {what} output `{}`: {error}", path.display()),
    )
    .with_metadata("file", path.display().to_string())
}

impl Output {
    /// Opens (creating) `path` and returns it with the ids that already have a line
    /// there. A last line without its newline (a write cut short) is removed.
    pub fn open(path: &Path) -> Result<(Output, HashSet<String>), ErrorInfo> {
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(|error| failed(path, "open", &error))?;
        let mut text = Vec::new();
        file.read_to_end(&mut text)
            .map_err(|error| failed(path, "read", &error))?;
        let whole = text
            .iter()
            .rposition(|byte| *byte == b'\n')
            .map_or(0, |at| at + 1);
        if whole < text.len() {
            file.set_len(whole as u64)
                .map_err(|error| failed(path, "repair", &error))?;
            file.seek(SeekFrom::End(0))
                .map_err(|error| failed(path, "repair", &error))?;
        }
        let done = text[..whole]
            .split(|byte| *byte == b'\n')
            .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
            .filter(|value| value.get("result").is_some() || value.get("error").is_some())
            .filter_map(|value| value.get("id").and_then(Value::as_str).map(str::to_owned))
            .collect();
        Ok((
            Output {
                path: path.to_owned(),
                file: Mutex::new(file),
            },
            done,
        ))
    }

    /// Appends `json` (one encoded [`BatchLine`], see [`encode`]) whole, with its newline.
    pub fn write(&self, json: &str) -> Result<(), ErrorInfo> {
        let mut bytes = Vec::with_capacity(json.len() + 1);
        bytes.extend_from_slice(json.as_bytes());
        bytes.push(b'\n');
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        file.write_all(&bytes)
            .map_err(|error| failed(&self.path, "write", &error))
    }
}
