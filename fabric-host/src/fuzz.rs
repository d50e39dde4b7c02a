//! Fuzzing hooks (not API; `fuzz/` and `fabric-fuzz` call them): the lifecycle response
//! decoder as the reactor feeds it.

use std::path::Path;

use fabric_config::{ErrorInfo, Stage};
use serde_json::Value;

use crate::host::parse_response;
use crate::result;

/// Splits `data` into lines as the reactor does (`\n`, one trailing `\r` dropped) and
/// decodes each as the answer to `start`, `invoke` and `stop`; a succeeded `invoke` output
/// goes through the AgentRunResult checks, usage normalization and artifact validation,
/// and every error is turned into the ErrorInfo a caller would see.
pub fn lifecycle_response(data: &[u8]) {
    for line in data.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        for (operation, stage) in [
            ("start", Stage::Start),
            ("invoke", Stage::Invoke),
            ("stop", Stage::Stop),
        ] {
            match parse_response(line, operation, stage) {
                Ok(output) if stage == Stage::Invoke => invoke_output(output),
                Ok(_) => {}
                Err(error) => render(ErrorInfo::from(error)),
            }
        }
    }
}

fn invoke_output(output: Value) {
    let agent = match result::decode_agent_result(output) {
        Ok(agent) => agent,
        Err(error) => return render(ErrorInfo::from(error)),
    };
    if let Some(error) = agent.error {
        render(result::adapter_error(error));
    }
    if let Some(usage) = result::normalize_usage(agent.usage) {
        let _ = serde_json::to_string(&usage);
    }
    let root = Path::new("/nonexistent/fabric-fuzz-artifacts");
    let _ = result::artifact_refs(agent.artifacts.clone(), None);
    if let Ok(refs) = result::artifact_refs(agent.artifacts, Some(root)) {
        let _ = serde_json::to_string(&refs);
    }
}

/// Encodes an error as the C ABI would (a failure here is a bug: ErrorInfo always encodes).
fn render(info: ErrorInfo) {
    let encoded = serde_json::to_string(&info);
    assert!(encoded.is_ok(), "an ErrorInfo must encode");
}
