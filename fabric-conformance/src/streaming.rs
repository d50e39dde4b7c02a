//! The `streaming` group (when the adapter claims native OpenAI streaming): a multi-chunk
//! stream the core accepts (its listener checks the transport, every chunk, identity and
//! sequence, and the end record), an empty one, an early consumer close after which
//! the runtime still answers, and the one-turn checks of `streaming_turn.rs` (order of one
//! turn's chunks, result shape, cancellation mid-stream).

use std::sync::Arc;
use std::time::Duration;

use fabric_config::result::RunStatus;
use fabric_config::{ErrorInfo, RunRequest};
use fabric_host::{PullStream, Runtime, StreamNext};
use serde_json::json;

use crate::Context;
use crate::recorder::{Outcome, Recorder};

/// The longest wait for one chunk.
pub(crate) const CHUNK_WAIT: Duration = Duration::from_secs(30);

/// An input long enough to come back in several chunks from an echoing adapter.
pub(crate) const LONG_INPUT: &str = "conformance streaming check: this input is long enough to be answered in several chunks by an adapter that echoes it back, one piece at a time.";

pub(crate) fn run(context: &Context, recorder: &mut Recorder) {
    if !recorder.wants("streaming") {
        return;
    }
    let ids = [
        "streaming.chunks",
        "streaming.empty",
        "streaming.early_close",
        "streaming.one_turn",
        "streaming.cancel",
    ];
    if !context.subject.loaded.descriptor.capabilities.streaming {
        for id in ids {
            recorder.push(id, Outcome::Skipped("streaming not claimed".to_owned()), 0);
        }
        return;
    }
    let runtime = match context.fabric.start_runtime(&context.config, &context.run) {
        Ok(runtime) => Arc::new(runtime),
        Err(error) => {
            let code = ErrorInfo::from(error).code;
            for id in ids {
                recorder.push(
                    id,
                    Outcome::Skipped(format!("the runtime did not start ({code})")),
                    0,
                );
            }
            return;
        }
    };
    recorder.check("streaming.chunks", || read_all(&runtime, LONG_INPUT));
    let valid = !recorder.failed("streaming");
    recorder.check("streaming.empty", || {
        if !valid {
            return Outcome::Skipped("the stream is already invalid (streaming.chunks)".to_owned());
        }
        read_all(&runtime, "")
    });
    recorder.check("streaming.early_close", || {
        if !valid {
            return Outcome::Skipped("the stream is already invalid (streaming.chunks)".to_owned());
        }
        early_close(&runtime)
    });
    recorder.check("streaming.one_turn", || {
        if !valid {
            return Outcome::Skipped("the stream is already invalid (streaming.chunks)".to_owned());
        }
        crate::streaming_turn::one_turn(&runtime)
    });
    let _ = runtime.stop();
    recorder.check("streaming.cancel", || {
        if !valid {
            return Outcome::Skipped("the stream is already invalid (streaming.chunks)".to_owned());
        }
        crate::streaming_turn::cancel(context)
    });
}

/// Reads one stream of `input` to its end and takes its result.
fn read_all(runtime: &Arc<Runtime>, input: &str) -> Outcome {
    let stream = match runtime.invoke_openai_stream(RunRequest::new(input.to_owned())) {
        Ok(stream) => stream,
        Err(error) => {
            return Outcome::Failed(
                "the streaming invocation was refused".to_owned(),
                json!({"request": {"input": input}, "error": ErrorInfo::from(error)}),
            );
        }
    };
    let mut chunks = 0_usize;
    loop {
        match stream.next(Some(CHUNK_WAIT)) {
            Ok(StreamNext::Item(_)) => chunks += 1,
            Ok(StreamNext::End) => break,
            Ok(StreamNext::Timeout) => {
                stream.close();
                return Outcome::Failed(
                    format!("no chunk within {} s", CHUNK_WAIT.as_secs()),
                    json!({"request": {"input": input}, "chunks": chunks}),
                );
            }
            Err(error) => {
                return Outcome::Failed(
                    "the core refused the adapter's stream".to_owned(),
                    json!({"request": {"input": input}, "chunks": chunks, "error": ErrorInfo::from(error)}),
                );
            }
        }
    }
    match stream.result() {
        Ok(result) if result.status == RunStatus::Succeeded => {
            Outcome::Passed(format!("{chunks} chunks, then a separate succeeded result"))
        }
        Ok(result) => Outcome::Failed(
            "the streamed invocation did not succeed".to_owned(),
            json!({"request": {"input": input}, "chunks": chunks, "error": result.error}),
        ),
        Err(error) => Outcome::Failed(
            "the stream's result failed".to_owned(),
            json!({"request": {"input": input}, "chunks": chunks, "error": ErrorInfo::from(error)}),
        ),
    }
}

/// Closes a stream after its first chunk; the runtime must then answer a plain invocation.
fn early_close(runtime: &Arc<Runtime>) -> Outcome {
    match runtime.invoke_openai_stream(RunRequest::new(LONG_INPUT.to_owned())) {
        Ok(stream) => {
            let _ = stream.next(Some(CHUNK_WAIT));
            stream.close();
        }
        Err(error) => {
            return Outcome::Failed(
                "the streaming invocation was refused".to_owned(),
                json!({"error": ErrorInfo::from(error)}),
            );
        }
    }
    match runtime.invoke(RunRequest::new("after an early close".to_owned())) {
        Ok(result) if result.status == RunStatus::Succeeded => Outcome::Passed(
            "after the consumer closed a stream early the runtime still answers".to_owned(),
        ),
        Ok(result) => Outcome::Failed(
            "the invocation after an early close did not succeed".to_owned(),
            json!({"error": result.error}),
        ),
        Err(error) => Outcome::Failed(
            "the invocation after an early close failed".to_owned(),
            json!({"error": ErrorInfo::from(error)}),
        ),
    }
}
