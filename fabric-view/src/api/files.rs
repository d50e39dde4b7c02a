//! `GET /api/files/{id}`: a preview (`max_bytes`, `X-Fabric-Truncated: true` when cut) or,
//! with `download=1`, the whole file streamed in chunks (never read into memory whole).

use std::io::Read;

use super::{Answered, bad_request, not_found};
use crate::answer;
use crate::index::Shared;
use crate::route::Query;
use fabric_reactor::http::Outbox;

/// The default and largest preview.
const DEFAULT_PREVIEW: u64 = 64 * 1024;
const MAX_PREVIEW: u64 = 16 * 1024 * 1024;

/// Bytes read per chunk of a download.
const CHUNK: usize = 256 * 1024;

pub(super) fn file(
    shared: &Shared,
    id: &str,
    query: &Query,
    outbox: &Outbox,
    wake: &dyn Fn(),
) -> Answered {
    let Some(path) = shared.served_file(id) else {
        return not_found("file");
    };
    let download = query.get("download") == Some("1");
    let max = match query.number("max_bytes", DEFAULT_PREVIEW) {
        Ok(max) => max.min(MAX_PREVIEW),
        Err(message) => return bad_request(&message),
    };
    let Ok(mut file) = std::fs::File::open(&path) else {
        return not_found("file");
    };
    let Ok(size) = file.metadata().map(|m| m.len()) else {
        return not_found("file");
    };
    let name = path
        .file_name()
        .map(|n| {
            n.to_string_lossy()
                .replace(|c: char| !c.is_ascii_graphic() || c == '"', "_")
        })
        .unwrap_or_else(|| "file".into());
    let (length, extra) = if download {
        (
            size,
            format!("content-disposition: attachment; filename=\"{name}\"\r\n"),
        )
    } else if size > max {
        (max, "x-fabric-truncated: true\r\n".to_owned())
    } else {
        (size, String::new())
    };
    let content_type = if download {
        "application/octet-stream"
    } else {
        "text/plain; charset=utf-8"
    };
    if !outbox.push(&answer::head(200, content_type, length, &extra, false)) {
        return Answered::Streamed;
    }
    wake();
    let mut left = length;
    let mut chunk = vec![0; CHUNK];
    while left > 0 {
        let want = (left as usize).min(CHUNK);
        let read = match file.read(&mut chunk[..want]) {
            Ok(0) | Err(_) => break, // shrank meanwhile: the peer sees a short body
            Ok(read) => read,
        };
        if !outbox.push(&chunk[..read]) {
            break;
        }
        wake();
        left -= read as u64;
    }
    Answered::Streamed
}
