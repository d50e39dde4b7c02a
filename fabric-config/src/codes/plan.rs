//! Codes of descriptors and planning (`fabric-plan`).

use super::{ErrorCode, Origin as O, code};
use crate::error::Stage as S;

/// fabric-plan.
pub(super) const PLAN: &[ErrorCode] = &[
    code(
        "descriptor_read_failed",
        Some(S::Plan),
        O::Plan,
        "an adapter or target descriptor file cannot be read",
    ),
    code(
        "descriptor_invalid_json",
        Some(S::Plan),
        O::Plan,
        "a descriptor is not valid JSON",
    ),
    code(
        "descriptor_unsupported_contract",
        Some(S::Plan),
        O::Plan,
        "a descriptor names a contract version this core does not speak",
    ),
    code(
        "descriptor_invalid",
        Some(S::Plan),
        O::Plan,
        "a descriptor breaks the descriptor schema",
    ),
    code(
        "descriptor_invalid_schema",
        Some(S::Plan),
        O::Plan,
        "an embedded extension schema is not a usable JSON Schema",
    ),
    code(
        "descriptor_ambiguous",
        Some(S::Plan),
        O::Plan,
        "two descriptors claim the same adapter or target id",
    ),
    code(
        "adapter_not_found",
        Some(S::Plan),
        O::Plan,
        "no descriptor was discovered for the selected adapter id",
    ),
    code(
        "target_not_found",
        Some(S::Plan),
        O::Plan,
        "no descriptor was discovered for the selected workflow target",
    ),
    code(
        "config_invalid",
        Some(S::Plan),
        O::Plan,
        "the config breaks a planning rule",
    ),
    code(
        "config_incompatible",
        Some(S::Plan),
        O::Plan,
        "the config uses a field the adapter does not accept",
    ),
    code(
        "config_schema_violation",
        Some(S::Plan),
        O::Plan,
        "an extension value breaks the adapter's extension schema",
    ),
    code(
        "model_role_ambiguous",
        Some(S::Plan),
        O::Plan,
        "the adapter cannot tell which model role to use",
    ),
    code(
        "target_mismatch",
        Some(S::Plan),
        O::Plan,
        "the workflow target does not fit the adapter",
    ),
    code(
        "descriptor_mismatch",
        Some(S::Plan),
        O::Plan,
        "the descriptor's sha256 differs from the expected fingerprint",
    ),
];
