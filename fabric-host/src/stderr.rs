//! Host stderr: a redacted log file (`host.stderr.log`) and a bounded tail for errors.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::sync::Mutex;

/// Bytes of stderr kept for error diagnostics.
pub(crate) const TAIL_BYTES: usize = 8 * 1024;
/// A partial line longer than this is flushed (redacted) without waiting for `\n`.
const PARTIAL_LINE_BYTES: usize = 4 * 1024;
/// The log file stops growing after this many bytes (a note is written once).
const LOG_FILE_CAP: u64 = 64 * 1024 * 1024;

/// Collects one host's stderr. Shared between the reactor (writer) and the host handle
/// (reads the tail when it builds an error).
#[derive(Debug)]
pub(crate) struct StderrSink {
    state: Mutex<SinkState>,
}

#[derive(Debug)]
struct SinkState {
    tail: VecDeque<u8>,
    partial: Vec<u8>,
    file: Option<File>,
    file_bytes: u64,
    secrets: Vec<String>,
    /// Redacted bytes emitted to the tail so far (positions for [`StderrSink::since`]).
    emitted: u64,
    /// Per-invocation copy of the redacted lines (`stderr.txt`), when capturing.
    capture: Option<Capture>,
}

/// A bounded per-invocation copy of the redacted stderr.
#[derive(Debug, Default)]
pub(crate) struct Capture {
    /// The redacted bytes (at most the cap).
    pub bytes: Vec<u8>,
    /// Bytes dropped past the cap.
    pub dropped: u64,
    cap: usize,
}

impl StderrSink {
    /// `secrets`: values replaced by `***` (empty strings are ignored).
    pub(crate) fn new(file: Option<File>, secrets: Vec<String>) -> StderrSink {
        let mut secrets: Vec<String> = secrets.into_iter().filter(|s| !s.is_empty()).collect();
        // Longest first so a secret containing another one is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        StderrSink {
            state: Mutex::new(SinkState {
                tail: VecDeque::new(),
                partial: Vec::new(),
                file,
                file_bytes: 0,
                secrets,
                capture: None,
                emitted: 0,
            }),
        }
    }

    /// Appends raw stderr bytes.
    pub(crate) fn push(&self, bytes: &[u8]) {
        let mut state = self.lock();
        let mut rest = bytes;
        while let Some(newline) = rest.iter().position(|&b| b == b'\n') {
            state.partial.extend_from_slice(&rest[..=newline]);
            state.emit_partial();
            rest = &rest[newline + 1..];
        }
        state.partial.extend_from_slice(rest);
        if state.partial.len() > PARTIAL_LINE_BYTES {
            state.emit_partial();
        }
    }

    /// Writes any partial line (at host exit).
    pub(crate) fn flush(&self) {
        let mut state = self.lock();
        state.emit_partial();
    }

    /// Starts copying redacted stderr lines into a per-invocation buffer of at most `cap`
    /// bytes (replacing an unfinished capture).
    pub(crate) fn begin_capture(&self, cap: usize) {
        self.lock().capture = Some(Capture {
            cap,
            ..Capture::default()
        });
    }

    /// Ends the capture, first emitting a pending partial line into it.
    pub(crate) fn take_capture(&self) -> Option<Capture> {
        let mut state = self.lock();
        state.emit_partial();
        state.capture.take()
    }

    /// The redacted tail, including a pending partial line.
    pub(crate) fn tail(&self) -> String {
        let state = self.lock();
        let mut bytes: Vec<u8> = state.tail.iter().copied().collect();
        bytes.extend_from_slice(&state.partial);
        let text = redact(&String::from_utf8_lossy(&bytes), &state.secrets);
        // Keep at most TAIL_BYTES, cut at a char boundary.
        if text.len() <= TAIL_BYTES {
            return text;
        }
        let mut start = text.len() - TAIL_BYTES;
        while !text.is_char_boundary(start) {
            start += 1;
        }
        text[start..].to_owned()
    }

    /// A position in the stream: what is written after it is returned by [`Self::since`].
    pub(crate) fn mark(&self) -> u64 {
        self.lock().emitted
    }

    /// The redacted stderr written after `mark` (including a pending partial line), at most
    /// the last [`TAIL_BYTES`]: what the host printed during one operation.
    pub(crate) fn since(&self, mark: u64) -> String {
        let state = self.lock();
        let new = usize::try_from(state.emitted.saturating_sub(mark)).unwrap_or(usize::MAX);
        let skip = state.tail.len().saturating_sub(new);
        let mut bytes: Vec<u8> = state.tail.iter().skip(skip).copied().collect();
        bytes.extend_from_slice(&state.partial);
        let text = redact(&String::from_utf8_lossy(&bytes), &state.secrets);
        if text.len() <= TAIL_BYTES {
            return text;
        }
        let mut start = text.len() - TAIL_BYTES;
        while !text.is_char_boundary(start) {
            start += 1;
        }
        text[start..].to_owned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SinkState> {
        // A poisoned sink only ever holds bytes; keep using it.
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

impl SinkState {
    fn emit_partial(&mut self) {
        if self.partial.is_empty() {
            return;
        }
        let line = redact(&String::from_utf8_lossy(&self.partial), &self.secrets);
        self.partial.clear();
        if self.partial.capacity() > 2 * PARTIAL_LINE_BYTES {
            self.partial = Vec::new();
        }
        if let Some(file) = &mut self.file {
            if self.file_bytes < LOG_FILE_CAP {
                // Disk errors only lose diagnostics; the host keeps running.
                if file.write_all(line.as_bytes()).is_err() {
                    self.file = None;
                }
                self.file_bytes += line.len() as u64;
                if self.file_bytes >= LOG_FILE_CAP
                    && let Some(file) = &mut self.file
                {
                    let _ = file.write_all(b"\n[fabric: host.stderr.log size cap reached]\n");
                }
            }
        }
        if let Some(capture) = &mut self.capture {
            let room = capture.cap.saturating_sub(capture.bytes.len());
            let take = line.len().min(room);
            capture.bytes.extend_from_slice(&line.as_bytes()[..take]);
            capture.dropped += (line.len() - take) as u64;
        }
        self.emitted += line.len() as u64;
        for &b in line.as_bytes() {
            if self.tail.len() == TAIL_BYTES {
                self.tail.pop_front();
            }
            self.tail.push_back(b);
        }
    }
}

/// Replaces every occurrence of each secret with `***`.
pub(crate) fn redact(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_owned();
    for secret in secrets {
        if !secret.is_empty() && out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), "***");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_is_bounded_and_redacted() {
        let sink = StderrSink::new(None, vec!["s3cr3t".into(), String::new()]);
        for i in 0..2000 {
            sink.push(format!("line {i} token=s3cr3t\n").as_bytes());
        }
        sink.push(b"partial s3cr");
        sink.push(b"3t end");
        let tail = sink.tail();
        assert!(tail.len() <= TAIL_BYTES);
        assert!(!tail.contains("s3cr3t"), "secret leaked into the tail");
        assert!(tail.contains("line 1999 token=***"));
        assert!(tail.ends_with("partial *** end"));
    }

    #[test]
    fn capture_is_bounded_redacted_and_per_invocation() {
        let sink = StderrSink::new(None, vec!["s3cr3t".into()]);
        sink.push(b"before\n");
        sink.begin_capture(24);
        sink.push(b"one s3cr3t\ntwo ");
        sink.push(b"three four five six\n");
        let capture = sink.take_capture().expect("capture");
        assert_eq!(capture.bytes, b"one ***\ntwo three four f");
        assert_eq!(capture.dropped, 8);
        assert!(sink.take_capture().is_none());
        sink.push(b"after\n");
        assert!(sink.tail().ends_with("after\n"));
    }

    #[test]
    fn since_returns_only_what_followed_the_mark() {
        let sink = StderrSink::new(None, vec!["k3y".into()]);
        sink.push(b"earlier noise\n");
        let mark = sink.mark();
        assert_eq!(sink.since(mark), "");
        sink.push(b"Traceback\nRuntimeError: k3y missing\npartial");
        assert_eq!(
            sink.since(mark),
            "Traceback\nRuntimeError: *** missing\npartial"
        );
        for _ in 0..2000 {
            sink.push(b"0123456789\n");
        }
        assert!(sink.since(mark).len() <= TAIL_BYTES);
    }

    #[test]
    fn log_file_is_redacted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("host.stderr.log");
        let file = File::create(&path).expect("create");
        let sink = StderrSink::new(Some(file), vec!["hunter2".into()]);
        sink.push(b"pw=hunter2\nno newline hunter2");
        sink.flush();
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(text, "pw=***\nno newline ***");
    }
}
