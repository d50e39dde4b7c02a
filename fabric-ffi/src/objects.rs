//! The objects behind handles.

/// A started runtime (registered under a `fabric_runtime` id).
#[derive(Debug)]
pub(crate) struct RuntimeObject {}

/// A prepared environment (registered under a `fabric_environment` id).
#[derive(Debug)]
pub(crate) struct EnvironmentObject {}
