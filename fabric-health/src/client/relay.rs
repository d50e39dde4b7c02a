//! A report another core produced for this check: the runtime server inside a provider
//! environment answers a check routed to it (`fabric-agent-ctl check`) with its own
//! `CheckReport`, which the caller's core validates and re-issues under its own clock.

use std::time::Instant;

use fabric_config::health::{CheckOutcome, CheckReport, CheckScope, reason};

use super::{Check, check_observations, summarize};
use crate::{clock, wire};

impl Check<'_> {
    /// Re-issues the report a runtime server returned for this request (or the reason it
    /// could not be had) under this check's clock: `started_at`, `finished_at` and
    /// `elapsed_ms` are this check's, the deadline and [`Check::still_current`] apply as
    /// in [`Check::run`], and the server's `activity` wins over this check's. A report
    /// that does not answer this request (another scope, target or level, observations
    /// out of order or malformed, a non-pass without a valid reason) is
    /// `unknown/invalid_response`; nothing that fails validation is ever `passed`.
    pub fn relayed(&self, answer: Result<CheckReport, &'static str>) -> CheckReport {
        let answer = answer.and_then(|inner| {
            let decided = self.decide(&inner)?;
            Ok((decided, inner.activity))
        });
        if Instant::now() > self.deadline {
            return self.report(CheckOutcome::Unknown, reason::PROBE_TIMEOUT);
        }
        if let Some(current) = self.still_current
            && !current()
        {
            return self.report(CheckOutcome::Unknown, reason::OBSERVATION_CHANGED);
        }
        match answer {
            Ok(((outcome, why, checks), activity)) => {
                let mut report = self.finish(outcome, why, checks);
                report.activity = activity.or(self.activity);
                report
            }
            Err(why) => self.report(CheckOutcome::Unknown, why),
        }
    }

    /// The outcome, reason and observations of a server's report, validated against this
    /// request.
    fn decide(&self, inner: &CheckReport) -> Result<super::Decided, &'static str> {
        let request = self.request;
        let level = (request.scope != CheckScope::Server).then_some(request.level);
        if inner.scope != request.scope
            || inner.target.runtime_id != request.runtime_id
            || inner.target.service_id != request.service_id
            || inner.level != level
        {
            return Err(reason::INVALID_RESPONSE);
        }
        if inner.checks.is_empty() {
            // A decision made before any probe (unavailable, unsupported, a timeout): it
            // never passes and always names its reason.
            return match &inner.reason {
                Some(why) if inner.outcome != CheckOutcome::Passed && wire::valid_reason(why) => {
                    Ok((inner.outcome, Some(why.clone()), Vec::new()))
                }
                _ => Err(reason::INVALID_RESPONSE),
            };
        }
        if request.scope == CheckScope::Server {
            // The server's own observation: exactly one, well-formed.
            let only = &inner.checks[0];
            let well_formed = inner.checks.len() == 1
                && wire::valid_source_id(&only.source_id)
                && only.reason.as_deref().is_none_or(wire::valid_reason)
                && clock::is_rfc3339_utc(&only.observed_at);
            if !well_formed {
                return Err(reason::INVALID_RESPONSE);
            }
        } else {
            check_observations(&inner.checks, request)?;
        }
        Ok(summarize(inner.checks.clone()))
    }
}
