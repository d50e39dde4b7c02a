//! Where the stub writes one JSON line per request.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use serde_json::Value;

/// The request log: nowhere, standard error, or a file (appended, flushed per line).
#[derive(Debug, Default)]
pub enum RequestLog {
    /// Not logged.
    #[default]
    Off,
    /// One line per request on standard error.
    Stderr,
    /// One line per request in this file.
    File(BufWriter<File>),
}

impl RequestLog {
    /// A log appending to `path` (created when missing).
    pub fn file(path: &Path) -> std::io::Result<RequestLog> {
        let file = File::options().create(true).append(true).open(path)?;
        Ok(RequestLog::File(BufWriter::new(file)))
    }

    pub(crate) fn write(&mut self, line: &Value) {
        // A full disk loses log lines, never an answer.
        match self {
            RequestLog::Off => {}
            RequestLog::Stderr => {
                let _ = writeln!(std::io::stderr().lock(), "{line}");
            }
            RequestLog::File(file) => {
                let _ = writeln!(file, "{line}");
                let _ = file.flush();
            }
        }
    }
}
