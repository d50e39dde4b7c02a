//! Anthropic Messages answers of the stub.

use serde_json::{Value, json};

use super::api::{Turn, sse};

fn tool_id(turn: &Turn<'_>, index: usize) -> String {
    format!("toolu_stub_{}_{index}", turn.seq)
}

fn stop_reason(turn: &Turn<'_>) -> &'static str {
    if turn.reply.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    }
}

fn envelope(turn: &Turn<'_>, content: Vec<Value>, stop: Option<&str>, output: u32) -> Value {
    json!({
        "id": format!("msg_stub_{}", turn.seq),
        "type": "message",
        "role": "assistant",
        "model": turn.model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": null,
        "usage": {"input_tokens": 1, "output_tokens": output},
    })
}

/// A whole `message`.
pub(crate) fn message(turn: &Turn<'_>) -> Value {
    let mut content = Vec::new();
    if let Some(text) = &turn.reply.text {
        content.push(json!({"type": "text", "text": text}));
    }
    for (index, call) in turn.reply.tool_calls.iter().enumerate() {
        content.push(
            json!({"type": "tool_use", "id": tool_id(turn, index), "name": call.name,
                            "input": call.arguments}),
        );
    }
    envelope(turn, content, Some(stop_reason(turn)), 1)
}

/// A Messages event stream: `message_start`, each content block (start, deltas, stop),
/// `message_delta` with the stop reason, `message_stop`.
pub(crate) fn stream(turn: &Turn<'_>) -> String {
    let mut events = vec![(
        "message_start",
        json!({"type": "message_start", "message": envelope(turn, Vec::new(), None, 0)}),
    )];
    let block = |start: Value, deltas: Vec<Value>, events: &mut Vec<(&str, Value)>| {
        let index = events
            .iter()
            .filter(|(name, _)| *name == "content_block_start")
            .count();
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for delta in deltas {
            events.push((
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        events.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    };
    if turn.reply.text.is_some() {
        let deltas = turn
            .text_pieces()
            .into_iter()
            .map(|piece| json!({"type": "text_delta", "text": piece}))
            .collect();
        block(json!({"type": "text", "text": ""}), deltas, &mut events);
    }
    for (index, call) in turn.reply.tool_calls.iter().enumerate() {
        let start = json!({"type": "tool_use", "id": tool_id(turn, index), "name": call.name,
                           "input": {}});
        let delta = json!({"type": "input_json_delta",
                           "partial_json": Turn::arguments(&call.arguments)});
        block(start, vec![delta], &mut events);
    }
    events.push((
        "message_delta",
        json!({"type": "message_delta",
               "delta": {"stop_reason": stop_reason(turn), "stop_sequence": null},
               "usage": {"output_tokens": 1}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    let named: Vec<(Option<&str>, Value)> = events
        .into_iter()
        .map(|(name, event)| (Some(name), event))
        .collect();
    sse(&named, false)
}
