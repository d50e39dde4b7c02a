//! Name and value predicates of the config rules: reserved environment names, URLs,
//! environment variable names and HTTP header fields.

/// Variables the core sets (or, for the Relay pair, clears) for every adapter host; config can
/// neither set nor forward them.
pub const RESERVED_ENV_NAMES: &[&str] = &[
    "FABRIC_HOME",
    "FABRIC_RUNTIME_ID",
    "FABRIC_ARTIFACTS",
    "FABRIC_RELAY_ENABLED",
    "FABRIC_RELAY_CONFIG_PATH",
];

/// True when `name` is one of [`RESERVED_ENV_NAMES`].
pub fn is_reserved_env_name(name: &str) -> bool {
    RESERVED_ENV_NAMES.contains(&name)
}

/// True when `value` contains no whitespace or control characters (the URL parser would
/// silently strip tabs and newlines) and parses as an absolute URL (`url` crate, WHATWG
/// rules). A value with a `${NAME}` placeholder (expanded by the adapter, as in upstream's
/// examples) is only checked for whitespace and control characters.
pub fn is_url(value: &str) -> bool {
    if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return false;
    }
    value.contains("${") || url::Url::parse(value).is_ok_and(|url| !url.cannot_be_a_base())
}

/// True for `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) if first.is_ascii_alphabetic() || first == '_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// True when `name` is an RFC 7230 `token` (non-empty `tchar`s).
pub fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                )
        })
}

/// True when `value` is valid RFC 7230 field content: visible ASCII, space, tab and obs-text
/// (any non-ASCII character); no CR, LF, NUL or other control characters.
pub fn is_header_value(value: &str) -> bool {
    value
        .chars()
        .all(|c| c == ' ' || c == '\t' || (c.is_ascii_graphic()) || !c.is_ascii())
}
