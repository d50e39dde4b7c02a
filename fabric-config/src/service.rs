//! Shared services: the documents of `prepare_service` / `attach_service` / release and the
//! `service` member of an adapter's `start` payload.
//!
//! A service runs in its own adapter host whose `runtime_id` is the `service_id`. Its
//! `start` payload carries `service: {operation: "prepare", connection_path}` or
//! `{operation: "attach", connection_path, reference}`; the adapter answers with a
//! [`ServiceStartOutput`] and writes what connected runtimes need to `connection_path`
//! (an empty file the core created, mode 0600). Each runtime started on the service gets
//! its own host with `service: {operation: "connect", service_id, connection_path}`.
//!
//! ```
//! use fabric_config::service::{ServiceReference, ServiceStartPayload};
//!
//! let reference: ServiceReference = serde_json::from_str(
//!     r#"{"adapter_id": "a", "service_type": "kv_store", "connection": {"port": 1}}"#,
//! ).unwrap();
//! let connect = ServiceStartPayload::connect("service-1", "/home/service-connection.json");
//! assert_eq!(serde_json::to_value(&connect).unwrap()["operation"], "connect");
//! assert_eq!(reference.service_type, "kv_store");
//! ```

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::JsonObject;

/// File name of a service's connection file under its FABRIC_HOME.
pub const CONNECTION_FILE_NAME: &str = "service-connection.json";

/// Who owns a service's lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ServiceOwnership {
    /// Prepared by Fabric: release stops it.
    FabricOwned,
    /// Attached to a caller-owned deployment: release detaches Fabric only.
    CallerOwned,
}

/// Lifecycle state of a prepared or attached service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ServiceStatus {
    /// Runtimes may start on it.
    Active,
    /// Release is in progress.
    Releasing,
    /// Released: new starts fail with `service_not_active`.
    Released,
    /// Release could not end the service host cleanly.
    Failed,
}

/// A caller-owned service to attach to (input: unknown fields are rejected).
///
/// `connection` holds endpoints and credential *references* (for example an environment
/// variable name), never credential values; the adapter defines its fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServiceReference {
    /// The adapter that understands this service type.
    pub adapter_id: String,
    /// The adapter's stable service kind.
    pub service_type: String,
    /// Adapter-defined connection fields.
    #[serde(default, skip_serializing_if = "JsonObject::is_empty")]
    pub connection: JsonObject,
    /// Caller metadata.
    #[serde(default, skip_serializing_if = "JsonObject::is_empty")]
    pub metadata: JsonObject,
}

impl ServiceReference {
    /// The first blank required field (`adapter_id`, `service_type`), if any.
    pub fn blank_field(&self) -> Option<&'static str> {
        if self.adapter_id.trim().is_empty() {
            Some("adapter_id")
        } else if self.service_type.trim().is_empty() {
            Some("service_type")
        } else {
            None
        }
    }
}

/// Identity and binding of one prepared or attached service, valid only in the process
/// that created it (the SDK's `ServiceHandle`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServiceHandle {
    /// Process-local service lifecycle id (`service-…`; the service host's runtime id).
    pub service_id: String,
    /// `fabric-service-binding-<16 hex>`: a digest of the plan the service was prepared
    /// with; a runtime may connect only when its plan has the same binding.
    pub service_binding: String,
    /// The adapter that prepared or attached the service.
    pub adapter_id: String,
    /// The adapter's service kind.
    pub service_type: String,
    /// Who owns the service.
    pub ownership: ServiceOwnership,
    /// Adapter-reported connection summary (never credential values).
    #[serde(default, skip_serializing_if = "JsonObject::is_empty")]
    pub connection: JsonObject,
    /// Adapter-reported metadata (version, readiness).
    #[serde(default, skip_serializing_if = "JsonObject::is_empty")]
    pub metadata: JsonObject,
}

/// A service as reported to callers (`fabric_service_prepare`, `_attach`, `_release`,
/// `_info`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServiceInfo {
    /// Service id (same as `service.service_id`).
    pub service_id: String,
    /// Lifecycle state.
    pub status: ServiceStatus,
    /// The SDK handle.
    pub service: ServiceHandle,
    /// Service host process id (also its process-group id).
    pub host_pid: u32,
    /// The service host's FABRIC_HOME (holds `service-connection.json`).
    pub fabric_home: String,
    /// Ids of runtimes connected to the service that are not stopped.
    #[serde(default)]
    pub connected_runtimes: Vec<String>,
    /// The C ABI handle of this service, when it was returned through the ABI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle: Option<u64>,
}

/// The service operation of a `start` payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ServiceOperation {
    /// Start a Fabric-owned service.
    Prepare,
    /// Attach to a caller-owned service named by `reference`.
    Attach,
    /// A runtime connecting to the service `service_id`.
    Connect,
}

/// The `service` member of a `start` payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServiceStartPayload {
    /// What the host is asked to do.
    pub operation: ServiceOperation,
    /// The service's connection file (written by the service's adapter, read on connect).
    pub connection_path: String,
    /// The service a connecting runtime uses (`connect` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_id: Option<String>,
    /// The caller-owned service (`attach` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<ServiceReference>,
}

impl ServiceStartPayload {
    /// `{operation: "connect", service_id, connection_path}`.
    pub fn connect(service_id: impl Into<String>, connection_path: impl Into<String>) -> Self {
        ServiceStartPayload {
            operation: ServiceOperation::Connect,
            connection_path: connection_path.into(),
            service_id: Some(service_id.into()),
            reference: None,
        }
    }
}

/// What a service host's `start` answers (`outcome.output`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServiceStartOutput {
    /// The adapter's id.
    pub adapter_id: String,
    /// The adapter's service kind.
    pub service_type: String,
    /// Connection summary (never credential values).
    #[serde(default)]
    pub connection: JsonObject,
    /// Version and readiness information.
    #[serde(default)]
    pub metadata: JsonObject,
}
