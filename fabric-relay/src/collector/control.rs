//! The control endpoints' answers (`POST /v1/register`, `DELETE
//! /v1/deregister-request/{id}`), with upstream's checks in upstream's order and its
//! status codes and `detail` texts. Pure over the routing state.

use fabric_config::codes;
use serde_json::Value;

use super::http::{Answer, query};
use super::hub::{Hub, RegisterError};

const PI_TURN_WINDOW: &str = "pi_turn_window";

fn bad(detail: &str) -> Answer {
    Answer::detail(400, detail)
}

/// A `registration_token` query parameter that is present but malformed (400).
pub(crate) fn check_registration_token(pairs: &[(String, String)]) -> Option<Answer> {
    let token = query(pairs, "registration_token")?;
    (token.is_empty() || token.len() > 128 || !token.is_ascii())
        .then(|| bad("registration_token must be a non-empty ASCII string up to 128 characters"))
}

/// `DELETE /v1/deregister-request/{id}`: the answer, and whether a queue changed.
pub(crate) fn deregister(
    hub: &Hub,
    pairs: &[(String, String)],
    request_id: &str,
) -> (Answer, bool) {
    let remove_queue = match query(pairs, "remove_queue").map(str::to_ascii_lowercase) {
        None => false,
        Some(value) if value == "1" || value == "true" => true,
        Some(value) if value == "0" || value == "false" => false,
        Some(_) => return (bad("remove_queue must be a boolean"), false),
    };
    let boundary = query(pairs, "pi_boundary");
    if boundary.is_some_and(|b| !["preserve", "quarantine", "release", "wait"].contains(&b)) {
        let detail = "pi_boundary must be preserve, quarantine, release, or wait";
        return (bad(detail), false);
    }
    if let Some(count) = query(pairs, "pi_turn_count") {
        if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
            return (bad("pi_turn_count must be a nonnegative integer"), false);
        }
        if boundary != Some("wait") {
            return (bad("pi_turn_count requires pi_boundary=wait"), false);
        }
    }
    if let Some(answer) = check_registration_token(pairs) {
        return (answer, false);
    }
    if query(pairs, "registration_token").is_some() {
        // No registration carries a token (Pi mode only): nothing to do, as upstream.
        return (Answer::empty(204), false);
    }
    let mut routes = hub.lock();
    if boundary.is_some() && routes.is_registered(request_id) {
        let detail = "Pi boundary actions require the Pi correlation mode";
        return (Answer::detail(409, detail), false);
    }
    routes.deregister(request_id, remove_queue);
    drop(routes);
    hub.notify();
    (Answer::empty(204), true)
}

/// `POST /v1/register`.
pub(crate) fn register(hub: &Hub, body: &[u8]) -> Answer {
    let Ok(Value::Object(payload)) = serde_json::from_slice::<Value>(body) else {
        return bad("Request body must be a JSON object");
    };
    let Some(request_id) = payload
        .get("request_id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
    else {
        return bad("request_id must be a non-empty string");
    };
    let mode = payload.get("correlation_mode").filter(|v| !v.is_null());
    if mode.is_some_and(|m| m.as_str() != Some(PI_TURN_WINDOW)) {
        return bad("correlation_mode is not supported");
    }
    let pi_mode = mode.is_some();
    let capture = match payload.get("capture_records") {
        None => true,
        Some(Value::Bool(capture)) => *capture,
        Some(_) => return bad("capture_records must be a boolean"),
    };
    if !capture && !pi_mode {
        return bad("capture_records=false requires the Pi correlation mode");
    }
    match payload.get("registration_token") {
        None | Some(Value::Null) => {}
        Some(Value::String(token))
            if !token.is_empty() && token.chars().count() <= 128 && token.is_ascii() =>
        {
            if !pi_mode {
                return bad("registration_token requires the Pi correlation mode");
            }
        }
        Some(_) => {
            return bad("registration_token must be a non-empty ASCII string up to 128 characters");
        }
    }
    let mut routes = hub.lock();
    if routes.is_registered(request_id) {
        let error = RegisterError::Duplicate(request_id.to_owned());
        return Answer::detail(409, &error.detail());
    }
    if pi_mode {
        // The Pi turn window needs upstream's standalone (one-request) collector.
        return Answer::detail(409, "correlation modes require a standalone collector");
    }
    match routes.register(request_id) {
        Ok(()) => {}
        Err(error @ RegisterError::Full(_)) => {
            return Answer::code(503, &error.detail(), codes::COLLECTOR_REGISTRATIONS_FULL);
        }
        Err(error) => return Answer::detail(409, &error.detail()),
    }
    Answer::json(
        201,
        &serde_json::json!({"request_id": request_id, "status": "ready"}),
    )
}
