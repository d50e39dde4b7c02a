//! JSON syntax errors in words: what is wrong at the position serde_json stopped, said to a
//! person who wrote the file ("the text ends inside an object: a `}` is missing"), never
//! the parser's vocabulary (`EOF while parsing an object`, `expected ident`). Reasons never
//! quote the input.

/// What is wrong, in words, for a syntax (or end-of-input) error of `serde_json`; `text` is
/// the whole input, so that an empty one is called empty. Data errors (wrong shape) are
/// returned as serde_json words them, without the position.
///
/// ```
/// let error = serde_json::from_str::<serde_json::Value>("{\"a\": 1,}").unwrap_err();
/// assert_eq!(
///     fabric_config::json_syntax_reason(&error, "{\"a\": 1,}"),
///     "trailing comma: JSON allows no `,` before `]` or `}`"
/// );
/// ```
pub fn json_syntax_reason(error: &serde_json::Error, text: &str) -> String {
    if text.trim().is_empty() {
        return "the text is empty: expected a JSON value".to_owned();
    }
    let full = error.to_string();
    let parser = match full.rfind(" at line ") {
        Some(index) if error.line() > 0 => &full[..index],
        _ => full.as_str(),
    };
    words(parser).map_or_else(|| parser.to_owned(), str::to_owned)
}

/// serde_json's syntax messages (its `ErrorCode` display texts) in words.
fn words(parser: &str) -> Option<&'static str> {
    Some(match parser {
        "EOF while parsing a value" => "the text ends where a value was expected",
        "EOF while parsing a list" => "the text ends inside an array: a `]` is missing",
        "EOF while parsing an object" => "the text ends inside an object: a `}` is missing",
        "EOF while parsing a string" => "the text ends inside a string: a closing `\"` is missing",
        "expected `:`" => "expected a `:` after the object key",
        "expected `,` or `]`" => "expected a `,` or the closing `]` after an array element",
        "expected `,` or `}`" => "expected a `,` or the closing `}` after an object member",
        "expected ident" => {
            "expected a JSON value: the only bare words are `true`, `false` and `null` \
             (text goes in double quotes)"
        }
        "expected value" => {
            "expected a JSON value (an object, an array, a string in double quotes, a number, \
             `true`, `false` or `null`)"
        }
        "expected `\"`" => "expected a `\"` to start a string",
        "key must be a string" => "expected a string key in double quotes",
        "trailing comma" => "trailing comma: JSON allows no `,` before `]` or `}`",
        "trailing characters" => "unexpected text after the JSON value (one value per document)",
        "invalid escape" => {
            "invalid escape in a string (`\\n`, `\\t`, `\\\"`, `\\\\`, `\\uXXXX` are valid)"
        }
        "invalid number" => "invalid number",
        "number out of range" => "number out of range",
        "invalid unicode code point"
        | "lone leading surrogate in hex escape"
        | "unexpected end of hex escape" => "invalid `\\u` escape in a string",
        "control character (\\u0000-\\u001F) found while parsing a string" => {
            "a raw control character (such as a line break or a tab) inside a string: write it \
             escaped (`\\n`, `\\t`)"
        }
        "recursion limit exceeded" => "nested too deeply (more than 128 levels)",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(text: &str) -> String {
        let error = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
        json_syntax_reason(&error, text)
    }

    #[test]
    fn every_syntax_error_is_said_in_words() {
        let cases = [
            ("", "the text is empty: expected a JSON value"),
            (" \n", "the text is empty: expected a JSON value"),
            ("{", "the text ends inside an object: a `}` is missing"),
            ("[1", "the text ends inside an array: a `]` is missing"),
            ("{\"a\":", "the text ends where a value was expected"),
            (
                "\"abc",
                "the text ends inside a string: a closing `\"` is missing",
            ),
            ("{\"a\" 1}", "expected a `:` after the object key"),
            (
                "[1 2]",
                "expected a `,` or the closing `]` after an array element",
            ),
            (
                "{\"a\":1 \"b\":2}",
                "expected a `,` or the closing `}` after an object member",
            ),
            ("{x: 1}", "expected a string key in double quotes"),
            (
                "{\"a\": 1,}",
                "trailing comma: JSON allows no `,` before `]` or `}`",
            ),
            (
                "{} x",
                "unexpected text after the JSON value (one value per document)",
            ),
            (
                "\"\\q\"",
                "invalid escape in a string (`\\n`, `\\t`, `\\\"`, `\\\\`, `\\uXXXX` are valid)",
            ),
            (
                "\"\\u12zz\"",
                "invalid escape in a string (`\\n`, `\\t`, `\\\"`, `\\\\`, `\\uXXXX` are valid)",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(reason(text), want, "{text:?}");
        }
        assert!(reason("nope").starts_with("expected a JSON value: the only bare words"));
        assert!(reason(":").starts_with("expected a JSON value (an object"));
        assert!(reason("\"a\nb\"").starts_with("a raw control character"));
        let deep = "[".repeat(200);
        assert_eq!(reason(&deep), "nested too deeply (more than 128 levels)");
    }

    #[test]
    fn reasons_never_quote_the_input() {
        for text in [
            "{\"S3CR3T\" 1}",
            "[\"S3CR3T\" 2]",
            "S3CR3T",
            "{\"a\": \"S3CR3T\\q\"}",
        ] {
            assert!(!reason(text).contains("S3CR3T"), "{text}");
        }
    }
}
