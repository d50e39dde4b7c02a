//! `--capture-model-calls` with its budgets (`--max-model-calls`, `--max-total-tokens`):
//! the flags `fabric run` and `fabric batch` share, and the runtime options they set.

use fabric_config::{ErrorInfo, Stage, codes};
use fabric_host::RunOptions;

/// The model-call capture flags.
#[derive(Debug, Clone, clap::Args)]
pub struct CaptureArgs {
    /// Put the model-call gateway between the harness and its models: every call is
    /// forwarded unchanged and recorded in the invocation's `model-calls.jsonl`
    /// (`RunResult.model_calls`).
    #[arg(long)]
    pub capture_model_calls: bool,
    /// With --capture-model-calls: model calls forwarded per invocation; later ones are
    /// answered 429 and the result carries a `budget_exceeded` event.
    #[arg(long, value_name = "COUNT", allow_hyphen_values = true, value_parser = crate::flags::budget)]
    pub max_model_calls: Option<crate::flags::Count>,
    /// With --capture-model-calls: total tokens (as reported) per invocation; once reached,
    /// calls are answered 429.
    #[arg(long, value_name = "COUNT", allow_hyphen_values = true, value_parser = crate::flags::budget)]
    pub max_total_tokens: Option<crate::flags::Count>,
}

impl CaptureArgs {
    /// Sets `options`' capture from the flags; a budget without `--capture-model-calls` is
    /// `invalid_value` naming the flag.
    pub fn apply(&self, options: &mut RunOptions) -> Result<(), ErrorInfo> {
        let budget = [
            ("--max-model-calls", self.max_model_calls.is_some()),
            ("--max-total-tokens", self.max_total_tokens.is_some()),
        ]
        .into_iter()
        .find(|(_, set)| *set);
        if let (Some((flag, _)), false) = (budget, self.capture_model_calls) {
            return Err(ErrorInfo::new(
                Stage::Config,
                codes::INVALID_VALUE,
                format!("`{flag}` needs `--capture-model-calls`: budgets apply to captured calls"),
            )
            .with_metadata("path", flag));
        }
        if self.capture_model_calls {
            options.runtime.capture = Some(fabric_host::CaptureOptions {
                max_model_calls: self.max_model_calls.map(|n| n.0),
                max_total_tokens: self.max_total_tokens.map(|n| n.0),
                ..fabric_host::CaptureOptions::default()
            });
        }
        Ok(())
    }
}
