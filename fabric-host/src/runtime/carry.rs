//! Events a runtime carries into its next result (`runtime_start` before the first
//! invocation). A local runtime's start event is kept as its id and time only and built
//! when a result needs it: an idle runtime holds a few bytes instead of the event's
//! message and metadata (issue 30's memory per live runtime).

use fabric_config::result::FabricEvent;

use super::Runtime;
use crate::ids;
use crate::result::meta;

/// One carried event.
#[derive(Debug, Clone)]
pub(crate) enum Carried {
    /// A whole event.
    Event(FabricEvent),
    /// The `runtime_start` of a local runtime, built from the runtime when needed.
    LocalStart { event_id: String, at_millis: u64 },
}

impl Carried {
    /// A local runtime's `runtime_start`, stamped now.
    pub(crate) fn local_start() -> Carried {
        Carried::LocalStart {
            event_id: ids::new_id("event"),
            at_millis: ids::now_millis(),
        }
    }
}

impl Runtime {
    /// The carried events as they go into a result.
    pub(crate) fn carried_events(&self, carried: &[Carried]) -> Vec<FabricEvent> {
        carried
            .iter()
            .map(|carried| match carried {
                Carried::Event(event) => event.clone(),
                Carried::LocalStart {
                    event_id,
                    at_millis,
                } => FabricEvent {
                    event_id: event_id.clone(),
                    timestamp_millis: *at_millis,
                    kind: "runtime_start".to_owned(),
                    message: format!("started runtime {}", self.runtime_id),
                    metadata: meta([
                        ("runtime_id", self.runtime_id.clone().into()),
                        (
                            "environment_id",
                            self.environment.environment_id().to_owned().into(),
                        ),
                        ("environment_provider", "local".into()),
                        ("host_pid", self.backend.pid().into()),
                    ]),
                },
            })
            .collect()
    }
}
