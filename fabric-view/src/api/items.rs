//! `GET /api/batches/{id}/items`: the item table filtered, sorted and paged over the rows
//! the index keeps in memory.

use std::cmp::Ordering;

use super::{Answered, bad_request, not_found, ok};
use std::sync::{Arc, PoisonError};

use crate::index::{Batch, Item, Shared, Status};
use crate::route::Query;
use crate::wire::{ItemRow, ItemsAnswer};

/// The default and largest page.
const DEFAULT_LIMIT: u64 = 200;
const MAX_LIMIT: u64 = 1000;

/// Sorted orders kept (each 4 bytes per item).
const MAX_ORDERS: usize = 32;

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

/// A missing number sorts first.
fn number(value: Option<u64>) -> u64 {
    value.map_or(0, |v| v.saturating_add(1))
}

/// The sort key of a numeric column.
fn numeric_key(sort: &str) -> Option<fn(&Item) -> u64> {
    Some(match sort {
        "status" => |item: &Item| item.status as u64,
        "attempts" => |item: &Item| u64::from(item.attempts),
        "duration_ms" => |item: &Item| item.duration_ms,
        "input_tokens" => |item: &Item| number(item.input_tokens),
        "output_tokens" => |item: &Item| number(item.output_tokens),
        "total_tokens" => |item: &Item| number(item.total_tokens),
        _ => return None,
    })
}

/// The order of the text columns.
fn compare(sort: &str, a: &Item, b: &Item) -> Ordering {
    match sort {
        "id" => a.id.cmp(&b.id),
        "error_code" => a.error_code.cmp(&b.error_code),
        _ => Ordering::Equal,
    }
}

/// The rows of `batch` sorted by `sort` (ties by row), from the cache while the batch has
/// not grown; `None` for the row order.
pub(super) fn sorted(
    shared: &Shared,
    id: &str,
    sort: &str,
    batch: &Batch,
) -> Option<Arc<Vec<u32>>> {
    if sort == "row" {
        return None;
    }
    let key = (id.to_owned(), sort.to_owned());
    let mut orders = shared.orders.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((version, order)) = orders.get(&key)
        && *version == batch.version
    {
        return Some(Arc::clone(order));
    }
    let order = Arc::new(match numeric_key(sort) {
        // Numbers: (key, row) pairs sort fast and keep ties in row order.
        Some(key) => {
            let mut keyed: Vec<(u64, u32)> = (0..batch.items.len() as u32)
                .map(|row| (key(&batch.items[row as usize]), row))
                .collect();
            keyed.sort_unstable();
            keyed.into_iter().map(|(_, row)| row).collect()
        }
        None => {
            let mut order: Vec<u32> = (0..batch.items.len() as u32).collect();
            order.sort_by(|&a, &b| {
                compare(sort, &batch.items[a as usize], &batch.items[b as usize]).then(a.cmp(&b))
            });
            order
        }
    });
    if orders.len() >= MAX_ORDERS {
        orders.clear();
    }
    orders.insert(key, (batch.version, Arc::clone(&order)));
    Some(order)
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
    let order = sorted(shared, id, sort, batch);
    let keep = |item: &Item| {
        status.is_none_or(|s| item.status == s)
            && error_code.is_none_or(|c| item.error_code.as_deref() == Some(c))
            && text.as_deref().is_none_or(|t| {
                item.id.to_lowercase().contains(t)
                    || item.error_code.as_deref().is_some_and(|c| c.contains(t))
            })
    };
    let mut rows: Vec<usize> = match &order {
        Some(order) => order
            .iter()
            .map(|&row| row as usize)
            .filter(|&row| keep(&batch.items[row]))
            .collect(),
        None => (0..batch.items.len())
            .filter(|&row| keep(&batch.items[row]))
            .collect(),
    };
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
