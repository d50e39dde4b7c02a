//! Host stderr: a redacted log file (`host.stderr.log`, a two-segment ring) and a bounded
//! tail for errors.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::beneath::{Beneath, Refusal};
use std::sync::Mutex;

/// Bytes of stderr kept for error diagnostics.
pub const TAIL_BYTES: usize = 8 * 1024;
/// A partial line longer than this is flushed (redacted) without waiting for `\n`.
const PARTIAL_LINE_BYTES: usize = 4 * 1024;
/// Default size of one `host.stderr.log` segment (at most two are kept: 2 MiB per runtime,
/// in FABRIC_HOME, which is RAM when it lives in `/dev/shm`).
pub const DEFAULT_STDERR_LOG_BYTES: u64 = 1024 * 1024;

/// The redacted stderr log as a two-segment ring: when `host.stderr.log` would grow past
/// `segment_bytes`, it is renamed to `host.stderr.log.1` (replacing the older segment) and
/// a new one is started. At most `2 × segment_bytes` are kept and the newest output always
/// is (the tail is what explains a failure).
///
/// The adapter can write in the log's directory (its FABRIC_HOME): the ring keeps that
/// directory open and renames and creates its segments there by name, so a directory
/// swapped for a link later never redirects them, and a segment is never opened through a
/// link or as a FIFO (`O_NOFOLLOW | O_NONBLOCK`, regular files only).
#[derive(Debug)]
pub struct LogRing {
    file: File,
    dir: Beneath,
    name: PathBuf,
    previous: PathBuf,
    segment_bytes: u64,
    written: u64,
}

impl LogRing {
    /// Opens (appending, created 0600, never through a symlink) the log at `path`.
    pub fn open(path: &Path, segment_bytes: u64) -> io::Result<LogRing> {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(io::ErrorKind::InvalidInput.into());
        };
        let parent = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        let dir = Beneath::open(parent)?;
        let name = PathBuf::from(name);
        let file = open_log(&dir, &name, false)?;
        let written = file.metadata()?.len();
        let previous = LogRing::previous_segment(&name);
        Ok(LogRing {
            file,
            dir,
            name,
            previous,
            segment_bytes: segment_bytes.max(1),
            written,
        })
    }

    /// The older segment's path: `<log>.1`.
    pub fn previous_segment(path: &Path) -> PathBuf {
        let mut name = OsString::from(path.as_os_str());
        name.push(".1");
        PathBuf::from(name)
    }

    fn write(&mut self, line: &[u8]) -> io::Result<()> {
        // A single line longer than a segment keeps its end.
        let cap = usize::try_from(self.segment_bytes).unwrap_or(usize::MAX);
        let line = &line[line.len().saturating_sub(cap)..];
        if self.written > 0 && self.written + line.len() as u64 > self.segment_bytes {
            self.dir
                .rename(&self.name, &self.previous)
                .map_err(refusal_error)?;
            self.file = open_log(&self.dir, &self.name, true)?;
            self.written = 0;
        }
        self.file.write_all(line)?;
        self.written += line.len() as u64;
        Ok(())
    }
}

fn open_log(dir: &Beneath, name: &Path, truncate: bool) -> io::Result<File> {
    dir.append(name, 0o600, truncate).map_err(refusal_error)
}

fn refusal_error(refusal: Refusal) -> io::Error {
    match refusal {
        Refusal::Io(error) => error,
        refusal => io::Error::new(io::ErrorKind::InvalidInput, refusal.to_string()),
    }
}

/// Collects one host's stderr. Shared between the reactor (writer) and the host handle
/// (reads the tail when it builds an error).
#[derive(Debug)]
pub struct StderrSink {
    state: Mutex<SinkState>,
}

#[derive(Debug)]
struct SinkState {
    tail: VecDeque<u8>,
    partial: Vec<u8>,
    log: Option<LogRing>,
    secrets: Vec<String>,
    /// Redacted bytes emitted to the tail so far (positions for [`StderrSink::since`]).
    emitted: u64,
    /// Per-invocation copy of the redacted lines (`stderr.txt`), when capturing.
    capture: Option<Capture>,
}

/// A bounded per-invocation copy of the redacted stderr.
#[derive(Debug, Default)]
pub struct Capture {
    /// The redacted bytes (at most the cap).
    pub bytes: Vec<u8>,
    /// Bytes dropped past the cap.
    pub dropped: u64,
    cap: usize,
}

impl StderrSink {
    /// `secrets`: values replaced by `***` (empty strings are ignored).
    pub fn new(log: Option<LogRing>, secrets: Vec<String>) -> StderrSink {
        let mut secrets: Vec<String> = secrets.into_iter().filter(|s| !s.is_empty()).collect();
        // Longest first so a secret containing another one is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        StderrSink {
            state: Mutex::new(SinkState {
                tail: VecDeque::new(),
                partial: Vec::new(),
                log,
                secrets,
                capture: None,
                emitted: 0,
            }),
        }
    }

    /// Appends raw stderr bytes.
    pub fn push(&self, bytes: &[u8]) {
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
    pub fn flush(&self) {
        let mut state = self.lock();
        state.emit_partial();
    }

    /// Starts copying redacted stderr lines into a per-invocation buffer of at most `cap`
    /// bytes (replacing an unfinished capture).
    pub fn begin_capture(&self, cap: usize) {
        self.lock().capture = Some(Capture {
            cap,
            ..Capture::default()
        });
    }

    /// Ends the capture, first emitting a pending partial line into it.
    pub fn take_capture(&self) -> Option<Capture> {
        let mut state = self.lock();
        state.emit_partial();
        state.capture.take()
    }

    /// The redacted tail, including a pending partial line.
    pub fn tail(&self) -> String {
        self.since(0)
    }

    /// A position in the stream: what is written after it is returned by [`Self::since`].
    pub fn mark(&self) -> u64 {
        self.lock().emitted
    }

    /// The redacted stderr written after `mark` (including a pending partial line), at most
    /// the last [`TAIL_BYTES`]: what the host printed during one operation.
    pub fn since(&self, mark: u64) -> String {
        let state = self.lock();
        let new = usize::try_from(state.emitted.saturating_sub(mark)).unwrap_or(usize::MAX);
        let skip = state.tail.len().saturating_sub(new);
        let mut bytes: Vec<u8> = state.tail.iter().skip(skip).copied().collect();
        bytes.extend_from_slice(&state.partial);
        let text = redact(&String::from_utf8_lossy(&bytes), &state.secrets);
        keep_end(&text, TAIL_BYTES).to_owned()
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
        if let Some(log) = &mut self.log {
            // Disk errors only lose diagnostics; the host keeps running.
            if log.write(line.as_bytes()).is_err() {
                self.log = None;
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
/// The last at most `max` bytes of `text`, cut at a char boundary.
pub fn keep_end(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

pub fn redact(text: &str, secrets: &[String]) -> String {
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
        let log = LogRing::open(&path, DEFAULT_STDERR_LOG_BYTES).expect("open");
        let sink = StderrSink::new(Some(log), vec!["hunter2".into()]);
        sink.push(b"pw=hunter2\nno newline hunter2");
        sink.flush();
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(text, "pw=***\nno newline ***");
    }

    #[test]
    fn log_is_a_two_segment_ring_keeping_the_tail() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("host.stderr.log");
        let log = LogRing::open(&path, 1000).expect("open");
        let sink = StderrSink::new(Some(log), vec!["hunter2".into()]);
        for i in 0..10_000 {
            sink.push(format!("line {i} pw=hunter2\n").as_bytes());
        }
        sink.push(&[b'x'; 5000]);
        sink.push(b"\nlast line\n");
        sink.flush();
        let current = std::fs::read_to_string(&path).expect("current");
        let previous = std::fs::read_to_string(LogRing::previous_segment(&path)).expect("previous");
        assert!(current.len() <= 1000 && previous.len() <= 1000);
        assert!(current.ends_with("last line\n"), "{current}");
        assert!(
            previous.ends_with(&"x".repeat(10)),
            "an overlong line keeps its end"
        );
        assert!(!current.contains("hunter2") && !previous.contains("hunter2"));
        // The segments are private and are not followed through symlinks.
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let link = dir.path().join("link.log");
        std::os::unix::fs::symlink(&path, &link).expect("symlink");
        assert!(LogRing::open(&link, 1000).is_err());
    }

    #[test]
    fn a_log_directory_swapped_for_a_link_never_redirects_the_segments() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("outside");
        let home = dir.path().join("home");
        std::fs::create_dir(&home).expect("mkdir");
        let log = LogRing::open(&home.join("host.stderr.log"), 100).expect("open");
        let sink = StderrSink::new(Some(log), Vec::new());
        sink.push(b"before the swap\n");
        sink.flush();
        // The adapter swaps its FABRIC_HOME for a link to a directory of the user's, with a
        // FIFO where the next segment would be created.
        std::fs::rename(&home, dir.path().join("moved")).expect("rename");
        std::os::unix::fs::symlink(outside.path(), &home).expect("symlink");
        let fifo = std::process::Command::new("mkfifo")
            .arg(outside.path().join("host.stderr.log"))
            .status()
            .expect("mkfifo");
        assert!(fifo.success());
        for i in 0..50 {
            sink.push(format!("line {i} after the swap\n").as_bytes());
        }
        sink.flush();
        let names: Vec<_> = std::fs::read_dir(outside.path())
            .expect("outside")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["host.stderr.log"], "only the planted FIFO is there");
        let moved = dir.path().join("moved");
        let current = std::fs::read_to_string(moved.join("host.stderr.log")).expect("current");
        assert!(current.ends_with("line 49 after the swap\n"), "{current}");
        assert!(moved.join("host.stderr.log.1").exists());
    }
}
