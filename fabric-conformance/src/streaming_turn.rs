//! The one-turn checks of the `streaming` group:
//!
//! - `streaming.one_turn`: one streamed turn yields its chunks in the contract's order — one
//!   completion (every chunk carries the same completion `id`: the target ran once), the
//!   role only on the first chunk that has choices (started), content deltas, a
//!   `finish_reason` only on the last chunk of its choice (completed) — and a result with the
//!   status and output shape (top-level members and their JSON types) of a plain invocation
//!   of the same input;
//! - `streaming.cancel`: a turn cancelled mid-stream (its runtime stopped after the first
//!   chunk: the core's cancellation of a running turn) ends the stream cleanly — the pull
//!   returns the end or `runtime_stopped`, never hangs — and nothing of the host is left.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use fabric_config::result::RunStatus;
use fabric_config::{ErrorInfo, RunRequest, codes};
use fabric_host::{PullStream, Runtime, StreamNext};
use serde_json::{Value, json};

use crate::Context;
use crate::lifecycle::processes_with;
use crate::recorder::Outcome;
use crate::streaming::{CHUNK_WAIT, LONG_INPUT};

/// `streaming.one_turn` on `runtime`.
pub(crate) fn one_turn(runtime: &Arc<Runtime>) -> Outcome {
    let plain = match runtime.invoke(RunRequest::new(LONG_INPUT.to_owned())) {
        Ok(result) if result.status == RunStatus::Succeeded => result,
        Ok(result) => {
            return Outcome::Skipped(format!(
                "a plain invocation did not succeed ({}), so there is nothing to compare",
                result
                    .error
                    .map_or_else(|| "no error".to_owned(), |e| e.code)
            ));
        }
        Err(error) => {
            return Outcome::Skipped(format!(
                "a plain invocation failed ({})",
                ErrorInfo::from(error).code
            ));
        }
    };
    let stream = match runtime.invoke_openai_stream(RunRequest::new(LONG_INPUT.to_owned())) {
        Ok(stream) => stream,
        Err(error) => {
            return Outcome::Skipped(format!(
                "the stream was refused ({}; see streaming.chunks)",
                ErrorInfo::from(error).code
            ));
        }
    };
    let mut chunks = Vec::new();
    loop {
        match stream.next(Some(CHUNK_WAIT)) {
            Ok(StreamNext::Item(text)) => {
                chunks.push(serde_json::from_str::<Value>(&text).unwrap_or(Value::Null));
            }
            Ok(StreamNext::End) => break,
            Ok(StreamNext::Timeout) | Err(_) => {
                stream.close();
                return Outcome::Skipped(
                    "the stream did not end cleanly (see streaming.chunks)".to_owned(),
                );
            }
        }
    }
    let streamed = match stream.result() {
        Ok(result) => result,
        Err(error) => {
            return Outcome::Skipped(format!(
                "the stream's result failed ({}; see streaming.chunks)",
                ErrorInfo::from(error).code
            ));
        }
    };
    if let Some(problem) = order(&chunks) {
        return Outcome::Failed(
            format!("the turn's chunks are out of the contract's order: {problem}"),
            json!({"request": {"input": LONG_INPUT}, "chunks": chunks}),
        );
    }
    if streamed.status != plain.status || shape(&streamed.output) != shape(&plain.output) {
        return Outcome::Failed(
            "the streamed result differs in status or output shape from a plain invocation's"
                .to_owned(),
            json!({"streamed": {"status": streamed.status, "output": shape(&streamed.output)},
                   "plain": {"status": plain.status, "output": shape(&plain.output)}}),
        );
    }
    Outcome::Passed(format!(
        "{} chunks of one completion in order, then a result shaped as a plain invocation's",
        chunks.len()
    ))
}

/// What breaks the contract's order of one turn's chunks, if anything.
fn order(chunks: &[Value]) -> Option<String> {
    let ids: Vec<&str> = chunks.iter().filter_map(|c| c["id"].as_str()).collect();
    if let Some(other) = ids.iter().find(|id| **id != ids[0]) {
        return Some(format!(
            "two completions in one turn (`{}`, then `{other}`): the target ran more than once",
            ids[0]
        ));
    }
    let with_choices: Vec<&Vec<Value>> = chunks
        .iter()
        .filter_map(|c| c["choices"].as_array())
        .filter(|choices| !choices.is_empty())
        .collect();
    let mut finished: BTreeMap<u64, usize> = BTreeMap::new();
    for (at, choices) in with_choices.iter().enumerate() {
        for choice in *choices {
            let index = choice["index"].as_u64().unwrap_or(0);
            if at > 0 && choice["delta"]["role"].is_string() {
                return Some(format!("choice {index} gets its role after chunk 0"));
            }
            if let Some(done) = finished.get(&index) {
                return Some(format!(
                    "choice {index} has a delta after its finish_reason (chunk {done})"
                ));
            }
            if choice["finish_reason"].is_string() {
                finished.insert(index, at);
            }
        }
    }
    None
}

/// The output's top-level members and their JSON types (or its type, when not an object).
fn shape(output: &Value) -> Value {
    let kind = |value: &Value| match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    match output {
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(key, value)| (key.clone(), json!(kind(value))))
                .collect(),
        ),
        other => json!(kind(other)),
    }
}

/// `streaming.cancel` on a fresh runtime.
pub(crate) fn cancel(context: &Context) -> Outcome {
    let runtime = match context.fabric.start_runtime(&context.config, &context.run) {
        Ok(runtime) => Arc::new(runtime),
        Err(error) => {
            return Outcome::Skipped(format!(
                "a runtime did not start ({})",
                ErrorInfo::from(error).code
            ));
        }
    };
    let id = runtime.runtime_id().to_owned();
    let stream = match runtime.invoke_openai_stream(RunRequest::new(LONG_INPUT.to_owned())) {
        Ok(stream) => stream,
        Err(error) => {
            let _ = runtime.stop();
            return Outcome::Skipped(format!(
                "the stream was refused ({}; see streaming.chunks)",
                ErrorInfo::from(error).code
            ));
        }
    };
    let _ = stream.next(Some(CHUNK_WAIT));
    let mut left = Vec::new();
    crate::lifecycle::stop(&runtime, false, &mut left);
    let began = Instant::now();
    let ended = loop {
        match stream.next(Some(CHUNK_WAIT)) {
            Ok(StreamNext::Item(_)) => {}
            Ok(StreamNext::End) => break Ok("its end".to_owned()),
            Ok(StreamNext::Timeout) => break Err(json!({"pull": "no end within the wait"})),
            Err(error) => {
                let info = ErrorInfo::from(error);
                if info.code == codes::RUNTIME_STOPPED {
                    break Ok(format!("`{}`", info.code));
                }
                break Err(json!({"error": info}));
            }
        }
    };
    stream.close();
    left.extend(processes_with(&format!("FABRIC_RUNTIME_ID={id}")));
    fabric_host::kill_leftovers(&id);
    match ended {
        Err(evidence) => Outcome::Failed(
            "a stream cancelled mid-turn did not end cleanly".to_owned(),
            evidence,
        ),
        Ok(_) if !left.is_empty() => Outcome::Failed(
            "processes of the adapter outlived a turn cancelled mid-stream".to_owned(),
            json!({"processes": left}),
        ),
        Ok(how) => Outcome::Passed(format!(
            "a turn cancelled after its first chunk ended the stream with {how} in {} ms",
            began.elapsed().as_millis()
        )),
    }
}
