//! Codes of the caller operations on an environment (`exec`, `write_file`, `read_file`,
//! `list`; docs/sandbox.md, "Verifying inside the environment").

use super::{ErrorClass, Origin as O, code, declare};

declare! {
    /// Caller operations on a prepared or attached environment (also the error's own code
    /// when a provider answers with it).
    pub(super) ENVIRONMENT_OPS = [
        INVALID_ENVIRONMENT_REQUEST = "invalid_environment_request" => code(
            None,
            O::Sandbox,
            "an exec or file request on an environment is malformed: an empty `argv`, a timeout or limit out of range, a path that is not relative, an unknown `root`, content above the write limit (the message names the field)",
        )
        .with_class(ErrorClass::Config),
        EXEC_FAILED = "exec_failed" => code(
            None,
            O::Sandbox,
            "the command of an `exec` could not be started in the environment (no such program, not executable, or the working directory is missing)",
        ),
        ENVIRONMENT_SETTING_UNSUPPORTED = "environment_setting_unsupported" => code(
            None,
            O::Sandbox,
            "the environment provider cannot apply a policy setting it was given (the message names `settings.<member>`): nothing was prepared",
        )
        .with_class(ErrorClass::Capability),
        FILE_NOT_FOUND = "file_not_found" => code(
            None,
            O::Sandbox,
            "`read_file` or `list` named a path beneath the environment's root where nothing is",
        ),
    ];
}
