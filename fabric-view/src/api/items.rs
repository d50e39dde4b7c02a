//! `GET /api/batches/{id}/items`: the item table filtered, sorted and paged over the rows
//! the index keeps in memory.

use std::cmp::Ordering;

use super::{Answered, bad_request, not_found, ok};
use crate::index::{Item, Shared, Status};
use crate::route::Query;
use crate::wire::{ItemRow, ItemsAnswer};

/// The default and largest page.
const DEFAULT_LIMIT: u64 = 200;
const MAX_LIMIT: u64 = 1000;

/// The columns a table sorts by.
const SORTS: &[&str] = &[
    "row",
    "id",
    "status",
    "attempts",
    "duration_ms",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "error_code",
];

/// A row as the page shows it.
pub(crate) fn row(batch_id: &str, row: usize, item: &Item) -> ItemRow {
    ItemRow {
        row: row as u64,
        id: item.id.clone(),
        status: item.status.as_str(),
        attempts: item.attempts,
        duration_ms: item.duration_ms,
        input_tokens: item.input_tokens,
        output_tokens: item.output_tokens,
        total_tokens: item.total_tokens,
        error_code: item.error_code.clone(),
        run_id: format!("{batch_id}_{row}"),
    }
}

fn compare(sort: &str, a: &Item, b: &Item) -> Ordering {
    match sort {
        "id" => a.id.cmp(&b.id),
        "status" => a.status.cmp(&b.status),
        "attempts" => a.attempts.cmp(&b.attempts),
        "duration_ms" => a.duration_ms.cmp(&b.duration_ms),
        "input_tokens" => a.input_tokens.cmp(&b.input_tokens),
        "output_tokens" => a.output_tokens.cmp(&b.output_tokens),
        "total_tokens" => a.total_tokens.cmp(&b.total_tokens),
        "error_code" => a.error_code.cmp(&b.error_code),
        _ => Ordering::Equal,
    }
}

pub(super) fn items(shared: &Shared, id: &str, query: &Query) -> Answered {
    let (offset, limit) = match (
        query.number("offset", 0),
        query.number("limit", DEFAULT_LIMIT),
    ) {
        (Ok(offset), Ok(limit)) => (offset, limit.min(MAX_LIMIT)),
        (Err(message), _) | (_, Err(message)) => return bad_request(&message),
    };
    let status = match query.get("status").map(Status::parse) {
        Some(None) => {
            return bad_request(
                "query parameter `status` is not succeeded, failed, cancelled or errored",
            );
        }
        Some(Some(status)) => Some(status),
        None => None,
    };
    let sort = query.get("sort").unwrap_or("row");
    if !SORTS.contains(&sort) {
        return bad_request(&format!(
            "query parameter `sort` is not one of {}",
            SORTS.join(", ")
        ));
    }
    let descending = match query.get("order") {
        None | Some("asc") => false,
        Some("desc") => true,
        Some(_) => return bad_request("query parameter `order` is not asc or desc"),
    };
    let error_code = query.get("error_code");
    let text = query.get("q").map(str::to_lowercase);
    let index = shared.read();
    let Some((_, batch)) = index.batch(id) else {
        return not_found("batch");
    };
    let mut rows: Vec<usize> = batch
        .items
        .iter()
        .enumerate()
        .filter(|(_, item)| status.is_none_or(|s| item.status == s))
        .filter(|(_, item)| error_code.is_none_or(|c| item.error_code.as_deref() == Some(c)))
        .filter(|(_, item)| {
            text.as_deref().is_none_or(|t| {
                item.id.to_lowercase().contains(t)
                    || item.error_code.as_deref().is_some_and(|c| c.contains(t))
            })
        })
        .map(|(row, _)| row)
        .collect();
    if sort != "row" {
        rows.sort_by(|&a, &b| compare(sort, &batch.items[a], &batch.items[b]).then(a.cmp(&b)));
    }
    if descending {
        rows.reverse();
    }
    let total = rows.len() as u64;
    let items = rows
        .into_iter()
        .skip(offset as usize)
        .take(limit as usize)
        .map(|r| row(id, r, &batch.items[r]))
        .collect();
    ok(&ItemsAnswer {
        total,
        offset,
        items,
    })
}
