//! The adapter-side observer of harness stop events: `on_iteration_limit_reached` records
//! `stop_reason = "max_iterations"` once for that invocation, and the invocation's result
//! carries it to the core in the core-owned `nemo_fabric.stop_reason` extension (which the
//! core moves to `RunResult.metadata.stop_reason`).

use std::collections::HashMap;

use fabric_config::agent::{STOP_REASON_EXTENSION, STOP_REASON_MAX_ITERATIONS};
use serde_json::Value;

/// Stop reasons recorded per invocation id, until that invocation's result takes them.
#[derive(Debug, Default)]
pub struct StopObserver {
    reasons: HashMap<String, &'static str>,
}

impl StopObserver {
    /// The harness hit its iteration limit in `invocation_id`: recorded once (a repeated
    /// call for the same invocation changes nothing); no other invocation is touched.
    pub fn on_iteration_limit_reached(&mut self, invocation_id: &str) {
        self.reasons
            .entry(invocation_id.to_owned())
            .or_insert(STOP_REASON_MAX_ITERATIONS);
    }

    /// Puts the stop reason recorded for `invocation_id` (if any) into `result`'s
    /// extensions and forgets it.
    pub fn finish(&mut self, invocation_id: &str, result: &mut Value) {
        let (Some(reason), Some(object)) =
            (self.reasons.remove(invocation_id), result.as_object_mut())
        else {
            return;
        };
        let extensions = object
            .entry("extensions")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(extensions) = extensions.as_object_mut() {
            extensions.insert(STOP_REASON_EXTENSION.into(), reason.into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn records_once_on_that_invocation_only() {
        let mut observer = StopObserver::default();
        observer.on_iteration_limit_reached("i1");
        observer.on_iteration_limit_reached("i1");
        let mut other = json!({"status": "succeeded", "output": null});
        observer.finish("i2", &mut other);
        assert_eq!(other, json!({"status": "succeeded", "output": null}));
        let mut hit = json!({"status": "failed", "output": null});
        observer.finish("i1", &mut hit);
        assert_eq!(
            hit["extensions"],
            json!({"nemo_fabric.stop_reason": "max_iterations"})
        );
        let mut again = json!({"status": "succeeded", "output": null});
        observer.finish("i1", &mut again);
        assert!(again.get("extensions").is_none());
    }
}
