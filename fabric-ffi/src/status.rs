//! Status codes: the `int32_t` every fallible entry point returns.

use fabric_config::codes;

/// The status every fallible entry point returns as an `int32_t`.
///
/// `FABRIC_STATUS_OK` (0) means success and `*out` holds the result JSON. Every other value
/// below 100 is an error class and `*out` holds an ErrorInfo JSON object (`stage`, `code`,
/// `message`, `retryable`, `metadata`). Values of 100 and above (`END`, `TIMEOUT`) are
/// reserved for pull streams and are not errors. Numbers never change; a retired number
/// stays reserved.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FabricStatus {
    /// Success: `*out` holds the result JSON (or NULL for functions without a result).
    Ok = 0,
    /// Invalid config, request or override (Python `FabricConfigError`).
    Config = 1,
    /// The selected adapter does not support the requested operation
    /// (Python `FabricCapabilityError`).
    Capability = 2,
    /// Runtime start, invocation or stop failed before a normalized result could be
    /// returned (Python `FabricRuntimeError`).
    Runtime = 3,
    /// Invalid lifecycle state transition, such as invoking a stopped runtime or
    /// overlapping invocations on one runtime (Python `FabricStateError`).
    State = 4,
    /// A resource observation could not be read (Python
    /// `ResourceObservationUnavailableError`).
    ResourceUnavailable = 5,
    /// No resource reader exists for this adapter kind, provider or operating system
    /// (Python `ResourceObservationUnsupportedError`).
    ResourceUnsupported = 6,
    /// A NULL pointer, invalid UTF-8 (the C call itself is malformed; a JSON argument that
    /// is not JSON is `Config`), or an unknown, released or
    /// wrong-kind handle.
    InvalidArgument = 7,
    /// A bug inside the library, including a caught panic (`code` = `internal_panic`).
    Internal = 8,
    /// A pull stream has no more items (not an error).
    End = 100,
    /// A pull stream had no item before the timeout (not an error).
    Timeout = 101,
}

impl FabricStatus {
    /// The numeric value written into the ABI.
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// Every status, in numeric order (used by tests and documentation).
    pub const ALL: [FabricStatus; 11] = [
        FabricStatus::Ok,
        FabricStatus::Config,
        FabricStatus::Capability,
        FabricStatus::Runtime,
        FabricStatus::State,
        FabricStatus::ResourceUnavailable,
        FabricStatus::ResourceUnsupported,
        FabricStatus::InvalidArgument,
        FabricStatus::Internal,
        FabricStatus::End,
        FabricStatus::Timeout,
    ];

    /// The stable lowercase name of this status.
    pub const fn name(self) -> &'static str {
        match self {
            FabricStatus::Ok => "ok",
            FabricStatus::Config => "config",
            FabricStatus::Capability => "capability",
            FabricStatus::Runtime => "runtime",
            FabricStatus::State => "state",
            FabricStatus::ResourceUnavailable => "resource_unavailable",
            FabricStatus::ResourceUnsupported => "resource_unsupported",
            FabricStatus::InvalidArgument => codes::INVALID_ARGUMENT,
            FabricStatus::Internal => "internal",
            FabricStatus::End => "end",
            FabricStatus::Timeout => codes::TIMEOUT,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::FabricStatus;

    #[test]
    fn numbers_are_stable_and_distinct() {
        let numbers: Vec<i32> = FabricStatus::ALL.iter().map(|s| s.code()).collect();
        assert_eq!(numbers, vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 100, 101]);
        let names: std::collections::BTreeSet<_> =
            FabricStatus::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(names.len(), FabricStatus::ALL.len());
    }

    #[test]
    fn statuses_match_the_registry() {
        let abi: Vec<(i32, &str)> = FabricStatus::ALL
            .iter()
            .map(|s| (s.code(), s.name()))
            .collect();
        let registry: Vec<(i32, &str)> = fabric_config::codes::STATUSES
            .iter()
            .map(|s| (s.status, s.name))
            .collect();
        assert_eq!(abi, registry);
    }
}
