//! `join_model_call_observations`: resolve the model-call references of a bundle against
//! the calls a model server captured, without guessing ownership (`docs/gym.md`).
//!
//! A captured call is owned by the invocation whose reference resolves to exactly that
//! call, first come first served in record order; a call whose `client_session_id` names
//! an invocation that did not reference it is added to that invocation first. A reference
//! that resolves to no call, to several calls, or to a call another invocation owns is
//! kept as reported, with a gap. Compactions only cite calls their invocation owns. A
//! captured call left without an owner is a `model_call_ownership_unavailable` gap. Nothing
//! is matched by content or timing.

use std::collections::{HashMap, HashSet};

use fabric_config::codes;
use fabric_config::gym::{
    AgentObservationBundle, AgentObservationRecord, GymError, GymJoinModelCallsRequest,
    ModelCallKeys, ModelCallRef, ModelServerRef, ObservationGap,
};

/// Gap codes the join emits (registered as reason codes). A joined bundle replaces the
/// join gaps of its input (so a join can run again on its own output).
pub const JOIN_GAP_CODES: &[&str] = &[
    codes::MODEL_CALL_REFERENCE_AMBIGUOUS,
    codes::MODEL_CALL_REFERENCE_CONFLICT,
    codes::MODEL_CALL_REFERENCE_UNMATCHED,
    codes::MODEL_CALL_OWNERSHIP_UNAVAILABLE,
];

/// The prefix of the detail of a gap about a captured call without an owner.
const CAPTURE: &str = "capture:";

pub(super) fn nonblank(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|text| !text.is_empty())
}

/// The captured calls indexed by their two join keys.
struct Captured<'a> {
    calls: &'a [ModelCallKeys],
    by_call_id: HashMap<&'a str, Vec<usize>>,
    by_response: HashMap<(&'a ModelServerRef, &'a str), Vec<usize>>,
}

impl<'a> Captured<'a> {
    fn new(calls: &'a [ModelCallKeys]) -> Self {
        let mut by_call_id: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut by_response: HashMap<(&ModelServerRef, &str), Vec<usize>> = HashMap::new();
        for (index, call) in calls.iter().enumerate() {
            if let Some(id) = nonblank(&call.model_call_id) {
                by_call_id.entry(id).or_default().push(index);
            }
            if let (Some(model_ref), Some(response)) =
                (&call.model_ref, nonblank(&call.response_id))
            {
                by_response
                    .entry((model_ref, response))
                    .or_default()
                    .push(index);
            }
        }
        Captured {
            calls,
            by_call_id,
            by_response,
        }
    }

    /// The captured calls `reference` names: by `model_call_id` (narrowed by the other
    /// members it reports), else by `model_ref` and `response_id`.
    fn matches(&self, reference: &ModelCallRef) -> Vec<usize> {
        if let Some(id) = nonblank(&reference.model_call_id) {
            let candidates = self.by_call_id.get(id).map(Vec::as_slice).unwrap_or(&[]);
            return candidates
                .iter()
                .copied()
                .filter(|&index| {
                    let call = &self.calls[index];
                    reference
                        .model_ref
                        .as_ref()
                        .is_none_or(|r| Some(r) == call.model_ref.as_ref())
                        && reference
                            .response_id
                            .as_ref()
                            .is_none_or(|r| Some(r) == call.response_id.as_ref())
                })
                .collect();
        }
        match (&reference.model_ref, nonblank(&reference.response_id)) {
            (Some(model_ref), Some(response)) => self
                .by_response
                .get(&(model_ref, response))
                .cloned()
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// The reference that names exactly `index`, with every identifier the capture has.
    fn canonical(&self, index: usize) -> ModelCallRef {
        canonical(&self.calls[index])
    }

    /// The one captured call `reference` names; else the reference's unmatched or ambiguous
    /// gap (of `invocation`, its detail under `field`) is pushed and `None` returned.
    fn single(
        &self,
        reference: &ModelCallRef,
        invocation: &str,
        field: Option<&str>,
        gaps: &mut Vec<ObservationGap>,
    ) -> Option<usize> {
        let candidates = self.matches(reference);
        if let [index] = candidates[..] {
            return Some(index);
        }
        let code = if candidates.is_empty() {
            codes::MODEL_CALL_REFERENCE_UNMATCHED
        } else {
            codes::MODEL_CALL_REFERENCE_AMBIGUOUS
        };
        gaps.push(gap(
            code,
            invocation,
            detail(field, reference_name(reference)),
        ));
        None
    }

    /// The detail naming call `index` in a gap.
    fn name(&self, index: usize) -> Option<String> {
        let call = &self.calls[index];
        nonblank(&call.model_call_id)
            .or(nonblank(&call.response_id))
            .map(str::to_owned)
    }
}

/// Whether `reference` (of the invocation named by the call's session) already reports
/// `call`: the same `model_call_id` with no other member contradicting it, or no
/// `model_call_id` and the same `model_ref` and `response_id`.
fn reports(reference: &ModelCallRef, call: &ModelCallKeys, call_id: &str) -> bool {
    match &reference.model_call_id {
        Some(id) => {
            id == call_id
                && reference
                    .model_ref
                    .as_ref()
                    .is_none_or(|r| Some(r) == call.model_ref.as_ref())
                && reference
                    .response_id
                    .as_ref()
                    .is_none_or(|r| Some(r) == call.response_id.as_ref())
        }
        None => {
            reference.model_ref.is_some()
                && reference.model_ref == call.model_ref
                && call.response_id.is_some()
                && reference.response_id == call.response_id
        }
    }
}

/// The detail of a reference in a gap.
fn reference_name(reference: &ModelCallRef) -> Option<String> {
    nonblank(&reference.model_call_id)
        .or(nonblank(&reference.response_id))
        .map(str::to_owned)
}

/// Resolves the bundle's references against the captured calls (see the module docs).
/// Fails with a [`GymError`] when the bundle breaks Gym's identity rules.
pub fn join_model_call_observations(
    request: &GymJoinModelCallsRequest,
) -> Result<AgentObservationBundle, GymError> {
    resolve(&request.bundle, &request.calls).map(|(bundle, _)| bundle)
}

/// The joined bundle and the owner (an invocation id) of each owned captured call, by its
/// index in `calls`.
pub(super) fn resolve(
    bundle: &AgentObservationBundle,
    calls: &[ModelCallKeys],
) -> Result<(AgentObservationBundle, HashMap<usize, String>), GymError> {
    bundle
        .validate_identity()
        .map_err(|error| error.under("bundle"))?;
    let mut bundle = bundle.clone();
    let captured = Captured::new(calls);

    attach_session_calls(&mut bundle, calls);

    bundle.gaps.retain(|gap| {
        !(gap.code == codes::MODEL_CALL_REFERENCE_AMBIGUOUS
            || gap.code == codes::MODEL_CALL_REFERENCE_CONFLICT
            || gap.code == codes::MODEL_CALL_REFERENCE_UNMATCHED
            || (gap.code == codes::MODEL_CALL_OWNERSHIP_UNAVAILABLE
                && gap.invocation_id.is_none()
                && gap
                    .detail
                    .as_deref()
                    .is_some_and(|d| d.starts_with(CAPTURE))))
    });

    let mut owners: HashMap<usize, String> = HashMap::new();
    let mut gaps = Vec::new();
    for record in &mut bundle.records {
        let AgentObservationRecord::AgentInvocation(invocation) = record else {
            continue;
        };
        let id = invocation.invocation_id.clone();
        for reference in &mut invocation.model_calls {
            let Some(index) = captured.single(reference, &id, None, &mut gaps) else {
                continue;
            };
            if owners.contains_key(&index) {
                let detail = captured.name(index);
                gaps.push(gap(codes::MODEL_CALL_REFERENCE_CONFLICT, &id, detail));
                continue;
            }
            owners.insert(index, id.clone());
            *reference = captured.canonical(index);
        }
    }
    for record in &mut bundle.records {
        let AgentObservationRecord::ContextCompaction(compaction) = record else {
            continue;
        };
        let id = compaction.invocation_id.clone();
        let field = Some("model_calls");
        for reference in &mut compaction.model_calls {
            let Some(index) = captured.single(reference, &id, field, &mut gaps) else {
                continue;
            };
            let code = match owners.get(&index) {
                Some(owner) if *owner == id => {
                    *reference = captured.canonical(index);
                    continue;
                }
                Some(_) => codes::MODEL_CALL_REFERENCE_CONFLICT,
                None => codes::MODEL_CALL_OWNERSHIP_UNAVAILABLE,
            };
            gaps.push(gap(code, &id, detail(field, captured.name(index))));
        }
        for (field, slot) in [
            ("before_model_call", &mut compaction.before_model_call),
            ("after_model_call", &mut compaction.after_model_call),
        ] {
            let Some(reference) = slot else { continue };
            let Some(index) = captured.single(reference, &id, Some(field), &mut gaps) else {
                continue;
            };
            match owners.get(&index) {
                Some(owner) if *owner != id => {
                    let detail = detail(Some(field), captured.name(index));
                    gaps.push(gap(codes::MODEL_CALL_REFERENCE_CONFLICT, &id, detail));
                }
                _ => *reference = captured.canonical(index),
            }
        }
    }
    bundle.gaps.extend(gaps);
    for (index, call) in calls.iter().enumerate() {
        if !owners.contains_key(&index) {
            let name = captured.name(index).unwrap_or_else(|| "unknown".to_owned());
            bundle.gaps.push(ObservationGap::new(
                codes::MODEL_CALL_OWNERSHIP_UNAVAILABLE,
                None,
                Some(format!("{CAPTURE}{name}:call_index={}", call.call_index)),
            ));
        }
    }
    dedupe(&mut bundle.gaps);
    Ok((bundle, owners))
}

/// Drops repeated gaps (same code, invocation and detail), keeping the first.
pub(super) fn dedupe(gaps: &mut Vec<ObservationGap>) {
    let mut seen = HashSet::new();
    gaps.retain(|gap| {
        seen.insert((
            gap.code.clone(),
            gap.invocation_id.clone(),
            gap.detail.clone(),
        ))
    });
}

/// A gap's detail: the name, under `field` when there is one (a missing name is written
/// as Gym writes it, `None`).
fn detail(field: Option<&str>, name: Option<String>) -> Option<String> {
    match field {
        None => name,
        Some(field) => Some(format!("{field}:{}", name.as_deref().unwrap_or("None"))),
    }
}

/// A join gap of `invocation`.
fn gap(code: &str, invocation: &str, detail: Option<String>) -> ObservationGap {
    ObservationGap::new(code, Some(invocation), detail)
}

/// Adds to each invocation the captured calls that name it as their `client_session_id`
/// and carry a `model_call_id`, unless one of its references already reports the call.
fn attach_session_calls(bundle: &mut AgentObservationBundle, calls: &[ModelCallKeys]) {
    let mut positions: HashMap<String, usize> = HashMap::new();
    for (position, record) in bundle.records.iter().enumerate() {
        if let AgentObservationRecord::AgentInvocation(invocation) = record {
            positions.insert(invocation.invocation_id.clone(), position);
        }
    }
    for call in calls {
        let (Some(session), Some(call_id)) = (
            nonblank(&call.client_session_id),
            nonblank(&call.model_call_id),
        ) else {
            continue;
        };
        let Some(&position) = positions.get(session) else {
            continue;
        };
        let AgentObservationRecord::AgentInvocation(invocation) = &mut bundle.records[position]
        else {
            continue;
        };
        if invocation
            .model_calls
            .iter()
            .any(|reference| reports(reference, call, call_id))
        {
            continue;
        }
        invocation.model_calls.push(canonical(call));
    }
}

/// The reference naming `call` with every identifier the capture has.
pub(super) fn canonical(call: &ModelCallKeys) -> ModelCallRef {
    ModelCallRef {
        model_call_id: call.model_call_id.clone(),
        model_ref: call.model_ref.clone(),
        response_id: call.response_id.clone(),
    }
}
