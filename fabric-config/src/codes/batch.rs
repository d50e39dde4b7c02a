//! Codes of batches (`fabric-batch`) and the one list of codes a batch retries.

use super::{Origin as O, code, declare};
use crate::error::Stage as S;

declare! {
    /// fabric-batch.
    pub(super) BATCH = [
        BATCH_ITEM_INVALID = "batch_item_invalid" => code(
            Some(S::Config),
            O::Host,
            "a batch item line is not JSON or not an item (a RunRequest, an input, or {\"id\", \"requests\"}); the message names the line",
        ),
        BATCH_ITEM_DUPLICATE = "batch_item_duplicate" => code(
            Some(S::Config),
            O::Host,
            "two batch items have the same id; the message names both lines",
        ),
        BATCH_ITEMS_READ_FAILED = "batch_items_read_failed" => code(
            Some(S::Config),
            O::Host,
            "the batch items could not be read",
        ),
        BATCH_OUTPUT_FAILED = "batch_output_failed" => code(
            Some(S::Config),
            O::Host,
            "the batch output file could not be read (resume), opened or written",
        ),
        BATCH_SETTINGS_INVALID = "batch_settings_invalid" => code(
            Some(S::Config),
            O::Host,
            "a batch option is out of range (concurrency and attempts at least 1, seconds finite and above 0); the message names the field",
        ),
        BATCH_ITEM_TIMEOUT = "batch_item_timeout" => code(
            Some(S::Invoke),
            O::Host,
            "a batch item ran past its timeout_seconds: its invocation was cancelled and its runtime stopped",
        ),
    ];
}

/// The codes whose error outcome a batch retries (while `attempts` allow): runtime failures
/// (the host could not start, crashed, timed out, broke down). Every other error, and a
/// `failed` RunResult (unless `retry_failed`), is final.
pub const BATCH_RETRYABLE: &[&str] = &[
    super::HOST_LAUNCH_FAILED,
    super::HOST_CRASHED,
    super::TIMEOUT,
    super::HOST_IO,
    super::PROTOCOL_ERROR,
    super::RUNTIME_FAILED,
    super::LIFECYCLE_ADAPTER_START_FAILED,
];
