//! `AgentInvocation.conversation` from the Relay trajectory of an invocation: the ATIF file
//! (`kind: "atif"` in the RunResult's artifacts) mapped to Responses-API input items.
//!
//! A step from `system` or `user` is a message of that role; an `agent` step is an
//! assistant message (when it has text), a `function_call` per tool call and a
//! `function_call_output` per observation result that names its call. Only what the
//! trajectory states is mapped; anything else leaves the conversation unavailable, with the
//! reason in the gap's detail.

use std::path::{Path, PathBuf};

use fabric_config::result::RunResult;
use serde_json::{Value, json};

/// The artifact kind of a Relay ATIF trajectory.
const ATIF: &str = "atif";

/// The Relay ATIF trajectory a result lists: its file, its artifact name and its steps.
pub(super) struct Trajectory {
    pub(super) path: PathBuf,
    pub(super) name: String,
    pub(super) steps: Vec<Value>,
}

/// The trajectory `result` lists, or why it is unavailable (`None`: no trajectory was
/// recorded).
pub(super) fn trajectory(result: &RunResult) -> Result<Trajectory, Option<String>> {
    let mut trajectories = result
        .artifacts
        .artifacts
        .iter()
        .filter(|artifact| artifact.kind == ATIF);
    let (Some(artifact), None) = (trajectories.next(), trajectories.next()) else {
        let several = result
            .artifacts
            .artifacts
            .iter()
            .any(|artifact| artifact.kind == ATIF);
        return Err(several.then(|| "several ATIF trajectories".to_owned()));
    };
    let path = Path::new(&artifact.path);
    let path = match (&result.artifacts.root, path.is_absolute()) {
        (Some(root), false) => Path::new(root).join(path),
        _ => path.to_path_buf(),
    };
    let steps = read_steps(&path).map_err(|what| Some(format!("{}: {what}", artifact.name)))?;
    Ok(Trajectory {
        path,
        name: artifact.name.clone(),
        steps,
    })
}

/// The `steps` of the ATIF document at `path`, or what is wrong with it.
pub(super) fn read_steps(path: &Path) -> Result<Vec<Value>, &'static str> {
    let text = std::fs::read(path).map_err(|_| "unreadable")?;
    let mut document: Value = serde_json::from_slice(&text).map_err(|_| "not JSON")?;
    match document.get_mut("steps").map(Value::take) {
        Some(Value::Array(steps)) => Ok(steps),
        _ => Err("no steps"),
    }
}

/// The invocation's conversation, or why it is unavailable (`None`: no trajectory was
/// recorded).
pub(crate) fn conversation(result: &RunResult) -> Result<Vec<Value>, Option<String>> {
    let trajectory = trajectory(result)?;
    let mut items = Vec::new();
    for (index, step) in trajectory.steps.iter().enumerate() {
        step_items(step, &mut items)
            .map_err(|what| Some(format!("{}: steps[{index}]: {what}", trajectory.name)))?;
    }
    Ok(items)
}

/// The items of one ATIF step, appended to `items`.
pub(super) fn step_items(step: &Value, items: &mut Vec<Value>) -> Result<(), &'static str> {
    let message = match step.get("message") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text.as_str()),
        Some(_) => return Err("message is not text"),
    };
    let role = match step.get("source").and_then(Value::as_str) {
        Some("system") => "system",
        Some("user") => "user",
        Some("agent") => "assistant",
        _ => return Err("unknown source"),
    };
    if let Some(text) = message.filter(|text| role != "assistant" || !text.is_empty()) {
        items.push(json!({"type": "message", "role": role, "content": text}));
    }
    if role != "assistant" {
        return Ok(());
    }
    for call in array(step, "tool_calls") {
        let (Some(call_id), Some(name)) = (
            call.get("tool_call_id").and_then(Value::as_str),
            call.get("function_name").and_then(Value::as_str),
        ) else {
            return Err("tool call without tool_call_id or function_name");
        };
        items.push(function_call(call_id, name, call.get("arguments")));
    }
    let results = step
        .get("observation")
        .map(|observation| array(observation, "results"))
        .unwrap_or_default();
    for result in results {
        let Some(call_id) = result.get("source_call_id").and_then(Value::as_str) else {
            return Err("observation result without source_call_id");
        };
        let output = match result.get("content") {
            Some(Value::String(text)) => text.clone(),
            None | Some(Value::Null) => String::new(),
            Some(value) => value.to_string(),
        };
        items.push(json!({"type": "function_call_output", "call_id": call_id, "output": output}));
    }
    Ok(())
}

pub(super) fn array<'a>(value: &'a Value, key: &str) -> Vec<&'a Value> {
    value
        .get(key)
        .and_then(Value::as_array)
        .map(|items| items.iter().collect())
        .unwrap_or_default()
}

/// A `function_call` conversation item; `arguments` is kept as the JSON text the model
/// wrote (a string as is, a missing or null value as `{}`, any other value encoded).
pub(super) fn function_call(call_id: &str, name: &str, arguments: Option<&Value>) -> Value {
    let arguments = match arguments {
        Some(Value::String(text)) => text.clone(),
        None | Some(Value::Null) => "{}".to_owned(),
        Some(value) => value.to_string(),
    };
    json!({"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result_with(atif: &[(&str, &Value)], root: &Path) -> RunResult {
        let artifacts: Vec<Value> = atif
            .iter()
            .map(|(name, document)| {
                std::fs::write(root.join(name), document.to_string()).expect("write");
                json!({"name": name, "kind": "atif", "path": name, "metadata": {}})
            })
            .collect();
        serde_json::from_value(
            json!({"agent_name": "a", "harness": "h", "adapter_kind": "process",
            "runtime_id": "r", "invocation_id": "i", "request_id": "q", "status": "succeeded",
            "output": null, "artifacts": {"root": root, "artifacts": artifacts}}),
        )
        .expect("result")
    }

    #[test]
    fn steps_become_responses_items() {
        let dir = tempfile::tempdir().expect("tempdir");
        let atif = json!({"steps": [
            {"step_id": 1, "source": "system", "message": "be brief"},
            {"step_id": 2, "source": "user", "message": "list files"},
            {"step_id": 3, "source": "agent", "message": "",
             "tool_calls": [{"tool_call_id": "c1", "function_name": "bash", "arguments": {"command": "ls"}}],
             "observation": {"results": [{"source_call_id": "c1", "content": "a.txt"}]}},
            {"step_id": 4, "source": "agent", "message": "a.txt"}]});
        let items = conversation(&result_with(&[("t.json", &atif)], dir.path())).expect("items");
        assert_eq!(
            Value::Array(items),
            json!([
                {"type": "message", "role": "system", "content": "be brief"},
                {"type": "message", "role": "user", "content": "list files"},
                {"type": "function_call", "call_id": "c1", "name": "bash", "arguments": "{\"command\":\"ls\"}"},
                {"type": "function_call_output", "call_id": "c1", "output": "a.txt"},
                {"type": "message", "role": "assistant", "content": "a.txt"}
            ])
        );
    }

    #[test]
    fn what_is_not_stated_leaves_it_unavailable() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(conversation(&result_with(&[], dir.path())), Err(None));
        let step = json!({"steps": [{"source": "user", "message": "x"}]});
        let two = result_with(&[("a.json", &step), ("b.json", &step)], dir.path());
        assert_eq!(
            conversation(&two),
            Err(Some("several ATIF trajectories".into()))
        );
        let odd = json!({"steps": [{"source": "user", "message": "x"}, {"source": "tool"}]});
        assert_eq!(
            conversation(&result_with(&[("c.json", &odd)], dir.path())),
            Err(Some("c.json: steps[1]: unknown source".into()))
        );
        let mut missing = result_with(&[("d.json", &step)], dir.path());
        std::fs::remove_file(dir.path().join("d.json")).expect("remove");
        missing.artifacts.artifacts[0].name = "relay_atif".into();
        assert_eq!(
            conversation(&missing),
            Err(Some("relay_atif: unreadable".into()))
        );
    }
}
