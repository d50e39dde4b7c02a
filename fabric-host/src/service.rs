//! Shared services: one adapter host per service, runtimes connected to it, release.
//!
//! A service's host is started like a runtime's, with `runtime_id = service_id` and a
//! `service` member in its `start` payload (`prepare`, or `attach` with the caller's
//! reference); the adapter answers with `{adapter_id, service_type, connection, metadata}`
//! and writes what runtimes need to the connection file. A runtime started on the service
//! gets its own host with `service: {operation: "connect", service_id, connection_path}`.
//!
//! Rules: the descriptor must claim `capabilities.service`; a runtime's plan must have the
//! service's binding (see [`binding`]); release refuses while a connected runtime is not
//! stopped (`service_in_use`, the service stays active); starts on a service that is not
//! active fail with `service_not_active`.

use fabric_config::codes;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use fabric_config::Stage;
use fabric_config::codes::ErrorClass;
use fabric_config::plan::RunPlan;
use fabric_config::service::{
    CONNECTION_FILE_NAME, ServiceHandle, ServiceInfo, ServiceOperation, ServiceOwnership,
    ServiceReference, ServiceStartOutput, ServiceStartPayload, ServiceStatus,
};

use crate::environment::Environment;
use crate::error::HostError;
use crate::live::Live;
use crate::runtime::{Runtime, RuntimeOptions};

mod binding;

/// What the host a [`Runtime::start`] launches is for.
#[derive(Debug, Clone, Default)]
pub(crate) enum ServiceRole {
    /// A plain runtime.
    #[default]
    None,
    /// The host of a Fabric-owned service.
    Prepare,
    /// The host of a caller-owned service.
    Attach(ServiceReference),
    /// A runtime connected to a service.
    Connect {
        service_id: String,
        connection_path: String,
    },
}

impl ServiceRole {
    /// Id prefix of the host (`service` or `runtime`).
    pub(crate) fn id_prefix(&self) -> &'static str {
        if self.is_service_host() {
            "service"
        } else {
            "runtime"
        }
    }

    /// Whether the host is a service's (its `start` answers service information).
    pub(crate) fn is_service_host(&self) -> bool {
        matches!(self, ServiceRole::Prepare | ServiceRole::Attach(_))
    }

    /// The service a connected runtime uses.
    pub(crate) fn connected_service_id(&self) -> Option<String> {
        match self {
            ServiceRole::Connect { service_id, .. } => Some(service_id.clone()),
            _ => None,
        }
    }

    /// The `service` member of the start payload. A service host's connection file is
    /// created empty (0600) in its FABRIC_HOME for the adapter to fill.
    pub(crate) fn payload(
        &self,
        fabric_home: &crate::home::FabricHome,
    ) -> Result<Option<ServiceStartPayload>, HostError> {
        let (operation, reference) = match self {
            ServiceRole::None => return Ok(None),
            ServiceRole::Connect {
                service_id,
                connection_path,
            } => {
                return Ok(Some(ServiceStartPayload::connect(
                    service_id.clone(),
                    connection_path.clone(),
                )));
            }
            ServiceRole::Prepare => (ServiceOperation::Prepare, None),
            ServiceRole::Attach(reference) => (ServiceOperation::Attach, Some(reference.clone())),
        };
        let path = fabric_home.path().join(CONNECTION_FILE_NAME);
        crate::home::private_file(fabric_home.root(), &path, b"", Stage::Start)?;
        Ok(Some(ServiceStartPayload {
            operation,
            connection_path: path.to_string_lossy().into_owned(),
            service_id: None,
            reference,
        }))
    }
}

fn rule(
    stage: Stage,
    code: &'static str,
    class: ErrorClass,
    message: String,
    fields: Vec<String>,
) -> HostError {
    HostError::Service {
        stage,
        code,
        class,
        message,
        fields,
    }
}

#[derive(Debug)]
struct State {
    status: ServiceStatus,
    connected: Vec<Weak<Live>>,
}

/// One prepared or attached service. `Send + Sync`.
///
/// Dropping a service that was not released stops its host in the background (as a
/// dropped runtime does); runtimes connected to it keep running.
#[derive(Debug)]
pub struct Service {
    handle: ServiceHandle,
    sections: binding::Sections,
    connection_path: PathBuf,
    host: Runtime,
    /// Serializes connected starts against release.
    lifecycle: Mutex<()>,
    state: Mutex<State>,
}

impl Service {
    /// Starts the service host of `plan` (`reference = None`: prepare a Fabric-owned
    /// service; otherwise attach to the caller's).
    ///
    /// Errors: `service_unsupported` (capability), `invalid_service_reference` (config),
    /// `invalid_service_info` (the adapter's answer; the host is stopped), and every start
    /// error of a runtime.
    pub(crate) fn start(
        plan: &RunPlan,
        options: &RuntimeOptions,
        reference: Option<ServiceReference>,
    ) -> Result<Service, HostError> {
        let stage = Stage::Prepare;
        let adapter_id = plan
            .adapter_descriptor
            .as_ref()
            .map(|d| d.descriptor.adapter_id.clone())
            .unwrap_or_default();
        let claims = plan
            .adapter_descriptor
            .as_ref()
            .is_some_and(|d| d.descriptor.capabilities.service);
        if !claims {
            return Err(HostError::Capability {
                stage,
                code: codes::SERVICE_UNSUPPORTED,
                message: format!(
                    "adapter `{adapter_id}` does not claim `capabilities.service`, so it cannot host a shared service"
                ),
            });
        }
        if let Some(reference) = &reference {
            if let Some(field) = reference.blank_field() {
                return Err(rule(
                    Stage::Config,
                    codes::INVALID_SERVICE_REFERENCE,
                    ErrorClass::Config,
                    format!("service reference `{field}` must not be empty"),
                    vec![field.to_owned()],
                ));
            }
            if reference.adapter_id != adapter_id {
                return Err(rule(
                    Stage::Config,
                    codes::INVALID_SERVICE_REFERENCE,
                    ErrorClass::Config,
                    format!(
                        "service reference `adapter_id` is `{}` but the config selects adapter `{adapter_id}`",
                        reference.adapter_id
                    ),
                    vec!["adapter_id".to_owned()],
                ));
            }
        }
        let environment = Arc::new(Environment::prepare(plan, stage)?);
        let sections = binding::sections(plan, &environment);
        let ownership = if reference.is_some() {
            ServiceOwnership::CallerOwned
        } else {
            ServiceOwnership::FabricOwned
        };
        let role = reference.map_or(ServiceRole::Prepare, ServiceRole::Attach);
        let host = Runtime::start(plan, environment, options.clone(), None, role)?;
        let output = serde_json::from_value::<ServiceStartOutput>(host.start_output().clone())
            .ok()
            .filter(|o| !o.adapter_id.trim().is_empty() && !o.service_type.trim().is_empty());
        let Some(output) = output else {
            host.stop();
            return Err(rule(
                Stage::Start,
                codes::INVALID_SERVICE_INFO,
                ErrorClass::Runtime,
                format!(
                    "service host of adapter `{adapter_id}` answered start without `adapter_id` and `service_type`"
                ),
                Vec::new(),
            ));
        };
        let connection_path = host.fabric_home().join(CONNECTION_FILE_NAME);
        Ok(Service {
            handle: ServiceHandle {
                service_id: host.runtime_id().to_owned(),
                service_binding: binding::binding(&sections),
                adapter_id: output.adapter_id,
                service_type: output.service_type,
                ownership,
                connection: output.connection,
                metadata: output.metadata,
            },
            sections,
            connection_path,
            host,
            lifecycle: Mutex::new(()),
            state: Mutex::new(State {
                status: ServiceStatus::Active,
                connected: Vec::new(),
            }),
        })
    }

    /// The service id (`service-…`).
    pub fn service_id(&self) -> &str {
        &self.handle.service_id
    }

    /// The SDK handle.
    pub fn handle(&self) -> &ServiceHandle {
        &self.handle
    }

    /// The lifecycle state.
    pub fn status(&self) -> ServiceStatus {
        self.lock().status
    }

    /// The service as reported to callers.
    pub fn info(&self) -> ServiceInfo {
        let state = self.lock();
        ServiceInfo {
            service_id: self.handle.service_id.clone(),
            status: state.status,
            service: self.handle.clone(),
            host_pid: self.host.host_pid(),
            fabric_home: self.host.fabric_home().to_string_lossy().into_owned(),
            connected_runtimes: alive(&state.connected),
            handle: None,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts a runtime of `plan` connected to this service, in a new local environment.
    ///
    /// Errors: `service_not_active` and `service_binding_mismatch` (config; the latter's
    /// `metadata.fields` names the differing plan sections), then every start error.
    pub(crate) fn start_runtime(
        &self,
        plan: &RunPlan,
        options: &RuntimeOptions,
        relay: Option<fabric_relay::streaming::RelayStream>,
    ) -> Result<Runtime, HostError> {
        let _serial = self.lifecycle.lock().unwrap_or_else(|p| p.into_inner());
        if self.status() != ServiceStatus::Active {
            return Err(rule(
                Stage::Start,
                codes::SERVICE_NOT_ACTIVE,
                ErrorClass::Config,
                format!("service must be active (service `{}`)", self.service_id()),
                Vec::new(),
            ));
        }
        let environment = Arc::new(Environment::prepare(plan, Stage::Start)?);
        let differs = binding::differences(&self.sections, &binding::sections(plan, &environment));
        if !differs.is_empty() {
            return Err(rule(
                Stage::Start,
                codes::SERVICE_BINDING_MISMATCH,
                ErrorClass::Config,
                format!(
                    "the runtime's config differs from service `{}`'s at {}",
                    self.service_id(),
                    differs.join(", ")
                ),
                differs,
            ));
        }
        let role = ServiceRole::Connect {
            service_id: self.service_id().to_owned(),
            connection_path: self.connection_path.to_string_lossy().into_owned(),
        };
        let runtime = Runtime::start(plan, environment, options.clone(), relay, role)?;
        let mut state = self.lock();
        state.connected.retain(|weak| weak.strong_count() > 0);
        state.connected.push(Arc::downgrade(runtime.live()));
        Ok(runtime)
    }

    /// Stops the service host (a Fabric-owned service ends; a caller-owned one is
    /// detached: its host is told to stop, the deployment is the caller's). Repeated
    /// calls after a release return the same info.
    ///
    /// Errors: `service_in_use` (stage `stop`; `metadata.fields` lists the connected
    /// runtimes that are not stopped; the service stays active), `service_releasing`
    /// (state: another release is in progress). A host that cannot be ended leaves the
    /// service `failed`.
    pub fn release(&self) -> Result<ServiceInfo, HostError> {
        if self.status() == ServiceStatus::Releasing {
            return Err(rule(
                Stage::Stop,
                codes::SERVICE_RELEASING,
                ErrorClass::State,
                format!("service `{}` is already being released", self.service_id()),
                Vec::new(),
            ));
        }
        let _serial = self.lifecycle.lock().unwrap_or_else(|p| p.into_inner());
        {
            let mut state = self.lock();
            if matches!(
                state.status,
                ServiceStatus::Released | ServiceStatus::Failed
            ) {
                drop(state);
                return Ok(self.info());
            }
            let connected = alive(&state.connected);
            if !connected.is_empty() {
                return Err(rule(
                    Stage::Stop,
                    codes::SERVICE_IN_USE,
                    ErrorClass::Runtime,
                    format!(
                        "service `{}` has active runtimes: {}",
                        self.service_id(),
                        connected.join(", ")
                    ),
                    connected,
                ));
            }
            state.status = ServiceStatus::Releasing;
        }
        let (_, summary) = self.host.stop_inner();
        self.lock().status = if summary.timed_out {
            ServiceStatus::Failed
        } else {
            ServiceStatus::Released
        };
        Ok(self.info())
    }
}

/// Ids of the connected runtimes that exist and are not stopping or stopped.
fn alive(connected: &[Weak<Live>]) -> Vec<String> {
    connected
        .iter()
        .filter_map(Weak::upgrade)
        .filter(|live| !live.is_stopped())
        .map(|live| live.runtime_id.clone())
        .collect()
}
