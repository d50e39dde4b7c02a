//! The conversation one RunResult states, as Responses-API input items with the facts beside
//! them ([`StatedItem`]), for readers other than the Gym mapping (`fabric view`): the same
//! rule the mapping uses — the Relay ATIF trajectory the result lists, else the captured
//! model calls.

use fabric_config::result::RunResult;

use super::annotated::{self, StatedItem};
use super::captured;

/// Where a stated conversation came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConversationSource {
    /// The Relay ATIF trajectory the result lists.
    Atif,
    /// The captured model calls (`model-calls.jsonl`): the last answered call's request and
    /// answer.
    ModelCalls,
}

/// The conversation `result` states: `Ok(None)` when it recorded neither a trajectory nor
/// model calls; `Err` says why the recorded one cannot be read (the file named).
pub fn result_conversation(
    result: &RunResult,
) -> Result<Option<(ConversationSource, Vec<StatedItem>)>, String> {
    match annotated::atif(result) {
        Ok(items) => Ok(Some((ConversationSource::Atif, items))),
        Err(Some(detail)) => Err(detail),
        Err(None) => {
            let records = captured::records(result)?;
            if records.is_empty() {
                return Ok(None);
            }
            let items = captured::conversation(&records)?;
            let items = annotated::captured(items, &records);
            Ok(Some((ConversationSource::ModelCalls, items)))
        }
    }
}
