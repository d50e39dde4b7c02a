//! `join_assistant_message_calls`: join the persisted assistant messages a producer declares
//! (a turn's `source_message_id`, a compaction's `source_message_ids`) to the HTTP attempts
//! a model server captured for them, by session, message and model-server ids
//! (`docs/gym.md`).
//!
//! Invocation ownership is resolved first ([`super::join_model_call_observations`]). A
//! captured call names its message with `client_assistant_message_id` and its invocation
//! with `client_session_id` (else its owner). A declaration joins the calls of its
//! invocation and message that its invocation owns and that the declared
//! `source_model_ref` served: a turn's `model_calls` become those attempts, a compaction
//! (summary attempts) gains them. Calls without a message (title generation) stay with
//! their invocation only. Two declarations of one message, a message without calls, a call
//! another invocation owns and a model-server mismatch are gaps, never a guess; nothing is
//! matched by content, timing or source labels.

use std::collections::HashMap;

use fabric_config::codes;
use fabric_config::gym::{
    AgentObservationRecord, GymError, GymJoinAssistantMessagesRequest, GymJoinedAssistantMessages,
    ModelCallKeys, ModelServerRef, ObservationGap,
};

use super::join::{JOIN_GAP_CODES, canonical, dedupe, nonblank, resolve};

/// Gap codes this join emits besides the ownership join's ([`JOIN_GAP_CODES`]); a joined
/// output replaces the gaps of both in its input, so a join can run again on its output.
pub const MESSAGE_GAP_CODES: &[&str] = &[
    codes::MESSAGE_MODEL_REF_MISMATCH,
    codes::ASSISTANT_MESSAGE_UNDECLARED,
];

/// Who declared a message: a trajectory turn or a bundle compaction (by index).
#[derive(Clone, Copy)]
enum Declarer {
    Turn(usize),
    Compaction(usize),
}

/// One declaration of a persisted message.
struct Declaration {
    declarer: Declarer,
    model_ref: Option<ModelServerRef>,
    /// The declaring field, for gap details.
    field: &'static str,
}

/// (invocation id, message id).
type MessageKey = (String, String);

fn is_join_gap(gap: &ObservationGap) -> bool {
    let code = gap.code.as_str();
    JOIN_GAP_CODES.contains(&code) || MESSAGE_GAP_CODES.contains(&code)
}

fn gap(code: &str, invocation: &str, detail: String) -> ObservationGap {
    ObservationGap::new(code, Some(invocation), Some(detail))
}

/// The name of a captured call in a gap's detail.
fn call_name(call: &ModelCallKeys) -> String {
    nonblank(&call.model_call_id)
        .or(nonblank(&call.response_id))
        .map_or_else(|| format!("call_index={}", call.call_index), str::to_owned)
}

/// Joins declared messages to their captured attempts (see the module docs). Fails with a
/// [`GymError`] when the bundle or the trajectory breaks Gym's identity rules.
pub fn join_assistant_message_calls(
    request: &GymJoinAssistantMessagesRequest,
) -> Result<GymJoinedAssistantMessages, GymError> {
    if let Some(trajectory) = &request.trajectory {
        trajectory
            .validate_identity()
            .map_err(|error| error.under("trajectory"))?;
    }
    let calls = &request.calls;
    let (mut bundle, owners) = resolve(&request.bundle, calls)?;
    bundle
        .gaps
        .retain(|gap| !MESSAGE_GAP_CODES.contains(&gap.code.as_str()));
    let mut trajectory = request.trajectory.clone();

    let mut order: Vec<MessageKey> = Vec::new();
    let mut declared: HashMap<MessageKey, Vec<Declaration>> = HashMap::new();
    let mut declare = |key: MessageKey, declaration: Declaration| {
        let slot = declared.entry(key.clone()).or_default();
        if slot.is_empty() {
            order.push(key);
        }
        slot.push(declaration);
    };
    for (index, record) in bundle.records.iter().enumerate() {
        let AgentObservationRecord::ContextCompaction(compaction) = record else {
            continue;
        };
        for message in compaction.source_message_ids.iter().flatten() {
            if message.is_empty() {
                continue;
            }
            let key = (compaction.invocation_id.clone(), message.clone());
            declare(
                key,
                Declaration {
                    declarer: Declarer::Compaction(index),
                    model_ref: compaction.source_model_ref.clone(),
                    field: "source_message_ids",
                },
            );
        }
    }
    for (index, turn) in trajectory.iter().flat_map(|t| t.turns.iter().enumerate()) {
        let Some(message) = nonblank(&turn.source_message_id) else {
            continue;
        };
        let key = (turn.invocation_id.clone(), message.to_owned());
        declare(
            key,
            Declaration {
                declarer: Declarer::Turn(index),
                model_ref: turn.source_model_ref.clone(),
                field: "source_message_id",
            },
        );
    }

    let mut attempts: HashMap<MessageKey, Vec<usize>> = HashMap::new();
    let mut attempt_order: Vec<MessageKey> = Vec::new();
    for (index, call) in calls.iter().enumerate() {
        let Some(message) = nonblank(&call.client_assistant_message_id) else {
            continue;
        };
        let session = nonblank(&call.client_session_id).or(owners.get(&index).map(String::as_str));
        let Some(session) = session else { continue };
        let key = (session.to_owned(), message.to_owned());
        let slot = attempts.entry(key.clone()).or_default();
        if slot.is_empty() {
            attempt_order.push(key);
        }
        slot.push(index);
    }

    let mut gaps = Vec::new();
    for key in &order {
        let (invocation, message) = key;
        let declarations = &declared[key];
        let first = &declarations[0];
        if declarations.len() > 1 {
            let detail = format!("{}:{message}", first.field);
            gaps.push(gap(
                codes::MODEL_CALL_REFERENCE_AMBIGUOUS,
                invocation,
                detail,
            ));
            continue;
        }
        let mut found: Vec<usize> = attempts.get(key).cloned().unwrap_or_default();
        if found.is_empty() {
            let detail = format!("{}:{message}", first.field);
            gaps.push(gap(
                codes::MODEL_CALL_REFERENCE_UNMATCHED,
                invocation,
                detail,
            ));
            continue;
        }
        found.sort_by_key(|&index| calls[index].call_index);
        let mut joined = Vec::new();
        for index in found {
            let call = &calls[index];
            let detail = format!("{}:{message}:{}", first.field, call_name(call));
            let code = match owners.get(&index) {
                Some(owner) if owner != invocation => codes::MODEL_CALL_REFERENCE_CONFLICT,
                None => codes::MODEL_CALL_OWNERSHIP_UNAVAILABLE,
                Some(_) if call.model_ref != first.model_ref => codes::MESSAGE_MODEL_REF_MISMATCH,
                Some(_) => {
                    joined.push(canonical(call));
                    continue;
                }
            };
            gaps.push(gap(code, invocation, detail));
        }
        if joined.is_empty() {
            continue;
        }
        match first.declarer {
            Declarer::Turn(index) => {
                if let Some(trajectory) = trajectory.as_mut() {
                    trajectory.turns[index].model_calls = joined;
                }
            }
            Declarer::Compaction(index) => {
                if let AgentObservationRecord::ContextCompaction(compaction) =
                    &mut bundle.records[index]
                {
                    for reference in joined {
                        if !compaction.model_calls.contains(&reference) {
                            compaction.model_calls.push(reference);
                        }
                    }
                }
            }
        }
    }
    if trajectory.is_some() {
        for key in attempt_order
            .iter()
            .filter(|key| !declared.contains_key(*key))
        {
            let (invocation, message) = key;
            let detail = format!("client_assistant_message_id:{message}");
            gaps.push(gap(codes::ASSISTANT_MESSAGE_UNDECLARED, invocation, detail));
        }
    }
    bundle.gaps.extend(gaps);
    dedupe(&mut bundle.gaps);

    if let Some(trajectory) = trajectory.as_mut() {
        for invocation in &mut trajectory.invocations {
            let joined = bundle.records.iter().find_map(|record| match record {
                AgentObservationRecord::AgentInvocation(joined)
                    if joined.invocation_id == invocation.invocation_id =>
                {
                    Some(joined)
                }
                _ => None,
            });
            if let Some(joined) = joined {
                invocation.clone_from(joined);
            }
        }
        trajectory.gaps.retain(|gap| !is_join_gap(gap));
        let join_gaps = bundle.gaps.iter().filter(|gap| is_join_gap(gap)).cloned();
        trajectory.gaps.extend(join_gaps);
    }
    Ok(GymJoinedAssistantMessages { bundle, trajectory })
}
