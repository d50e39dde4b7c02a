//! A batch output (`RESULTS.jsonl`, one `BatchLine` a line) kept in memory as compact rows,
//! read once and then appended to from the offset it reached (a running batch's new lines).

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use fabric_config::agent::RunStatus;
use fabric_config::batch::BatchLine;
use serde_json::Value;

use crate::wire::{Counts, Problem};

/// Bad lines one batch reports (the rest are counted in the last problem's message).
const MAX_PROBLEMS: usize = 20;

/// How an item ended, as the table shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Status {
    Succeeded,
    Failed,
    Cancelled,
    Errored,
}

impl Status {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Succeeded => "succeeded",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
            Status::Errored => "errored",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Status> {
        [
            Status::Succeeded,
            Status::Failed,
            Status::Cancelled,
            Status::Errored,
        ]
        .into_iter()
        .find(|status| status.as_str() == text)
    }
}

/// One line of a batch, without its RunResult (read again from `offset` when asked for).
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub(crate) id: String,
    pub(crate) status: Status,
    pub(crate) attempts: u32,
    pub(crate) duration_ms: u64,
    pub(crate) input_tokens: Option<u64>,
    pub(crate) output_tokens: Option<u64>,
    pub(crate) total_tokens: Option<u64>,
    pub(crate) error_code: Option<String>,
    pub(crate) invocation_id: Option<String>,
    /// Where its line starts in the file, and its length.
    pub(crate) offset: u64,
    pub(crate) len: u64,
}

impl Item {
    fn of(line: &BatchLine, offset: u64, len: u64) -> Item {
        let result = line.result.as_ref();
        let usage = result.and_then(|result| result.usage.as_ref());
        let status = match result.map(|result| result.status) {
            Some(RunStatus::Succeeded) => Status::Succeeded,
            Some(RunStatus::Cancelled) => Status::Cancelled,
            Some(_) => Status::Failed,
            None => Status::Errored,
        };
        let error = result
            .and_then(|result| result.error.as_ref())
            .or(line.error.as_ref());
        Item {
            id: line.id.clone(),
            status,
            attempts: line.attempts,
            duration_ms: line.duration_ms,
            input_tokens: usage.and_then(|usage| usage.input_tokens),
            output_tokens: usage.and_then(|usage| usage.output_tokens),
            total_tokens: usage.and_then(|usage| {
                usage
                    .total_tokens
                    .or(match (usage.input_tokens, usage.output_tokens) {
                        (Some(input), Some(output)) => Some(input + output),
                        _ => None,
                    })
            }),
            error_code: error.map(|error| error.code.clone()),
            invocation_id: result.map(|result| result.invocation_id.clone()),
            offset,
            len,
        }
    }
}

/// A batch output file in memory.
#[derive(Debug, Clone)]
pub(crate) struct Batch {
    pub(crate) items: Vec<Item>,
    /// Bytes read so far (always the end of a whole line).
    pub(crate) offset: u64,
    pub(crate) counts: Counts,
    pub(crate) problems: Vec<Problem>,
    bad_lines: u64,
    /// When lines last arrived.
    pub(crate) grew_at: Instant,
    /// Changed by every append (sorted orders are rebuilt after it); unique per process.
    pub(crate) version: u64,
    /// Where this batch's reading started (0, or the end of the batch it appends to).
    pub(crate) start: u64,
    /// When the index first read it, and how many items it had then (the rate of a
    /// running batch without a summary is measured from there).
    pub(crate) seen_at: Instant,
    pub(crate) seen_items: usize,
}

impl Batch {
    pub(crate) fn new() -> Batch {
        Batch::starting_at(0)
    }

    /// An empty batch whose lines start at `offset` (what a rescan reads of a grown file,
    /// then [`Batch::absorb`]ed).
    pub(crate) fn starting_at(offset: u64) -> Batch {
        Batch {
            items: Vec::new(),
            offset,
            counts: Counts::default(),
            problems: Vec::new(),
            bad_lines: 0,
            grew_at: Instant::now(),
            version: 0,
            start: offset,
            seen_at: Instant::now(),
            seen_items: 0,
        }
    }

    /// Reads the whole lines after `offset` in `path` (a torn last line waits for its end).
    pub(crate) fn read_more(&mut self, path: &Path) -> std::io::Result<bool> {
        let mut file = std::fs::File::open(path)?;
        file.seek(SeekFrom::Start(self.offset))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let Some(end) = bytes.iter().rposition(|&b| b == b'\n') else {
            return Ok(false);
        };
        let mut at = 0usize;
        for line in bytes[..end].split(|&b| b == b'\n') {
            let offset = self.offset + at as u64;
            at += line.len() + 1;
            self.push_line(path, line, offset);
        }
        self.offset += end as u64 + 1;
        self.grew_at = Instant::now();
        self.version = next_version();
        Ok(true)
    }

    fn push_line(&mut self, path: &Path, line: &[u8], offset: u64) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        match serde_json::from_slice::<BatchLine>(line) {
            Ok(parsed) => {
                let item = Item::of(&parsed, offset, line.len() as u64);
                let count = match item.status {
                    Status::Succeeded => &mut self.counts.succeeded,
                    Status::Failed => &mut self.counts.failed,
                    Status::Cancelled => &mut self.counts.cancelled,
                    Status::Errored => &mut self.counts.errored,
                };
                *count += 1;
                self.items.push(item);
            }
            Err(error) => {
                self.bad_lines += 1;
                if self.problems.len() < MAX_PROBLEMS {
                    self.problems.push(Problem {
                        path: path.display().to_string(),
                        message: format!(
                            "line at byte {offset} is not a batch line (skipped): {error}"
                        ),
                    });
                }
            }
        }
    }

    /// Items per second since the index first read this batch (`None` before a second
    /// passed or when nothing arrived since).
    pub(crate) fn observed_rate(&self) -> Option<f64> {
        let seconds = self.seen_at.elapsed().as_secs_f64();
        let arrived = self.items.len().saturating_sub(self.seen_items);
        (seconds >= 1.0 && arrived > 0).then(|| arrived as f64 / seconds)
    }

    /// Appends the lines `more` read after this batch's end.
    pub(crate) fn absorb(&mut self, more: Batch) {
        if more.items.is_empty() && more.offset == self.offset {
            return;
        }
        self.items.extend(more.items);
        self.offset = more.offset;
        self.counts.succeeded += more.counts.succeeded;
        self.counts.failed += more.counts.failed;
        self.counts.cancelled += more.counts.cancelled;
        self.counts.errored += more.counts.errored;
        self.bad_lines += more.bad_lines;
        let room = MAX_PROBLEMS.saturating_sub(self.problems.len());
        self.problems.extend(more.problems.into_iter().take(room));
        self.grew_at = more.grew_at;
        self.version = next_version();
    }

    /// The RunResult line of item `row`, decoded again from the file.
    pub(crate) fn line(&self, path: &Path, row: usize) -> Result<BatchLine, String> {
        let item = self.items.get(row).ok_or("no such row")?;
        let mut file = std::fs::File::open(path).map_err(|error| error.to_string())?;
        file.seek(SeekFrom::Start(item.offset))
            .map_err(|error| error.to_string())?;
        let mut bytes = vec![0; item.len as usize];
        file.read_exact(&mut bytes)
            .map_err(|error| error.to_string())?;
        serde_json::from_slice(&bytes).map_err(|error| format!("line changed: {error}"))
    }
}

/// A version no batch had before (sorted orders cached by version never match another
/// batch's rows, even one read again from the start).
fn next_version() -> u64 {
    static VERSIONS: AtomicU64 = AtomicU64::new(1);
    VERSIONS.fetch_add(1, Ordering::Relaxed)
}

/// Whether a first line is a batch line: `{"id", "attempts", "result" | "error", ...}`.
pub(crate) fn is_batch_line(first: &Value) -> bool {
    first.get("id").is_some_and(Value::is_string)
        && first.get("attempts").is_some_and(Value::is_u64)
        && (first.get("result").is_some() || first.get("error").is_some())
}
