//! Codes of config decoding (`fabric-config`): JSON syntax and structural decode errors.

use super::{Origin as O, code, declare};

declare! {
    /// Decoding a config, request or options document.
    pub(super) DECODE = [
        INVALID_JSON = "invalid_json" => code(
            None,
            O::Config,
            "the document is not valid JSON (or not a single JSON value)",
        )
        .with_hint("fix the JSON syntax at the line and column shown"),
        UNKNOWN_FIELD = "unknown_field" => code(
            None,
            O::Config,
            "a key that is not part of the vocabulary, outside an extension point",
        )
        .with_hint("remove the field or correct its spelling"),
        MISSING_FIELD = "missing_field" => code(None, O::Config, "a required key is absent")
        .with_hint("add the field named in the message"),
        INVALID_TYPE = "invalid_type" => code(None, O::Config, "a value has the wrong JSON type"),
        INVALID_VALUE = "invalid_value" => code(
            None,
            O::Config,
            "a value has the right type but an invalid value",
        ),
        UNKNOWN_VARIANT = "unknown_variant" => code(
            None,
            O::Config,
            "a string is not one of an enum's spellings",
        ),
    ];
}
