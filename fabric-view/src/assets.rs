//! The page's files, embedded at build time (`build.rs` over `assets/`): looked up by name
//! in a table, never on disk.

include!(concat!(env!("OUT_DIR"), "/assets.rs"));

/// An embedded file by its name (`app.js`, `fonts/x.woff2`); `None` for any other name.
pub(crate) fn find(name: &str) -> Option<&'static [u8]> {
    ASSETS
        .iter()
        .find(|(asset, _)| *asset == name)
        .map(|(_, bytes)| *bytes)
}

/// The content type of an asset, by its extension.
pub(crate) fn content_type(name: &str) -> &'static str {
    let extension = name.rsplit_once('.').map_or("", |(_, extension)| extension);
    match extension {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// What `index.html` writes where the token goes in its asset URLs
/// (`/assets/app.js?token={{token}}`): every request needs the token, the page's own
/// script and style sheet too, and a `<script src>` cannot send a header.
const TOKEN_SLOT: &str = "{{token}}";

/// `index.html` with `<meta name="fabric-token" content="TOKEN">` right after `<head>` and
/// the token in place of every `{{token}}` (the token is 64 hex digits: nothing to escape).
pub(crate) fn index_html(token: &str) -> Vec<u8> {
    let page = String::from_utf8_lossy(find("index.html").unwrap_or(b"<head></head>"));
    let page = page.replace(TOKEN_SLOT, token);
    let meta = format!("<meta name=\"fabric-token\" content=\"{token}\">");
    let at = page
        .to_ascii_lowercase()
        .find("<head>")
        .map_or(0, |at| at + "<head>".len());
    let mut out = String::with_capacity(page.len() + meta.len());
    out.push_str(&page[..at]);
    out.push_str(&meta);
    out.push_str(&page[at..]);
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_goes_right_after_head() {
        let page = String::from_utf8(index_html("ab12")).expect("utf-8");
        let head = page.find("<head>").expect("head");
        assert!(page[head..].starts_with("<head><meta name=\"fabric-token\" content=\"ab12\">"));
        assert!(page.contains("/assets/app.js?token=ab12"), "{page}");
        assert!(!page.contains(TOKEN_SLOT));
        assert_eq!(content_type("app.js"), "text/javascript; charset=utf-8");
        assert_eq!(content_type("x"), "application/octet-stream");
        assert!(find("../Cargo.toml").is_none());
    }
}
