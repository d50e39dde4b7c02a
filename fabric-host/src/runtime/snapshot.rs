//! A runtime's resource snapshot (the host's process tree).

use fabric_config::Stage;
use fabric_config::result::AdapterKind;
use fabric_config::stats::RuntimeResourceSnapshot;
use fabric_stats::StatsTarget;

use super::{Phase, Runtime};
use crate::error::HostError;
use crate::live;

impl Runtime {
    /// Reads the CPU time, resident memory and process count of the adapter host and its
    /// descendants (see docs/stats.md). Does not wait for an active invocation.
    ///
    /// Errors: `resource_observation_unavailable` (stopped or stopping runtime — reason
    /// `runtime_stopped` —, exited host, unreadable or changing tree) and
    /// `resource_observation_unsupported` (adapter kinds without a local host, non-Linux).
    pub fn resource_snapshot(&self) -> Result<RuntimeResourceSnapshot, HostError> {
        let stage = Stage::Invoke;
        if self.is_remote() {
            return Err(HostError::ResourceKindUnsupported {
                stage,
                adapter_kind: "provider_environment",
            });
        }
        if !matches!(
            self.identity.adapter_kind,
            AdapterKind::Process | AdapterKind::Python
        ) {
            return Err(HostError::ResourceKindUnsupported {
                stage,
                adapter_kind: self.identity.adapter_kind.as_str(),
            });
        }
        let stopped = || {
            matches!(self.lock().phase, Phase::Stopping | Phase::Stopped) || self.live.is_stopped()
        };
        if stopped() {
            return Err(HostError::ResourceRuntimeStopped {
                stage,
                runtime_id: self.runtime_id.clone(),
            });
        }
        let snapshot = live::collector()
            .snapshot(&self.stats_target())
            .map_err(|source| HostError::Resource { stage, source })?;
        // A stop that began during the read may have reaped the host: its pid could name
        // another process by now.
        if stopped() {
            return Err(HostError::ResourceRuntimeStopped {
                stage,
                runtime_id: self.runtime_id.clone(),
            });
        }
        Ok(snapshot)
    }

    pub(super) fn stats_target(&self) -> StatsTarget {
        StatsTarget {
            runtime_id: self.runtime_id.clone(),
            host_pid: self.backend.pid(),
            started_at: self.backend.started_at(),
        }
    }
}
