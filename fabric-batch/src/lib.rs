//! Batches: a data set of items run through one config — concurrent, retried, resumable.
//!
//! A [`Batch`] runs [`Item`]s (JSON lines: a RunRequest, an input, or a multi-turn
//! `{"id", "requests"}`) on `concurrency` worker threads over `fabric-host`'s blocking
//! runtimes (no async runtime): items are pulled as workers free up, each attempt runs on
//! a fresh runtime or the worker's kept one ([`Isolation`]), runtime failures (the codes
//! of [`fabric_config::codes::BATCH_RETRYABLE`]) are retried with backoff and jitter, an
//! item's timeout stops its runtime, and each finished item is one [`BatchLine`] appended
//! whole to the [`Output`] in completion order. Pointing a batch at an existing output
//! skips the ids it already holds (resume). [`Cancel`] drains, then stops.
//!
//! ```
//! use fabric_batch::item::parse_line;
//!
//! let item = parse_line("items.jsonl", 3, r#"{"id": "q7", "input": "hi"}"#)
//!     .unwrap()
//!     .unwrap();
//! assert_eq!(item.id, "q7");
//! let plain = parse_line("items.jsonl", 4, r#""hello""#).unwrap().unwrap();
//! assert_eq!(plain.id, "4");
//! let bad = parse_line("items.jsonl", 5, "{oops").unwrap_err();
//! assert!(bad.message.contains("line 5"));
//! ```

#![forbid(unsafe_code)]

mod attempt;
mod engine;
pub mod item;
mod options;
mod output;
mod ready;
mod running;
mod tally;
mod warm;
mod wire;

pub use engine::{Batch, Observer};
pub use item::{Checker, Item, ItemReader, read_all};
pub use options::{BatchOptions, Cancel, Isolation};
pub use output::{Output, encode};
pub use running::{Pulled, Pushed, Running};
pub use wire::{
    AttemptRecord, BatchLine, BatchSummary, Latency, SystemStatsTotals, UsageTotals, Verdict,
};
