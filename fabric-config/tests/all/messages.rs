//! Validation speaks the user's language: JSON syntax errors name the reason and position,
//! and decode errors say "a non-negative integer", never a Rust type name.

use fabric_config::{ConfigError, FabricConfig, RunRequest};
use serde_json::{Value, json};

const RUST_WORDS: &[&str] = &[
    "u8",
    "u16",
    "u32",
    "u64",
    "usize",
    "i32",
    "i64",
    "f32",
    "f64",
    "String",
    "Vec",
    "Option",
    "struct",
    "sequence",
    "a map",
    "unit",
    "identifier",
];

fn config_with(section: &str, value: Value) -> String {
    let mut config = json!({
        "schema_version": "fabric.agent/v1alpha1",
        "metadata": {"name": "m"},
        "harness": {"adapter_id": "fabric.scripted"}
    });
    config[section] = value;
    config.to_string()
}

fn assert_plain(message: &str) {
    for word in RUST_WORDS {
        let found = message
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .any(|token| token == *word)
            || (word.contains(' ') && message.contains(word));
        assert!(!found, "`{word}` in {message:?}");
    }
}

#[test]
fn wrong_types_are_described_without_rust_type_names() {
    let cases = [
        (
            "runtime",
            json!({"max_turns": "four"}),
            "a non-negative integer",
        ),
        (
            "runtime",
            json!({"max_turns": -1}),
            "a non-negative integer",
        ),
        (
            "runtime",
            json!({"max_turns": 2.5}),
            "a non-negative integer",
        ),
        ("runtime", json!({"timeout_seconds": "x"}), "a number"),
        ("tools", json!({"enabled": "all"}), "an array"),
        ("metadata", json!(5), "an object"),
        ("discovery", json!({"local_paths": {"a": 1}}), "an array"),
        ("harness", json!("fabric.scripted"), "an object"),
    ];
    for (section, value, expected) in cases {
        let text = config_with(section, value.clone());
        let error = FabricConfig::parse(&text).expect_err(&format!("{section}: {value}"));
        let message = error.to_string();
        assert!(
            message.contains(&format!("expected {expected}")),
            "{section} {value}: {message}"
        );
        assert_plain(&message);
    }
    let error = RunRequest::from_value(json!({"input": "x", "context": 5})).expect_err("context");
    assert!(error.to_string().contains("expected an object"), "{error}");
    assert_plain(&error.to_string());
}

#[test]
fn json_syntax_errors_name_the_reason_line_and_column() {
    let text = "{\n  \"metadata\": {\"name\": \"m\"},\n}";
    let error = FabricConfig::parse(text).expect_err("trailing comma");
    assert_eq!(
        error.to_string(),
        "config is not valid JSON: trailing comma: JSON allows no `,` before `]` or `}` (line 3, column 1)"
    );
    match &error {
        ConfigError::InvalidJson {
            line,
            column,
            reason,
        } => {
            assert_eq!(
                (*line, *column, reason.as_str()),
                (3, 1, "trailing comma: JSON allows no `,` before `]` or `}`")
            );
        }
        other => panic!("{other:?}"),
    }
    let error = FabricConfig::parse("{\"metadata\": ").expect_err("eof");
    assert!(
        error
            .to_string()
            .starts_with("config is not valid JSON: the text ends where a value was expected"),
        "{error}"
    );
    let two = format!("{} {{}}", config_with("runtime", json!({})));
    let error = FabricConfig::parse(&two).expect_err("two documents");
    assert!(
        error
            .to_string()
            .contains("unexpected text after the JSON value"),
        "{error}"
    );
    let error = FabricConfig::parse("").expect_err("empty");
    assert!(error.to_string().contains("the text is empty"), "{error}");
}
