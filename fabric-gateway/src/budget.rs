//! Per-invocation budgets: which one a new call would exceed, and the 429 answer a harness
//! gets instead of a forwarded call. Pure code.

use serde_json::json;

/// A budget that refused a call: which one, its limit and the counts when it did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetExceeded {
    /// `max_model_calls` or `max_total_tokens`.
    pub budget: &'static str,
    /// The budget's limit.
    pub limit: u64,
    /// Calls forwarded in the invocation so far.
    pub calls: u64,
    /// Tokens reported in the invocation so far.
    pub total_tokens: u64,
}

/// Which budget a new call would exceed, given the counts so far.
pub(crate) fn exceeded(
    max_model_calls: Option<u64>,
    max_total_tokens: Option<u64>,
    calls: u64,
    total_tokens: u64,
) -> Option<BudgetExceeded> {
    let over = |budget, limit: Option<u64>, count: u64| {
        limit
            .filter(|limit| count >= *limit)
            .map(|limit| BudgetExceeded {
                budget,
                limit,
                calls,
                total_tokens,
            })
    };
    over("max_model_calls", max_model_calls, calls)
        .or_else(|| over("max_total_tokens", max_total_tokens, total_tokens))
}

/// The 429 answer: an Anthropic-shaped error body for the Messages API (`/messages`), an
/// OpenAI-shaped one otherwise.
pub(crate) fn refusal(path: &str, why: &BudgetExceeded) -> Vec<u8> {
    let message = format!(
        "model-call budget {} of {} reached (calls {}, total tokens {})",
        why.budget, why.limit, why.calls, why.total_tokens
    );
    let body = if path.trim_end_matches('/').ends_with("/messages") {
        json!({"type": "error", "error": {"type": "rate_limit_error", "message": message}})
    } else {
        json!({"error": {"message": message, "type": "budget_exceeded",
                         "param": null, "code": why.budget}})
    };
    crate::service::json_answer("429 Too Many Requests", &body.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_then_tokens_decide() {
        assert_eq!(exceeded(None, None, 10, 10), None);
        assert_eq!(exceeded(Some(2), None, 1, 0), None);
        let calls = exceeded(Some(1), Some(5), 1, 9).expect("over");
        assert_eq!((calls.budget, calls.limit), ("max_model_calls", 1));
        let tokens = exceeded(Some(3), Some(5), 1, 5).expect("over");
        assert_eq!(
            (tokens.budget, tokens.total_tokens),
            ("max_total_tokens", 5)
        );
    }

    #[test]
    fn refusals_are_shaped_by_api() {
        let why = exceeded(Some(0), None, 0, 0).expect("over");
        let anthropic = String::from_utf8(refusal("/v1/messages", &why)).expect("text");
        assert!(anthropic.starts_with("HTTP/1.1 429 "));
        assert!(anthropic.contains(r#""type":"rate_limit_error""#));
        let openai = String::from_utf8(refusal("/chat/completions", &why)).expect("text");
        assert!(openai.contains(r#""code":"max_model_calls""#));
    }
}
