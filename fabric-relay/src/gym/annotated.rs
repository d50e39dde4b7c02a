//! The stated conversation with the facts a reader shows beside its items (`fabric view`):
//! the model call behind each assistant turn (latency, tokens, model) and the subagents a
//! tool result ran, nested. The items are the Gym mapping's own (the same step and record
//! readers); the facts come beside them, so the Gym export is unchanged.
//!
//! From a Relay ATIF trajectory, an `agent` step's facts are its `model_name`, its
//! `metrics.prompt_tokens`/`completion_tokens`, and its latency: its `timestamp` less the
//! previous step's, when both are stated. An observation result's `subagent_trajectory_ref`
//! names the subagent (`session_id`) and its trajectory file (`trajectory_path`, relative to
//! the parent's directory), read the same way, [`MAX_DEPTH`] levels deep at most.
//!
//! From captured model calls, the assistant turns of the conversation (each run of
//! consecutive assistant items) are paired in order with the answered records when there are
//! as many; otherwise only the last turn, the answer, gets the last record's facts.

use std::path::Path;

use fabric_config::ModelCallRecord;
use fabric_config::result::RunResult;
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::conversation::{array, read_steps, step_items, trajectory};

/// Trajectories are read this many levels deep (the run's own is the first); a subagent
/// below is named, not read (a trajectory naming itself ends here).
pub const MAX_DEPTH: usize = 4;

/// The model call behind an assistant turn; each fact is `None` when not stated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallFacts {
    /// Milliseconds the call took.
    pub latency_ms: Option<u64>,
    /// Prompt (input) tokens.
    pub input_tokens: Option<u64>,
    /// Completion (output) tokens.
    pub output_tokens: Option<u64>,
    /// The model that answered.
    pub model: Option<String>,
}

/// A subagent a tool result ran: its name and its own conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Subagent {
    /// The subagent's `session_id`s (several joined with `, `).
    pub name: String,
    /// Its conversation (empty when its trajectory is not at hand).
    pub items: Vec<StatedItem>,
}

/// One Responses-API input item of a stated conversation with the facts beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct StatedItem {
    /// The item, exactly as the Gym mapping states it.
    pub item: Value,
    /// On the first item of an assistant turn: the model call behind it.
    pub model_call: Option<CallFacts>,
    /// On a `function_call_output`: the subagent the tool ran.
    pub subagent: Option<Subagent>,
}

impl StatedItem {
    fn plain(item: Value) -> StatedItem {
        StatedItem {
            item,
            model_call: None,
            subagent: None,
        }
    }
}

/// Whether an item is part of an assistant turn (its text, tool calls or reasoning).
fn assistant_side(item: &Value) -> bool {
    match item
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("message")
    {
        "function_call" | "reasoning" => true,
        "message" => item.get("role").and_then(Value::as_str) == Some("assistant"),
        _ => false,
    }
}

/// The conversation of the Relay ATIF trajectory `result` lists, with its facts; errors as
/// [`super::conversation::conversation`]'s.
pub(super) fn atif(result: &RunResult) -> Result<Vec<StatedItem>, Option<String>> {
    let trajectory = trajectory(result)?;
    let dir = trajectory.path.parent().unwrap_or(Path::new("."));
    steps(&trajectory.steps, dir, 0)
        .map_err(|(index, what)| Some(format!("{}: steps[{index}]: {what}", trajectory.name)))
}

fn timestamp(step: &Value) -> Option<OffsetDateTime> {
    let text = step.get("timestamp").and_then(Value::as_str)?;
    OffsetDateTime::parse(text, &Rfc3339).ok()
}

/// An `agent` step's model-call facts (`None` when it states none).
fn step_facts(step: &Value, since: Option<OffsetDateTime>) -> Option<CallFacts> {
    if step.get("source").and_then(Value::as_str) != Some("agent") {
        return None;
    }
    let metric = |key: &str| {
        step.pointer(&format!("/metrics/{key}"))
            .and_then(Value::as_u64)
    };
    let latency_ms = since
        .zip(timestamp(step))
        .map(|(from, to)| (to - from).whole_milliseconds())
        .and_then(|ms| u64::try_from(ms).ok());
    let facts = CallFacts {
        latency_ms,
        input_tokens: metric("prompt_tokens"),
        output_tokens: metric("completion_tokens"),
        model: step
            .get("model_name")
            .and_then(Value::as_str)
            .map(str::to_owned),
    };
    (facts != CallFacts::default()).then_some(facts)
}

/// The subagent an observation result names, its trajectory read from beside `dir`.
fn subagent(result: &Value, dir: &Path, depth: usize) -> Option<Subagent> {
    let refs: Vec<&Value> = match result.get("subagent_trajectory_ref")? {
        Value::Array(refs) => refs.iter().collect(),
        one @ Value::Object(_) => vec![one],
        _ => return None,
    };
    let mut names = Vec::new();
    let mut items = Vec::new();
    for reference in refs {
        if let Some(name) = reference.get("session_id").and_then(Value::as_str) {
            names.push(name.to_owned());
        }
        let Some(path) = reference.get("trajectory_path").and_then(Value::as_str) else {
            continue;
        };
        if depth + 1 >= MAX_DEPTH {
            continue;
        }
        let path = dir.join(path);
        let nested = read_steps(&path)
            .ok()
            .and_then(|nested| steps(&nested, path.parent()?, depth + 1).ok());
        items.extend(nested.unwrap_or_default());
    }
    Some(Subagent {
        name: names.join(", "),
        items,
    })
}

/// The items of `steps` with their facts; an error names the step.
fn steps(
    steps: &[Value],
    dir: &Path,
    depth: usize,
) -> Result<Vec<StatedItem>, (usize, &'static str)> {
    let mut out = Vec::new();
    let mut previous = None;
    for (index, step) in steps.iter().enumerate() {
        let mut items = Vec::new();
        step_items(step, &mut items).map_err(|what| (index, what))?;
        let at = timestamp(step);
        let mut facts = step_facts(step, previous);
        previous = at;
        let observation = step.get("observation");
        let mut results = observation
            .map(|observation| array(observation, "results"))
            .unwrap_or_default()
            .into_iter();
        for item in items {
            let mut stated = StatedItem::plain(item);
            if assistant_side(&stated.item) {
                stated.model_call = facts.take();
            }
            if stated.item.get("type").and_then(Value::as_str) == Some("function_call_output") {
                stated.subagent = results
                    .next()
                    .and_then(|result| subagent(result, dir, depth));
            }
            out.push(stated);
        }
    }
    Ok(out)
}

/// A captured call's facts.
fn record_facts(record: &ModelCallRecord) -> CallFacts {
    CallFacts {
        // Whole milliseconds of a finite, non-negative duration.
        latency_ms: Some(record.latency_total_ms.max(0.0).round() as u64),
        input_tokens: record.tokens_in,
        output_tokens: record.tokens_out,
        model: Some(record.model.clone()),
    }
}

/// The captured conversation `items` (of `records`) with the answered calls' facts on the
/// assistant turns.
pub(super) fn captured(items: Vec<Value>, records: &[ModelCallRecord]) -> Vec<StatedItem> {
    let answered: Vec<&ModelCallRecord> = records
        .iter()
        .filter(|record| record.status_code.is_some_and(|status| status < 300))
        .collect();
    let starts: Vec<usize> = (0..items.len())
        .filter(|&i| assistant_side(&items[i]) && (i == 0 || !assistant_side(&items[i - 1])))
        .collect();
    let paired: Vec<(usize, &ModelCallRecord)> = if starts.len() == answered.len() {
        starts.into_iter().zip(answered).collect()
    } else {
        starts
            .last()
            .copied()
            .zip(answered.last().copied())
            .into_iter()
            .collect()
    };
    let mut out: Vec<StatedItem> = items.into_iter().map(StatedItem::plain).collect();
    for (start, record) in paired {
        out[start].model_call = Some(record_facts(record));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result_with(root: &Path, atif: &Value) -> RunResult {
        std::fs::write(root.join("t.json"), atif.to_string()).expect("write");
        serde_json::from_value(json!({"agent_name": "a", "harness": "h",
            "adapter_kind": "process", "runtime_id": "r", "invocation_id": "i",
            "request_id": "q", "status": "succeeded", "output": null,
            "artifacts": {"root": root, "artifacts": [
                {"name": "t.json", "kind": "atif", "path": "t.json", "metadata": {}}]}}))
        .expect("result")
    }

    #[test]
    fn agent_steps_carry_their_model_call_and_tool_results_their_subagent() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("sub")).expect("sub");
        let child = json!({"steps": [
            {"step_id": 1, "source": "user", "message": "count"},
            {"step_id": 2, "source": "agent", "message": "2", "metrics": {"completion_tokens": 1}}]});
        std::fs::write(dir.path().join("sub/child.json"), child.to_string()).expect("child");
        let document = json!({"steps": [
            {"step_id": 1, "source": "user", "message": "go",
             "timestamp": "2026-01-01T00:00:00Z"},
            {"step_id": 2, "source": "agent", "message": "", "model_name": "m",
             "timestamp": "2026-01-01T00:00:01.250Z",
             "metrics": {"prompt_tokens": 10, "completion_tokens": 3},
             "tool_calls": [{"tool_call_id": "c1", "function_name": "task"}],
             "observation": {"results": [{"source_call_id": "c1", "content": "2",
                 "subagent_trajectory_ref": [{"session_id": "child-1",
                                              "trajectory_path": "sub/child.json"}]}]}},
            {"step_id": 3, "source": "agent", "message": "two"}]});
        let items = atif(&result_with(dir.path(), &document)).expect("items");
        assert_eq!(items.len(), 4);
        assert_eq!(
            items[0].model_call, None,
            "a user step states no model call"
        );
        assert_eq!(
            items[1].model_call,
            Some(CallFacts {
                latency_ms: Some(1250),
                input_tokens: Some(10),
                output_tokens: Some(3),
                model: Some("m".into()),
            })
        );
        let subagent = items[2].subagent.as_ref().expect("the tool ran a subagent");
        assert_eq!(subagent.name, "child-1");
        assert_eq!(subagent.items.len(), 2);
        assert_eq!(subagent.items[1].item["content"], "2");
        assert_eq!(
            subagent.items[1]
                .model_call
                .as_ref()
                .and_then(|f| f.output_tokens),
            Some(1)
        );
        assert_eq!(
            items[3].model_call, None,
            "a step stating nothing has no facts"
        );
        // The items are the Gym mapping's own.
        let plain: Vec<Value> = items.into_iter().map(|stated| stated.item).collect();
        let gym = super::super::conversation::conversation(&result_with(dir.path(), &document));
        assert_eq!(Ok(plain), gym);
    }

    #[test]
    fn a_subagent_that_names_itself_stops_at_the_depth_bound() {
        let dir = tempfile::tempdir().expect("tempdir");
        let looping = json!({"steps": [
            {"step_id": 1, "source": "agent", "message": "",
             "tool_calls": [{"tool_call_id": "c", "function_name": "task"}],
             "observation": {"results": [{"source_call_id": "c", "content": "",
                 "subagent_trajectory_ref": {"session_id": "self", "trajectory_path": "t.json"}}]}}]});
        let items = atif(&result_with(dir.path(), &looping)).expect("items");
        let mut depth = 0;
        let mut level = &items;
        while let Some(subagent) = level.get(1).and_then(|item| item.subagent.as_ref()) {
            assert_eq!(subagent.name, "self");
            depth += 1;
            level = &subagent.items;
        }
        assert_eq!(depth, MAX_DEPTH);
    }
}
