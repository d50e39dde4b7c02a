//! The API answers, built on a worker thread: JSON documents (bounded: tables are paged)
//! and files streamed in chunks.

mod compare;
mod conversation;
mod files;
mod items;
mod run;
mod samples;
mod stats;

use crate::answer;
use crate::index::Shared;
use crate::route::Api;
use fabric_reactor::http::Outbox;

/// What a handler answers: a whole answer, or a file it already streamed.
pub(crate) enum Answered {
    Whole(Vec<u8>),
    Streamed,
}

/// A 404 naming what was not found.
pub(crate) fn not_found(what: &str) -> Answered {
    Answered::Whole(answer::error(404, &format!("no such {what}"), false))
}

/// A 400 with the message (naming the parameter).
pub(crate) fn bad_request(message: &str) -> Answered {
    Answered::Whole(answer::error(400, message, false))
}

/// A JSON 200.
pub(crate) fn ok<T: serde::Serialize>(value: &T) -> Answered {
    Answered::Whole(answer::json(200, value, false))
}

/// Answers `request` into `outbox`; `wake` tells the reactor bytes are queued.
pub(crate) fn answer(shared: &Shared, request: Api, outbox: &Outbox, wake: &dyn Fn()) {
    let answered = match request {
        Api::Index => ok(&shared.listing()),
        Api::Items { batch, query } => items::items(shared, &batch, &query),
        Api::Stats { batch } => stats::stats(shared, &batch),
        Api::Run { run } => run::run(shared, &run),
        Api::File { file, query } => files::file(shared, &file, &query, outbox, wake),
        Api::Compare { query } => compare::compare(shared, &query),
    };
    if let Answered::Whole(bytes) = answered {
        outbox.push(&bytes);
    }
}
