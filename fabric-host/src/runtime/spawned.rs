//! The first half of a runtime start: everything up to a launched host that waits for
//! `start` (ids, FABRIC_HOME, the Relay config, the host process). A start does this and
//! then sends `start` at once; a prewarm pool (`crate::prewarm`) keeps the result until a
//! matching start claims it.

use fabric_config::Stage;
use fabric_config::plan::RunPlan;

use crate::environment::Environment;
use crate::error::HostError;
use crate::home::FabricHome;
use crate::host::Host;
use crate::ids;
use crate::launch::{self, HostEnv, LaunchCommand};
use crate::runtime::{Identity, RuntimeOptions, ServiceRole};
use crate::telemetry::{RelayIdentity, RelayLocation, RuntimeTelemetry};
use fabric_config::service::ServiceStartPayload;

/// A launched host that has not been sent `start` yet, with what its runtime needs.
/// Dropping it terminates the host (in the background); whoever drops it unused removes a
/// temporary FABRIC_HOME ([`Spawned::discard`]).
#[derive(Debug)]
pub(crate) struct Spawned {
    pub command: LaunchCommand,
    pub runtime_id: String,
    pub start_id: String,
    pub home: FabricHome,
    pub service: Option<ServiceStartPayload>,
    pub telemetry: RuntimeTelemetry,
    pub host: Host,
}

impl Spawned {
    /// Allocates the runtime's ids and FABRIC_HOME, writes its Relay config and launches
    /// the host in the local `environment` with `relay`'s collector variables.
    pub(crate) fn launch(
        plan: &RunPlan,
        environment: &Environment,
        options: &RuntimeOptions,
        relay: Option<&fabric_relay::streaming::RelayStream>,
        role: &ServiceRole,
    ) -> Result<Spawned, HostError> {
        environment.check_forwarded(Stage::Start)?;
        let command = launch::command_for(
            plan,
            options.python_interpreter.as_deref(),
            options.caller_python.as_deref(),
        )?;
        let prefix = role.id_prefix();
        let runtime_id = ids::new_id(prefix);
        let start_id = ids::new_id(&format!("{prefix}-start"));
        let identity = Identity::of(plan);
        let home = FabricHome::create(&runtime_id, environment.artifact_root())?;
        let service = role
            .payload(&home)
            .inspect_err(|_| home.remove_if_temporary())?;
        // Written before the launch: the host's environment names the Relay config.
        let telemetry = RuntimeTelemetry::prepare(
            plan.telemetry_plan.as_ref(),
            &RelayIdentity {
                agent_name: &identity.agent_name,
                harness: &identity.harness,
                adapter_id: identity.adapter_id.as_deref(),
                runtime_id: &runtime_id,
            },
            &RelayLocation {
                home: home.path(),
                artifact_root: environment.artifact_root(),
                start_id: &start_id,
            },
        )
        .inspect_err(|_| home.remove_if_temporary())?;
        let mut telemetry_env: Vec<(&str, &str)> = telemetry.host_env().collect();
        // The collector credential: the host's environment only (never the context).
        let relay_env = relay.iter().flat_map(|r| r.host_env.iter());
        telemetry_env.extend(relay_env.map(|(k, v)| (k.as_str(), v.as_str())));
        let mut spec = launch::host_spec(
            &command,
            &HostEnv {
                environment,
                fabric_home: home.path(),
                runtime_id: &runtime_id,
                telemetry: &telemetry_env,
            },
            options.max_line_bytes,
        );
        spec.secrets
            .extend(relay.iter().flat_map(|r| r.secrets.iter().cloned()));
        spec.stderr_log = Some(home.stderr_log());
        spec.stderr_log_bytes = options.stderr_log_bytes;
        let host = match Host::launch(spec) {
            Ok(host) => host,
            Err(error) => {
                home.remove_if_temporary();
                return Err(error);
            }
        };
        Ok(Spawned {
            command,
            runtime_id,
            start_id,
            home,
            service,
            telemetry,
            host,
        })
    }

    /// The host's pid.
    pub(crate) fn pid(&self) -> u32 {
        self.host.pid()
    }

    /// Whether the host is still running (not exited, not reaped): a prewarmed host that
    /// died while it waited is not handed to a start.
    pub(crate) fn waiting(&self) -> bool {
        let pid = i32::try_from(self.pid()).unwrap_or(i32::MAX);
        matches!(fabric_reactor::sys::has_exited(pid), Ok(false))
    }

    /// Ends the unused host (terminated and reaped in the background) and removes its
    /// temporary FABRIC_HOME.
    pub(crate) fn discard(self) {
        drop(self.host);
        self.home.remove_if_temporary();
    }
}
