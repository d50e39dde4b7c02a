//! OpenAI Chat Completions and Responses answers of the stub.

use serde_json::{Value, json};

use super::api::{Turn, sse};

const USAGE_CHAT: (u32, u32) = (1, 1);

fn call_id(turn: &Turn<'_>, index: usize) -> String {
    format!("call_stub_{}_{index}", turn.seq)
}

fn chat_usage() -> Value {
    json!({"prompt_tokens": USAGE_CHAT.0, "completion_tokens": USAGE_CHAT.1,
           "total_tokens": USAGE_CHAT.0 + USAGE_CHAT.1})
}

fn finish_reason(turn: &Turn<'_>) -> &'static str {
    if turn.reply.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    }
}

/// A whole `chat.completion`.
pub(crate) fn chat_completion(turn: &Turn<'_>) -> Value {
    let mut message = json!({"role": "assistant", "content": turn.reply.text});
    if !turn.reply.tool_calls.is_empty() {
        let calls: Vec<Value> = turn
            .reply
            .tool_calls
            .iter()
            .enumerate()
            .map(|(index, call)| {
                json!({"id": call_id(turn, index), "type": "function", "function": {
                    "name": call.name, "arguments": Turn::arguments(&call.arguments)}})
            })
            .collect();
        message["tool_calls"] = Value::Array(calls);
    }
    json!({
        "id": format!("chatcmpl-stub-{}", turn.seq),
        "object": "chat.completion",
        "created": 0,
        "model": turn.model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(turn),
                     "logprobs": null}],
        "usage": chat_usage(),
    })
}

/// A `chat.completion.chunk` stream: the role, the text in pieces, each tool call (name,
/// then arguments), the finish reason, the usage when asked for, `[DONE]`.
pub(crate) fn chat_stream(turn: &Turn<'_>, usage: bool) -> String {
    let chunk = |delta: Value, finish: Option<&str>| {
        json!({
            "id": format!("chatcmpl-stub-{}", turn.seq),
            "object": "chat.completion.chunk",
            "created": 0,
            "model": turn.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    };
    let mut events = vec![(
        None,
        chunk(json!({"role": "assistant", "content": ""}), None),
    )];
    for piece in turn.text_pieces() {
        events.push((None, chunk(json!({"content": piece}), None)));
    }
    for (index, call) in turn.reply.tool_calls.iter().enumerate() {
        events.push((
            None,
            chunk(
                json!({"tool_calls": [{"index": index, "id": call_id(turn, index),
                    "type": "function", "function": {"name": call.name, "arguments": ""}}]}),
                None,
            ),
        ));
        events.push((
            None,
            chunk(
                json!({"tool_calls": [{"index": index,
                    "function": {"arguments": Turn::arguments(&call.arguments)}}]}),
                None,
            ),
        ));
    }
    events.push((None, chunk(json!({}), Some(finish_reason(turn)))));
    if usage {
        let mut last = chunk(json!({}), None);
        last["choices"] = json!([]);
        last["usage"] = chat_usage();
        events.push((None, last));
    }
    sse(&events, true)
}

fn message_item(turn: &Turn<'_>, text: &str, status: &str) -> Value {
    json!({"type": "message", "id": format!("msg_stub_{}", turn.seq), "status": status,
           "role": "assistant",
           "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

fn call_item(turn: &Turn<'_>, index: usize, arguments: &str, status: &str) -> Value {
    let call = &turn.reply.tool_calls[index];
    json!({"type": "function_call", "id": format!("fc_stub_{}_{index}", turn.seq),
           "call_id": call_id(turn, index), "name": call.name, "arguments": arguments,
           "status": status})
}

/// The output items of a Responses answer.
fn output(turn: &Turn<'_>) -> Vec<Value> {
    let mut items = Vec::new();
    if let Some(text) = &turn.reply.text {
        items.push(message_item(turn, text, "completed"));
    }
    for (index, call) in turn.reply.tool_calls.iter().enumerate() {
        items.push(call_item(
            turn,
            index,
            &Turn::arguments(&call.arguments),
            "completed",
        ));
    }
    items
}

/// A whole `response` object with `status`.
pub(crate) fn response(turn: &Turn<'_>, status: &str) -> Value {
    let done = status == "completed";
    json!({
        "id": format!("resp_stub_{}", turn.seq),
        "object": "response",
        "created_at": 0,
        "status": status,
        "model": turn.model,
        "output": if done { output(turn) } else { Vec::new() },
        "parallel_tool_calls": true,
        "tool_choice": "auto",
        "tools": [],
        "usage": if done { json!({"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0}}) } else { Value::Null },
    })
}

/// A Responses event stream: created, in progress, each output item (added, its deltas,
/// done), completed. Every event carries its `type` and `sequence_number`.
pub(crate) fn responses_stream(turn: &Turn<'_>) -> String {
    let mut events: Vec<Value> = vec![
        json!({"type": "response.created", "response": response(turn, "in_progress")}),
        json!({"type": "response.in_progress", "response": response(turn, "in_progress")}),
    ];
    let mut output_index = 0;
    if let Some(text) = &turn.reply.text {
        let item_id = format!("msg_stub_{}", turn.seq);
        let at = json!({"item_id": item_id, "output_index": output_index, "content_index": 0});
        let mut item = message_item(turn, "", "in_progress");
        item["content"] = json!([]);
        events.push(
            json!({"type": "response.output_item.added", "output_index": output_index,
                           "item": item}),
        );
        let part = |text: &str| json!({"type": "output_text", "text": text, "annotations": []});
        events.push(with(
            &at,
            json!({"type": "response.content_part.added", "part": part("")}),
        ));
        for piece in turn.text_pieces() {
            events.push(with(
                &at,
                json!({"type": "response.output_text.delta", "delta": piece}),
            ));
        }
        events.push(with(
            &at,
            json!({"type": "response.output_text.done", "text": text}),
        ));
        events.push(with(
            &at,
            json!({"type": "response.content_part.done", "part": part(text)}),
        ));
        events.push(
            json!({"type": "response.output_item.done", "output_index": output_index,
                           "item": message_item(turn, text, "completed")}),
        );
        output_index += 1;
    }
    for (index, call) in turn.reply.tool_calls.iter().enumerate() {
        let arguments = Turn::arguments(&call.arguments);
        let at = json!({"item_id": format!("fc_stub_{}_{index}", turn.seq),
                        "output_index": output_index});
        events.push(
            json!({"type": "response.output_item.added", "output_index": output_index,
                           "item": call_item(turn, index, "", "in_progress")}),
        );
        events.push(with(
            &at,
            json!({"type": "response.function_call_arguments.delta",
                                     "delta": arguments}),
        ));
        events.push(with(
            &at,
            json!({"type": "response.function_call_arguments.done",
                                     "arguments": arguments}),
        ));
        events.push(
            json!({"type": "response.output_item.done", "output_index": output_index,
                           "item": call_item(turn, index, &arguments, "completed")}),
        );
        output_index += 1;
    }
    events.push(json!({"type": "response.completed", "response": response(turn, "completed")}));
    let events: Vec<(String, Value)> = events
        .into_iter()
        .enumerate()
        .map(|(seq, mut event)| {
            event["sequence_number"] = json!(seq);
            let name = event["type"].as_str().unwrap_or_default().to_owned();
            (name, event)
        })
        .collect();
    let named: Vec<(Option<&str>, Value)> = events
        .iter()
        .map(|(name, event)| (Some(name.as_str()), event.clone()))
        .collect();
    sse(&named, false)
}

fn with(at: &Value, mut event: Value) -> Value {
    if let (Some(at), Some(fields)) = (at.as_object(), event.as_object_mut()) {
        for (key, value) in at {
            fields.insert(key.clone(), value.clone());
        }
    }
    event
}
