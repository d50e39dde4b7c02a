//! A run's conversation as the page shows it: the Responses-API items `fabric-relay` reads
//! from the Relay trajectory or the captured model calls, folded into messages (tool calls
//! under the assistant message that made them, tool results as `tool` messages); without
//! either, the input and the output. The model call behind an assistant turn (latency,
//! tokens, model) rides on its message, and a subagent a tool ran nests under the tool's
//! result message.

use fabric_config::result::RunResult;
use fabric_relay::gym::{CallFacts, ConversationSource, StatedItem, result_conversation};
use serde_json::Value;

use crate::wire::{Message, ModelCall, ToolCall};

fn message(role: &'static str, content: String) -> Message {
    Message {
        role,
        content,
        tool_calls: Vec::new(),
        tool_call_id: None,
        model_call: None,
        subagent: None,
        children: Vec::new(),
    }
}

/// Text of a value: a string as it is, content parts joined, anything else as JSON.
pub(crate) fn text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        Value::Array(parts) if parts.iter().all(|p| p.get("text").is_some()) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        other => other.to_string(),
    }
}

fn role(name: &str) -> &'static str {
    match name {
        "system" | "developer" => "system",
        "assistant" => "assistant",
        "tool" => "tool",
        _ => "user",
    }
}

fn model_call(facts: &CallFacts) -> ModelCall {
    ModelCall {
        latency_ms: facts.latency_ms,
        input_tokens: facts.input_tokens,
        output_tokens: facts.output_tokens,
        model: facts.model.clone(),
    }
}

/// Folds Responses-API items into messages.
pub(crate) fn messages(items: &[StatedItem]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    let field = |item: &Value, key: &str| item.get(key).map(text).unwrap_or_default();
    for stated in items {
        let item = &stated.item;
        match item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message")
        {
            "function_call" => {
                if out.last().is_none_or(|last| last.role != "assistant") {
                    out.push(message("assistant", String::new()));
                }
                if let Some(last) = out.last_mut() {
                    last.tool_calls.push(ToolCall {
                        id: field(item, "call_id"),
                        name: field(item, "name"),
                        arguments: field(item, "arguments"),
                    });
                }
            }
            "function_call_output" => {
                let mut tool = message("tool", field(item, "output"));
                tool.tool_call_id = Some(field(item, "call_id"));
                out.push(tool);
            }
            _ => {
                let name = item.get("role").and_then(Value::as_str).unwrap_or("user");
                out.push(message(role(name), field(item, "content")));
            }
        }
        if let Some(last) = out.last_mut() {
            if let Some(facts) = &stated.model_call {
                last.model_call.get_or_insert_with(|| model_call(facts));
            }
            if let Some(subagent) = &stated.subagent {
                last.subagent = Some(subagent.name.clone());
                last.children = messages(&subagent.items);
            }
        }
    }
    out
}

/// The conversation of a run and where it came from (`atif`, `model_calls`, `output`), or
/// the reason a recorded one could not be read.
pub(crate) fn of_run(
    result: Option<&RunResult>,
    input: &Value,
    output: &Value,
) -> (Vec<Message>, Option<&'static str>, Option<String>) {
    if let Some(result) = result {
        match result_conversation(result) {
            Ok(Some((source, items))) => {
                let source = match source {
                    ConversationSource::Atif => "atif",
                    ConversationSource::ModelCalls => "model_calls",
                };
                return (messages(&items), Some(source), None);
            }
            Ok(None) => {}
            Err(problem) => return (fallback(input, output), Some("output"), Some(problem)),
        }
    }
    let messages = fallback(input, output);
    let source = (!messages.is_empty()).then_some("output");
    (messages, source, None)
}

/// The input as a user message and the output as the assistant's.
fn fallback(input: &Value, output: &Value) -> Vec<Message> {
    let mut out = Vec::new();
    let input = match input.get("prompt").or(input.get("input")) {
        Some(prompt) => text(prompt),
        None => text(input),
    };
    if !input.is_empty() {
        out.push(message("user", input));
    }
    let output = match output.get("response") {
        Some(response) => text(response),
        None => text(output),
    };
    if !output.is_empty() {
        out.push(message("assistant", output));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_calls_fold_under_their_assistant_message() {
        let items = [
            json!({"type": "message", "role": "user", "content": "list"}),
            json!({"type": "message", "role": "assistant", "content": "calling"}),
            json!({"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"}),
            json!({"type": "function_call_output", "call_id": "c1", "output": "a.txt"}),
        ]
        .map(|item| StatedItem {
            item,
            model_call: None,
            subagent: None,
        });
        let messages = messages(&items);
        assert_eq!(messages.len(), 3);
        assert_eq!(messages[1].tool_calls[0].name, "ls");
        assert_eq!(messages[2].role, "tool");
        assert_eq!(messages[2].tool_call_id.as_deref(), Some("c1"));
    }
}
