//! Codes of descriptors and planning (`fabric-plan`).

use super::{Origin as O, code, declare, hints};
use crate::error::Stage as S;

declare! {
    /// fabric-plan.
    pub(super) PLAN = [
        DESCRIPTOR_READ_FAILED = "descriptor_read_failed" => code(
            Some(S::Plan),
            O::Plan,
            "an adapter or target descriptor file cannot be read",
        ),
        DESCRIPTOR_INVALID_JSON = "descriptor_invalid_json" => code(
            Some(S::Plan),
            O::Plan,
            "a descriptor is not valid JSON",
        ),
        DESCRIPTOR_UNSUPPORTED_CONTRACT = "descriptor_unsupported_contract" => code(
            Some(S::Plan),
            O::Plan,
            "a descriptor names a contract version this core does not speak",
        ),
        DESCRIPTOR_INVALID = "descriptor_invalid" => code(
            Some(S::Plan),
            O::Plan,
            "a descriptor breaks the descriptor schema",
        ),
        DESCRIPTOR_INVALID_SCHEMA = "descriptor_invalid_schema" => code(
            Some(S::Plan),
            O::Plan,
            "an embedded extension schema is not a usable JSON Schema",
        ),
        DESCRIPTOR_AMBIGUOUS = "descriptor_ambiguous" => code(
            Some(S::Plan),
            O::Plan,
            "two descriptors claim the same adapter or target id",
        ),
        ADAPTER_NOT_FOUND = "adapter_not_found" => code(
            Some(S::Plan),
            O::Plan,
            "no descriptor was discovered for the selected adapter id",
        )
        .with_hint(
            "`fabric adapters` lists the adapters discovery finds; add the descriptor's directory to discovery.local_paths or FABRIC_ADAPTER_PATH",
        ),
        TARGET_NOT_FOUND = "target_not_found" => code(
            Some(S::Plan),
            O::Plan,
            "no descriptor was discovered for the selected workflow target",
        ),
        CONFIG_INVALID = "config_invalid" => code(
            Some(S::Plan),
            O::Plan,
            "the config breaks a planning rule",
        ),
        CONFIG_INCOMPATIBLE = "config_incompatible" => code(
            Some(S::Plan),
            O::Plan,
            "the config uses a field the adapter does not accept",
        )
        .with_hint(hints::INSPECT),
        CONFIG_SCHEMA_VIOLATION = "config_schema_violation" => code(
            Some(S::Plan),
            O::Plan,
            "an extension value breaks the adapter's extension schema",
        )
        .with_hint(hints::INSPECT),
        MODEL_ROLE_AMBIGUOUS = "model_role_ambiguous" => code(
            Some(S::Plan),
            O::Plan,
            "the adapter cannot tell which model role to use",
        ),
        TARGET_MISMATCH = "target_mismatch" => code(
            Some(S::Plan),
            O::Plan,
            "the workflow target does not fit the adapter",
        ),
        DESCRIPTOR_MISMATCH = "descriptor_mismatch" => code(
            Some(S::Plan),
            O::Plan,
            "the descriptor's sha256 differs from the expected fingerprint",
        ),
        BASE_DIR_NOT_UTF8 = "base_dir_not_utf8" => code(
            Some(S::Plan),
            O::Plan,
            "the directory that anchors the config's relative paths is not valid UTF-8 (the paths cross JSON documents, which hold UTF-8 only)",
        )
        .with_hint(
            "move the config under a UTF-8 path, or anchor it elsewhere with --base-dir (options.base_dir)",
        ),
    ];
}
