//! Pull streams: a streaming invocation yields JSON documents one at a time to whoever
//! pulls them, and its terminal RunResult separately.
//!
//! Two producers: the native OpenAI stream ([`OpenAiStream`], records posted by the
//! adapter to a loopback listener of the reactor) and the Relay ATOF stream
//! ([`AtofStream`], records routed by the runtime's collector). The consumer side is
//! [`PullStream`]: `next(timeout)`, `result()` and `close()`, callable from any thread.
//! A stream reaches its invocation only through [`StreamOwner`] (the runtime implements
//! it), so this module knows no runtime.

mod atof;
mod http;
mod listener;
mod openai;
mod records;
mod shared;

use std::time::Duration;

use fabric_config::RunResult;
use fabric_config::stream::StreamInfo;
use fabric_relay::StreamNext;
use fabric_relay::streaming::StreamCollector;

pub use atof::AtofStream;
pub(crate) use atof::{AtofOpened, capability_error};
pub(crate) use listener::StreamService;
pub use openai::OpenAiStream;
pub(crate) use openai::Opened;
pub(crate) use records::Identity;
pub(crate) use shared::Shared;

/// The OpenAI stream listener's connection limits (fuzzing, `crate::fuzz`).
pub(crate) fn listener_limits() -> fabric_reactor::http::Limits {
    listener::LIMITS
}

use crate::error::HostError;

/// The invocation a stream belongs to: how the stream collects its outcome and settles the
/// runtime (implemented by the runtime's side of a streaming turn).
pub(crate) trait StreamOwner: Send + Sync + std::fmt::Debug {
    /// Waits for the invocation's outcome; `None` once it was collected.
    fn finish(&self) -> Option<Result<RunResult, HostError>>;
    /// Releases the runtime with the stream's verdict (`failure`: a code that fails it).
    fn settle(&self, outcome: &Result<RunResult, HostError>, failure: Option<&str>);
    /// Whether the runtime is stopping or stopped.
    fn stopped(&self) -> bool;
    /// Where the runtime's Relay records go, if it streams them.
    fn collector(&self) -> Option<&StreamCollector>;
}

/// How long the consumer waits, after the host answered, for the stream's connection to
/// complete (upstream: 10 s).
pub const COMPLETION_WAIT: Duration = Duration::from_secs(10);

/// Item text one batch pull gathers before it stops adding items (a larger first item
/// comes alone): a consumer converts each batch at once (one JSON array, decoded in one
/// go), so an uncapped batch of a full queue (16 MiB) cost several copies of it at the peak.
pub const BATCH_BYTES: usize = 1024 * 1024;

/// What one batch pull returned ([`PullStream::next_batch`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamBatch {
    /// One or more items (JSON documents), in order.
    Items(Vec<String>),
    /// No more items.
    End,
    /// No item arrived within the timeout (a zero timeout: none was ready, or the stream
    /// still has to be finished by a waiting pull).
    Timeout,
}

/// A stream of JSON documents with a separate terminal result. Every method may be called
/// from any thread; `close` wakes a blocked `next`.
pub trait PullStream: Send + Sync + std::fmt::Debug {
    /// What the stream is (kind and ids).
    fn info(&self) -> &StreamInfo;
    /// The next item, waiting at most `timeout` (`None`: until one arrives or the stream
    /// ends). Errors end the stream (a later call returns the same error).
    fn next(&self, timeout: Option<Duration>) -> Result<StreamNext, HostError>;
    /// Every ready item, at most `max` (`0`: no limit beyond the queue's bound) and
    /// 1 MiB (`BATCH_BYTES`) of item text (at least one item), after
    /// waiting for the first one as [`PullStream::next`] does. A zero `timeout` never
    /// blocks: it returns ready items, [`StreamBatch::End`] (or the stream's error) once the
    /// stream is finished, else [`StreamBatch::Timeout`] — finishing the stream (waiting for
    /// the invocation) is left to a pull with a nonzero timeout, `result` or `close`.
    fn next_batch(&self, max: usize, timeout: Option<Duration>) -> Result<StreamBatch, HostError>;
    /// A descriptor that becomes readable when a zero-timeout [`PullStream::next_batch`]
    /// that returned [`StreamBatch::Timeout`] is worth repeating: an item arrived, the stream
    /// ended or failed, or it needs a waiting pull to finish (a zero-timeout pull then still
    /// times out). Owned by the stream (valid until it is dropped); the caller only polls it
    /// and reads (drains) it. Lets an event loop wait for items without a thread.
    fn ready_fd(&self) -> Result<std::os::fd::RawFd, HostError>;
    /// Waits for the invocation and returns its RunResult. The OpenAI stream drops unread
    /// items first; the ATOF stream keeps them readable until read to the end, closed, or
    /// the runtime is stopped (upstream's rule: the result does not finalize the records).
    fn result(&self) -> Result<RunResult, HostError>;
    /// Drops unread items and waits for the invocation without cancelling it; later
    /// `next` calls return [`StreamNext::End`]. Idempotent.
    fn close(&self);
    /// Whether the invocation's outcome is collected (read to the end, `result` taken, or
    /// closed), so [`PullStream::close`] and dropping the stream return without waiting
    /// for the adapter.
    fn settled(&self) -> bool;
}
