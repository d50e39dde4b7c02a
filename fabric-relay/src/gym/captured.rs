//! The model calls a run captured (`RunResult.model_calls`: the gateway's
//! `model-calls.jsonl`, one `ModelCallRecord` a line) for the Gym mapping: their join keys
//! (joined into the bundle by [`super::join_model_call_observations`]) and, when no Relay
//! trajectory exists, the conversation the last call states (its request's messages and its
//! answer) as Responses-API input items.

use std::path::Path;

use fabric_config::ModelCallRecord;
use fabric_config::gym::ModelCallKeys;
use fabric_config::result::RunResult;
use serde_json::{Value, json};

use super::conversation::array;

/// The records of a result (empty when capture was off or nothing was recorded), or why
/// they could not be read.
pub(crate) fn records(result: &RunResult) -> Result<Vec<ModelCallRecord>, String> {
    let Some(path) = result.model_calls.as_ref().and_then(|m| m.path.as_deref()) else {
        return Ok(Vec::new());
    };
    let name = Path::new(path)
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let text = std::fs::read_to_string(path).map_err(|_| format!("{name}: unreadable"))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            serde_json::from_str(line)
                .map_err(|_| format!("{name}: line {} is not a record", index + 1))
        })
        .collect()
}

/// A record's join keys (Gym's `ModelCallRecord` identity).
pub(crate) fn keys(record: &ModelCallRecord) -> ModelCallKeys {
    ModelCallKeys {
        model_call_id: Some(record.model_call_id.clone()),
        response_id: record.response_id.clone(),
        client_session_id: record.client_session_id.clone(),
        call_index: record.call_index,
        model_ref: Some(record.model_ref.clone()),
        // The gateway sees HTTP calls, not the harness's saved messages.
        client_assistant_message_id: None,
    }
}

/// The conversation of the last answered call: its request's messages (or input items)
/// then its answer, or why it is not stated.
pub(crate) fn conversation(records: &[ModelCallRecord]) -> Result<Vec<Value>, String> {
    let last = records
        .iter()
        .rev()
        .find(|record| record.status_code.is_some_and(|status| status < 300))
        .ok_or("model calls: no answered call")?;
    let detail = |what: &str| format!("model call {}: {what}", last.call_index);
    let (Some(request), Some(response)) = (&last.request, &last.response) else {
        return Err(detail(
            "the request or the answer is not a JSON object (streamed or cut)",
        ));
    };
    let mut items = Vec::new();
    match last.dialect.as_str() {
        "chat" => {
            for message in array(request, "messages") {
                chat_message(message, &mut items).map_err(&detail)?;
            }
            let answer = response
                .pointer("/choices/0/message")
                .ok_or_else(|| detail("no choices[0].message"))?;
            chat_message(answer, &mut items).map_err(&detail)?;
        }
        "responses" => {
            match request.get("input") {
                Some(Value::String(text)) => {
                    items.push(json!({"type": "message", "role": "user", "content": text}));
                }
                Some(Value::Array(input)) => items.extend(input.iter().cloned()),
                _ => return Err(detail("no input")),
            }
            items.extend(array(response, "output").into_iter().cloned());
        }
        other => return Err(detail(&format!("dialect {other} is not mapped"))),
    }
    Ok(items)
}

/// The items of one Chat Completions message: a message with its text, a `function_call`
/// per tool call, or a tool result's `function_call_output`.
fn chat_message(message: &Value, items: &mut Vec<Value>) -> Result<(), &'static str> {
    let role = message
        .get("role")
        .and_then(Value::as_str)
        .ok_or("a message without role")?;
    let text = match message.get("content") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        Some(_) => return Err("content is neither text nor parts"),
    };
    if role == "tool" {
        let call_id = message
            .get("tool_call_id")
            .and_then(Value::as_str)
            .ok_or("a tool message without tool_call_id")?;
        items.push(json!({"type": "function_call_output", "call_id": call_id, "output": text}));
        return Ok(());
    }
    let role = match role {
        "system" | "developer" | "user" | "assistant" => role,
        _ => return Err("a message of an unknown role"),
    };
    if !text.is_empty() || role != "assistant" {
        items.push(json!({"type": "message", "role": role, "content": text}));
    }
    for call in array(message, "tool_calls") {
        let (Some(call_id), Some(name)) = (
            call.get("id").and_then(Value::as_str),
            call.pointer("/function/name").and_then(Value::as_str),
        ) else {
            return Err("a tool call without id or function.name");
        };
        items.push(super::conversation::function_call(
            call_id,
            name,
            call.pointer("/function/arguments"),
        ));
    }
    Ok(())
}
