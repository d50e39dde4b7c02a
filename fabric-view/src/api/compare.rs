//! `GET /api/compare?a=ID&b=ID`: two batches joined by item id (status, tokens, duration of
//! each side), or two runs side by side.

use std::collections::BTreeMap;

use super::{Answered, bad_request, not_found, ok};
use crate::index::{Batch, Kind, Shared};
use crate::wire::{CompareAnswer, CompareRow, Side};

fn sides(batch_id: &str, batch: &Batch) -> impl Iterator<Item = (String, Side)> {
    batch.items.iter().enumerate().map(move |(row, item)| {
        (
            item.id.clone(),
            Side {
                status: item.status.as_str().to_owned(),
                total_tokens: item.total_tokens,
                duration_ms: Some(item.duration_ms),
                run_id: format!("{batch_id}_{row}"),
            },
        )
    })
}

fn run_side(shared: &Shared, id: &str) -> Option<Side> {
    let index = shared.read();
    let (_, entry) = index.entry(id)?;
    match &entry.kind {
        Kind::Result(meta) | Kind::Invocation(meta) => Some(Side {
            status: meta.status.clone().unwrap_or_default(),
            total_tokens: None,
            duration_ms: meta.duration_ms,
            run_id: id.to_owned(),
        }),
        _ => None,
    }
}

pub(super) fn compare(shared: &Shared, query: &crate::route::Query) -> Answered {
    let (Some(a), Some(b)) = (query.get("a"), query.get("b")) else {
        return bad_request(
            "query parameters `a` and `b` (two batch ids or two run ids) are required",
        );
    };
    {
        let index = shared.read();
        match (index.batch(a), index.batch(b)) {
            (Some((_, left)), Some((_, right))) => {
                let mut rows: BTreeMap<String, CompareRow> = BTreeMap::new();
                for (left_side, (id, side)) in sides(a, left)
                    .map(|pair| (true, pair))
                    .chain(sides(b, right).map(|pair| (false, pair)))
                {
                    let row = rows.entry(id.clone()).or_insert_with(|| CompareRow {
                        id,
                        a: None,
                        b: None,
                    });
                    *(if left_side { &mut row.a } else { &mut row.b }) = Some(side);
                }
                return ok(&CompareAnswer {
                    kind: "batches",
                    a: a.to_owned(),
                    b: b.to_owned(),
                    rows: rows.into_values().collect(),
                });
            }
            (Some(_), None) | (None, Some(_)) => {
                return bad_request("`a` and `b` must both be batches or both be runs");
            }
            (None, None) => {}
        }
    }
    match (run_side(shared, a), run_side(shared, b)) {
        (Some(left), Some(right)) => ok(&CompareAnswer {
            kind: "runs",
            a: a.to_owned(),
            b: b.to_owned(),
            rows: vec![CompareRow {
                id: "run".to_owned(),
                a: Some(left),
                b: Some(right),
            }],
        }),
        _ => not_found("batch or run"),
    }
}
