//! What a request's path and query ask for. A path names a page, an embedded asset, or an
//! API answer over ids of the server's index: no part of a URL is ever a file-system path.

use std::collections::HashMap;

/// A routed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// `/`: the page.
    Page,
    /// `/assets/<name>`: an embedded file.
    Asset(String),
    /// `/api/...`.
    Api(Api),
}

/// An API request (answered off the reactor thread).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Api {
    Index,
    Items { batch: String, query: Query },
    Stats { batch: String },
    Run { run: String },
    File { file: String, query: Query },
    Compare { query: Query },
}

/// A decoded query string (the last value of a repeated name wins).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Query(HashMap<String, String>);

impl Query {
    pub(crate) fn parse(query: &str) -> Query {
        Query(
            url::form_urlencoded::parse(query.as_bytes())
                .map(|(name, value)| (name.into_owned(), value.into_owned()))
                .collect(),
        )
    }

    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// A number, `default` when absent; `Err` names the parameter.
    pub(crate) fn number(&self, name: &str, default: u64) -> Result<u64, String> {
        match self.get(name) {
            None => Ok(default),
            Some(text) => text
                .parse()
                .map_err(|_| format!("query parameter `{name}` is not a whole number")),
        }
    }
}

/// An id of the index: letters, digits, `-` and `_` only (anything else is no id of ours).
fn id(segment: &str) -> Option<String> {
    let valid = !segment.is_empty()
        && segment.len() <= 128
        && segment
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    valid.then(|| segment.to_owned())
}

/// Routes a request path (without its query); `None` answers 404.
pub(crate) fn route(path: &str, query: &str) -> Option<Route> {
    if path == "/" || path == "/index.html" {
        return Some(Route::Page);
    }
    if let Some(name) = path.strip_prefix("/assets/") {
        return Some(Route::Asset(name.to_owned()));
    }
    let rest = path.strip_prefix("/api/")?;
    let parts: Vec<&str> = rest.split('/').collect();
    let query = Query::parse(query);
    let api = match parts.as_slice() {
        ["index"] => Api::Index,
        ["compare"] => Api::Compare { query },
        ["batches", batch, "items"] => Api::Items {
            batch: id(batch)?,
            query,
        },
        ["batches", batch, "stats"] => Api::Stats { batch: id(batch)? },
        ["runs", run] => Api::Run { run: id(run)? },
        ["files", file] => Api::File {
            file: id(file)?,
            query,
        },
        _ => return None,
    };
    Some(Route::Api(api))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_ids_never_file_names() {
        assert_eq!(route("/", ""), Some(Route::Page));
        assert_eq!(
            route("/api/runs/r1", ""),
            Some(Route::Api(Api::Run { run: "r1".into() }))
        );
        for bad in [
            "/api/files/..",
            "/api/files/%2e%2e",
            "/api/files/..%2fetc",
            "/etc/passwd",
            "/api/runs/a/b",
            "/api/files/",
            "/../api/index",
        ] {
            assert_eq!(route(bad, ""), None, "{bad}");
        }
        let query = Query::parse("status=failed&q=a%20b&limit=x");
        assert_eq!(query.get("q"), Some("a b"));
        assert!(query.number("limit", 1).unwrap_err().contains("`limit`"));
    }
}
