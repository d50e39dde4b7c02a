//! The `data` of each event of a server-sent event stream (what a streamed record keeps),
//! and what the events of OpenAI and Anthropic streams report. Pure code.

use serde_json::Value;

/// Each event's `data` (its `data:` lines joined), parsed as JSON when it is JSON; the
/// OpenAI end marker `[DONE]` is left out.
pub(crate) fn events(body: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(body).replace("\r\n", "\n");
    text.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|data| data.strip_prefix(' ').unwrap_or(data))
                .collect();
            (!data.is_empty()).then(|| data.join("\n"))
        })
        .filter(|data| data.trim() != "[DONE]")
        .map(|data| serde_json::from_str(&data).unwrap_or(Value::String(data)))
        .collect()
}

/// The usage a stream reported: the last `usage` object (OpenAI), with an Anthropic
/// `message_start`'s input usage merged under a later `message_delta`'s output usage.
pub(crate) fn usage(events: &[Value]) -> Option<Value> {
    let mut usage: Option<Value> = None;
    for event in events {
        let found = event
            .get("usage")
            .or_else(|| event.pointer("/message/usage"))
            .or_else(|| event.pointer("/response/usage"))
            .filter(|u| u.is_object());
        if let Some(found) = found {
            match (&mut usage, found) {
                (Some(Value::Object(into)), Value::Object(from)) => {
                    for (key, value) in from {
                        if !value.is_null() {
                            into.insert(key.clone(), value.clone());
                        }
                    }
                }
                _ => usage = Some(found.clone()),
            }
        }
    }
    usage
}

/// The response id of a stream: the first event's `id`, `message.id` or `response.id`.
pub(crate) fn response_id(events: &[Value]) -> Option<String> {
    events.iter().find_map(|event| {
        ["/id", "/message/id", "/response/id"]
            .iter()
            .find_map(|p| event.pointer(p).and_then(Value::as_str))
            .map(str::to_owned)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_keep_data_and_drop_done() {
        let body = b"data: {\"id\":\"c1\",\"usage\":null}\r\n\r\nevent: x\ndata: {\"usage\":{\"total_tokens\":3}}\n\ndata: [DONE]\n\n";
        let events = events(body);
        assert_eq!(events.len(), 2);
        assert_eq!(response_id(&events).as_deref(), Some("c1"));
        assert_eq!(usage(&events), Some(json!({"total_tokens": 3})));
    }

    #[test]
    fn anthropic_usage_merges() {
        let events = vec![
            json!({"type": "message_start", "message": {"id": "m1", "usage": {"input_tokens": 5, "output_tokens": 1}}}),
            json!({"type": "message_delta", "usage": {"output_tokens": 7}}),
        ];
        assert_eq!(
            usage(&events),
            Some(json!({"input_tokens": 5, "output_tokens": 7}))
        );
        assert_eq!(response_id(&events).as_deref(), Some("m1"));
    }
}
